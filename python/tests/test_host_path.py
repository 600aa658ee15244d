"""The host path of a cached execute on torch tensors: viewfuse._torch_fast reads the inputs and makes
the outputs through PyTorch's C++ API, creating no Python object but the outputs (counted with an
allocator hook), with the same results, layouts, storage sharing, errors and memory behaviour as the
attribute path it replaces (the path taken without the module)."""

import contextlib
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

import viewfuse as vf
from conftest import LAYOUTS, check_no_leak, make
from viewfuse import _torch_path

FAST, WHY = vf.torch_fast_path()
needs_fast = pytest.mark.skipif(not FAST, reason=f"torch fast path not in use ({WHY})")


def built_for_this_torch() -> bool:
    try:
        from viewfuse._torch_fast_build import TORCH_VERSION
    except ImportError:
        return False
    return TORCH_VERSION == torch.__version__


@contextlib.contextmanager
def attribute_path():
    """Torch tensors read through their Python attributes, as without viewfuse._torch_fast."""
    previous = vf._viewfuse._set_torch_fast_path(False)
    try:
        yield
    finally:
        vf._viewfuse._set_torch_fast_path(previous)


def three_kinds_fd() -> vf.FusionDefinition:
    """An output of each kind (an alias of the input, a new buffer, a view of that buffer) and a
    number passed per call."""
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1, -1], torch.float32)
        s = fd.define_scalar(dtype=float)
        fd.add_output(fd.ops.transpose(x, (2, 0, 1)))
        y = fd.ops.add(fd.ops.mul(x, s), x)
        fd.add_output(y)
        fd.add_output(fd.ops.transpose(y, (1, 0, 2)))
    return fd


@pytest.mark.skipif(not built_for_this_torch(),
                    reason="viewfuse._torch_fast not built for this torch (VF_PYTHON_TORCH=OFF, or another version)")
def test_fast_path_is_used_when_built_for_this_torch():
    assert FAST, WHY
    assert "viewfuse._torch_fast" in sys.modules


def test_execute_is_the_runners_method():
    fd = three_kinds_fd()
    assert fd.execute.__self__ is fd._runner and fd.execute.__func__ is type(fd._runner).__dict__["run"]


CALLS = 2000


def allocations_per_call(fd, args) -> float:
    from viewfuse import _torch_fast

    fd.execute(args)  # compiles and plans for this layout
    return _torch_fast.count_object_allocations(fd.execute, args, CALLS) / CALLS


# What is counted: the blocks CPython's object allocator hands out (PYMEM_DOMAIN_OBJ: every Python
# object not taken from a free list, and parts of some, such as dict key tables; not a list's item
# array, which comes from PyMem_Malloc) during CALLS calls of fd.execute(args) on one
# argument list, each result dropped at once. The outputs' own objects are one torch.Tensor per
# output and the list that holds them, which CPython usually takes from its free list of lists:
# from n_out to n_out + 1 per call. The attribute path also creates each input's torch.Size,
# stride tuple and data_ptr int, and the objects of its torch.empty and torch.as_strided calls.
@needs_fast
@pytest.mark.parametrize("layout", ["contiguous", "offset", "expanded"])
def test_cached_execute_creates_no_python_object_beyond_the_outputs(device, layout):
    fd = three_kinds_fd()
    args = [make((3, 4, 6), torch.float32, device, layout), 2.0]
    per_call = allocations_per_call(fd, args)
    assert 3 <= per_call <= 3 + 1, f"{per_call} object allocations per call for 3 outputs"


@needs_fast
def test_attribute_path_creates_more_objects_than_the_outputs(device):
    # The same count on the path the fast one replaces: the check above fails there.
    fd = three_kinds_fd()
    args = [make((3, 4, 6), torch.float32, device), 2.0]
    with attribute_path():
        per_call = allocations_per_call(fd, args)
    assert per_call > 3 + 1, per_call


def every_kind_fd(shape) -> vf.FusionDefinition:
    """Aliases (a permute, a strided slice), a new buffer and a view of it, and a reduction."""
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor(shape, torch.float32)
        fd.add_output(fd.ops.transpose(x, (2, 0, 1)))
        fd.add_output(fd.ops.slice_prim(x, (1, 0, 1), (shape[0], shape[1], shape[2]), (1, 1, 2)))
        y = fd.ops.add(fd.ops.mul(x, 2.0), x)
        fd.add_output(y)
        fd.add_output(fd.ops.reshape(y, (shape[0] * shape[1] * shape[2],)))
        fd.add_output(fd.ops.amax(x, (2,)))
    return fd


def every_kind_torch(x):
    y = x * 2.0 + x
    return [x.permute(2, 0, 1), x[1:, :, 1::2], y, y.reshape(-1), x.amax(2)]


@needs_fast
@pytest.mark.parametrize("layout", LAYOUTS + ["empty"])
def test_fast_path_equals_torch_and_the_attribute_path(device, layout):
    if layout == "empty":
        x = torch.zeros(3, 0, 6, device=device)
    else:
        x = make((3, 4, 6), torch.float32, device, layout)
    fd = every_kind_fd(list(x.shape))
    fast = fd.execute([x])
    with attribute_path():
        slow = fd.execute([x])
    for i, (f, s, want) in enumerate(zip(fast, slow, every_kind_torch(x))):
        assert type(f) is torch.Tensor and f.device == x.device and f.dtype == want.dtype
        assert torch.equal(f, want) and torch.equal(f, s), f"output {i}"
        assert f.shape == s.shape and f.stride() == s.stride() and f.storage_offset() == s.storage_offset(), i
    for alias in fast[:2]:
        assert alias.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if x.numel():
        assert fast[2].untyped_storage().data_ptr() == fast[3].untyped_storage().data_ptr()


@needs_fast
def test_aliases_are_views_of_the_input(device):
    base = make((5, 4, 6), torch.float32, device)
    x = base[1:4]
    fd = three_kinds_fd()
    alias, y, _ = fd.execute([x, 2.0])
    assert alias._is_view() and alias._base is base  # as torch.as_strided(x, ...) gives
    assert alias.storage_offset() == x.permute(2, 0, 1).storage_offset()
    assert not y._is_view() and y._base is None and not y.requires_grad
    x.add_(1)  # seen through the shared storage
    assert torch.equal(alias, x.permute(2, 0, 1))
    g = torch.randn(3, 4, 6, device=device, requires_grad=True)
    alias, y, _ = fd.execute([g, 2.0])
    assert alias.requires_grad and not y.requires_grad  # a differentiable view, and a fresh buffer


class Traced(torch.Tensor):
    """A tensor subclass: read through its attributes, not by the fast path."""


@needs_fast
def test_errors_and_other_tensors_take_the_attribute_path():
    fd = three_kinds_fd()
    with pytest.raises(vf.UserError, match=r"unsupported tensor dtype torch.complex64"):
        fd.execute([torch.zeros(3, 4, 6, dtype=torch.complex64), 2.0])
    with pytest.raises(vf.UserError, match=r"tensors on meta are not supported"):
        fd.execute([torch.zeros(3, 4, 6, device="meta"), 2.0])
    with pytest.raises(vf.UserError, match=r"input .in0. expects f32\[3, 4, 6\], got f64"):
        fd.execute([torch.zeros(3, 4, 6, dtype=torch.float64), 2.0])
    with vf.FusionDefinition() as fd2:
        a, b = fd2.define_tensor([2, 3]), fd2.define_tensor([2, 3])
        fd2.add_output(fd2.ops.transpose(b, (1, 0)))
        fd2.add_output(fd2.ops.add(a, b))
    with pytest.raises(vf.UserError, match="aliases a non-torch input"):
        fd2.execute([torch.ones(2, 3), np.ones((2, 3), np.float32)])
    x = make((3, 4, 6), torch.float32, "cpu", "transposed")
    alias, y, z = fd.execute([x.as_subclass(Traced), 2.0])
    assert torch.equal(y, x * 3.0) and torch.equal(alias, x.permute(2, 0, 1))


@needs_fast
def test_runs_on_the_current_cuda_stream():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    fd = three_kinds_fd()
    x = make((64, 32, 16), torch.float32, "cuda")
    new = torch.randn_like(x)
    fd.execute([x, 2.0])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # delays the copy: a kernel on another stream would read old x
        x.copy_(new)
        _, y, _ = fd.execute([x, 2.0])
    side.synchronize()
    assert torch.equal(y, new * 3.0)


@needs_fast
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc (Linux)")
def test_no_leak_over_100000_fast_calls(device):
    # Aliases, buffers that become outputs, views of them, and temporaries (the two sums run in
    # kernels of their own before the one that writes the outputs).
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([4, 6], torch.float32)
        fd.add_output(fd.ops.transpose(x, (1, 0)))
        cols = fd.ops.broadcast_in_dim(fd.ops.sum(x, (0,)), (6, 4), (0,))
        y = fd.ops.sub(x, fd.ops.transpose(cols, (1, 0)))
        fd.add_output(y)
        fd.add_output(fd.ops.reshape(y, (24,)))
        fd.add_output(fd.ops.mul(fd.ops.broadcast_in_dim(fd.ops.sum(x, (1,)), (4, 6), (0,)), 2.0))
    a = make((4, 6), torch.float32, device)
    assert fd.explain([a])["allocated_bytes"] > 2 * 4 * 6 * 4  # temporaries besides the two buffers

    def check(outs):
        torch.testing.assert_close(outs[1], a - a.sum(0), rtol=1e-6, atol=1e-6)
        assert torch.equal(outs[2], outs[1].reshape(24)) and torch.equal(outs[0], a.t())

    check_no_leak(lambda: fd.execute([a]), device, check)


def test_another_torch_version_falls_back_with_a_warning(monkeypatch):
    monkeypatch.setitem(sys.modules, "viewfuse._torch_fast_build", types.SimpleNamespace(TORCH_VERSION="0.0.1"))
    with pytest.warns(RuntimeWarning, match=r"built against torch 0.0.1, but torch .* is installed"):
        api, reason = _torch_path.load()
    assert api is None and reason.startswith("attribute path")


def test_a_build_without_the_module_takes_the_attribute_path(monkeypatch):
    monkeypatch.setitem(sys.modules, "viewfuse._torch_fast_build", None)  # import raises ImportError
    api, reason = _torch_path.load()
    assert api is None and "was not built" in reason


def test_viewfuse_works_without_torch():
    # numpy in, numpy out in a process where `import torch` fails: the fast path is never loaded.
    code = """if True:
        import importlib.abc, sys

        class NoTorch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "torch":
                    raise ModuleNotFoundError("no torch in this process")

        sys.meta_path.insert(0, NoTorch())
        import numpy as np, viewfuse as vf
        with vf.FusionDefinition() as fd:
            x = fd.define_tensor([2, 3], "float32")
            fd.add_output(fd.ops.mul(fd.ops.transpose(x, (1, 0)), 2.0))
        (out,) = fd.execute([np.ones((2, 3), np.float32)])
        assert isinstance(out, np.ndarray) and (out == 2).all() and out.shape == (3, 2)
        assert "viewfuse._torch_fast" not in sys.modules and "torch" not in sys.modules
        print("ok")
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
