"""Shared fixtures: the devices the tests run on (CUDA when torch sees a GPU), input layouts, and
the leak check of many calls."""

import gc
import os
import zlib

import pytest
import torch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def make(shape, dtype, device, layout="contiguous", low=-3.0, high=3.0, gen=None):
    """A tensor of `shape` with the given layout: contiguous, transposed (non-contiguous storage
    order), expanded (a stride-0 dim), offset (a view into a larger buffer) or strided (a step).
    The values depend only on the shape, dtype and layout (a stable hash: Python's hash of strings
    changes from process to process), so every run and every pytest worker sees the same inputs."""
    gen = gen or torch.Generator().manual_seed(zlib.crc32(repr((tuple(shape), str(dtype), layout)).encode()))

    def values(s):
        if dtype == torch.bool:
            return torch.rand(s, generator=gen) > 0.5
        v = torch.rand(s, generator=gen, dtype=torch.float64) * (high - low) + low
        if not dtype.is_floating_point:
            v = v.round()
        return v.to(dtype)

    shape = list(shape)
    if layout == "contiguous" or len(shape) == 0:
        t = values(shape)
    elif layout == "transposed":
        t = values(shape[::-1]).permute(*reversed(range(len(shape))))
    elif layout == "expanded":
        small = shape.copy()
        small[0] = 1
        t = values(small).expand(*shape)
    elif layout == "offset":
        big = shape.copy()
        big[0] += 2
        t = values(big)[1:1 + shape[0]]
    elif layout == "strided":
        big = shape.copy()
        big[-1] *= 2
        t = values(big)[..., ::2]
    else:
        raise ValueError(layout)
    assert list(t.shape) == shape
    return t.to(device)


LAYOUTS = ["contiguous", "transposed", "expanded", "offset", "strided"]


def pytest_make_parametrize_id(config, val, argname):
    """Test ids name dtypes as torch does: float32, bfloat16."""
    return str(val).removeprefix("torch.") if isinstance(val, torch.dtype) else None


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def check_no_leak(call, device, check, calls=100_000):
    """Runs call() `calls` times after a warm-up, then check(its last result), and checks that RSS
    grew by less than 4 MiB, that the garbage collector tracks no more objects and, on CUDA, that
    torch's allocated memory is back where it was once the results are gone. The warm-up checks its
    result too: the first use of a torch op can load its CUDA kernels, which grows RSS by tens of
    MB (CUDA's lazy module loading), and that must not count."""
    for _ in range(2000):
        out = call()
    check(out)
    del out
    gc.collect()
    if device == "cuda":
        torch.cuda.synchronize()
    objects, rss = len(gc.get_objects()), rss_bytes()
    cuda_bytes = torch.cuda.memory_allocated() if device == "cuda" else 0
    for _ in range(calls):
        out = call()
    check(out)
    del out
    gc.collect()
    assert len(gc.get_objects()) - objects < 100
    growth = rss_bytes() - rss
    assert growth < 4 << 20, f"RSS grew by {growth} bytes over {calls} calls"
    if device == "cuda":
        torch.cuda.synchronize()
        assert torch.cuda.memory_allocated() == cuda_bytes
