"""The view algebra against torch.Tensor.view on random layouts, and storage sharing of aliases."""

import random

import numpy as np
import pytest
import torch

import viewfuse as vf
from conftest import make


def random_layout(rng: random.Random) -> torch.Tensor:
    """A view of a fresh buffer: random sizes (zeros and ones included), then a random permute,
    slice with steps, or expand of a size-1 dim."""
    rank = rng.randint(0, 4)
    sizes = [rng.choice([0, 1, 1, 2, 2, 3, 4, 6]) if rng.random() < 0.9 else rng.randint(1, 5) for _ in range(rank)]
    if rng.random() < 0.7:
        sizes = [max(s, 1) for s in sizes]
    steps = [rng.choice([1, 1, 2]) for _ in range(rank)]
    base = torch.arange(float(max(1, int(np.prod([s * st + 1 for s, st in zip(sizes, steps)]))))).contiguous()
    t = base[: int(np.prod([s * st + 1 for s, st in zip(sizes, steps)])) if rank else 1]
    t = t.reshape([s * st + 1 for s, st in zip(sizes, steps)]) if rank else t.reshape(())
    t = t[tuple(slice(1, 1 + s * st, st) for s, st in zip(sizes, steps))]
    if rank:
        t = t.permute(*rng.sample(range(rank), rank))
        for d in range(rank):
            if t.shape[d] == 1 and rng.random() < 0.3:
                shape = list(t.shape)
                shape[d] = rng.choice([2, 3])
                t = t.expand(*shape)
    return t


def random_target(rng: random.Random, numel: int) -> list[int]:
    """A shape with `numel` elements (size-1 dims sprinkled in, zeros when empty)."""
    if numel == 0:
        shape = [rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 4))]
        shape[rng.randrange(len(shape))] = 0
        return shape
    shape, rest = [], numel
    for p in range(2, numel + 1):
        while rest % p == 0:
            shape.append(p)
            rest //= p
    rng.shuffle(shape)
    merged = []
    for s in shape:
        if merged and rng.random() < 0.4:
            merged[-1] *= s
        else:
            merged.append(s)
    for _ in range(rng.randint(0, 2)):
        merged.insert(rng.randint(0, len(merged)), 1)
    return merged


def reshape_fd(rank: int, shape: list[int]) -> vf.FusionDefinition:
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([-1] * rank, torch.float32)
        fd.add_output(fd.ops.reshape(x, tuple(shape)))
    return fd


@pytest.mark.parametrize("seed", range(300))
def test_reshape_aliases_exactly_when_torch_view_succeeds(seed):
    rng = random.Random(seed)
    x = random_layout(rng)
    shape = random_target(rng, x.numel())
    try:
        want = x.view(shape)
    except RuntimeError:
        want = None
    fd = reshape_fd(x.dim(), shape)
    plan = fd.explain([x])
    (out,) = fd.execute([x])
    assert torch.equal(out, x.reshape(shape))
    aliased = plan["outputs"][0]["alias_of"] is not None
    assert aliased == (want is not None), f"{x.shape} {x.stride()} -> {shape}: torch view {'ok' if want is not None else 'fails'}"
    if want is not None:
        if shape == list(x.shape):
            # A reshape to the same shape keeps the input's layout; torch's view recomputes the
            # strides of size-1 dims, which address nothing. Compared where they matter.
            keep = [d for d, s in enumerate(shape) if s != 1]
            assert [out.stride(d) for d in keep] == [want.stride(d) for d in keep]
        else:
            assert out.stride() == want.stride(), f"{x.shape} {x.stride()} -> {shape}"
        assert out.data_ptr() == want.data_ptr()
        assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_alias_outputs_share_input_storage(device):
    base = make((4, 16, 8, 16), torch.float32, device)
    x = base[1:3]  # an offset view
    with vf.FusionDefinition() as fd:
        t = fd.define_tensor([-1, 16, 8, 16], torch.float32)
        y = fd.ops.transpose(t, (0, 2, 1, 3))
        fd.add_output(y)
        fd.add_output(fd.ops.slice_prim(t, (0, 2, 0, 0), (2, 16, 8, 16), (1, 2, 1, 1)))
        fd.add_output(fd.ops.reshape(y, (2, 8, 256)))
    y, s, z = fd.execute([x])
    for out, want in ((y, x.permute(0, 2, 1, 3)), (s, x[:, 2::2])):
        assert out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert out.stride() == want.stride() and out.storage_offset() == want.storage_offset()
        assert torch.equal(out, want)
    assert z.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()  # the reshape copies
    x.add_(1)  # writes through the shared storage are seen by the aliases
    assert torch.equal(y, x.permute(0, 2, 1, 3))


def test_outputs_related_by_views_share_one_buffer(device):
    with vf.FusionDefinition() as fd:
        t = fd.define_tensor([2, 16, 8, 16], torch.float32)
        y = fd.ops.mul(t, 2.0)
        fd.add_output(y)
        fd.add_output(fd.ops.reshape(fd.ops.transpose(y, (0, 2, 1, 3)), (2, 8, 256)))
    x = make((2, 16, 8, 16), torch.float32, device)
    y, z = fd.execute([x])
    assert torch.equal(y, x * 2) and torch.equal(z, (x * 2).permute(0, 2, 1, 3).reshape(2, 8, 256))
    assert y.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()


def test_numpy_alias_shares_memory():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, 1:]
    with vf.FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1], "float32")
        fd.add_output(fd.ops.transpose(t, (2, 0, 1)))
    (out,) = fd.execute([a])
    assert isinstance(out, np.ndarray) and np.shares_memory(out, a)
    assert np.array_equal(out, a.transpose(2, 0, 1)) and out.strides == a.transpose(2, 0, 1).strides
