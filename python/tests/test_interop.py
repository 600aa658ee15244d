"""Interop: numpy and DLPack arguments, numbers, errors, caching per shape, explain, and memory."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

import viewfuse as vf
from conftest import check_no_leak, make

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEED = '''def computation(t_2):
  # t_2: "cuda:0 f32[2, 16, 8, 16]"
  t1 = torch.permute(t_2, [0, 2, 1, 3])  # t1: "cuda:0 f32[2, 8, 16, 16]"
    # t1 = ltorch.permute(t_2, [0, 2, 1, 3])  # t1: "cuda:0 f32[2, 8, 16, 16]"
  del t_2
  t3 = torch.reshape(t1, (2, 8, 256))  # t3: "cuda:0 f32[2, 8, 256]"
  return t3
'''


def seed_fd(**kwargs):
    with vf.FusionDefinition(**kwargs) as fd:
        x = fd.define_tensor(shape=[-1, 16, 8, 16], dtype=torch.float32)
        fd.add_output(fd.ops.reshape(fd.ops.transpose(x, (0, 2, 1, 3)), (-1, 8, 256)))
    return fd


def test_torch_in_torch_out_on_the_same_device(device):
    fd = seed_fd()
    x = make((2, 16, 8, 16), torch.float32, device, "offset")
    (out,) = fd.execute([x])
    assert isinstance(out, torch.Tensor) and out.device == x.device
    assert torch.equal(out, x.permute(0, 2, 1, 3).reshape(2, 8, 256))


def test_numpy_in_numpy_out():
    fd = seed_fd()
    a = np.random.default_rng(0).standard_normal((3, 16, 8, 16)).astype(np.float32)
    (out,) = fd.execute([a])
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert np.array_equal(out, a.transpose(0, 2, 1, 3).reshape(3, 8, 256))


class DLPackOnly:
    """A producer that speaks only the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_any_dlpack_producer_gives_numpy():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([3, 4], "int64")
        fd.add_output(fd.ops.mul(x, 3))
    (out,) = fd.execute([DLPackOnly(a)])
    assert isinstance(out, np.ndarray) and np.array_equal(out, a * 3)


def test_scalar_inputs_are_passed_per_call(device):
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([-1], torch.float32)
        s = fd.define_scalar(dtype=float)
        fd.add_output(fd.ops.add(fd.ops.mul(x, s), fd.define_scalar(1.5)))
    x = make((5,), torch.float32, device)
    # NVRTC contracts x * s + 1.5 into one fused multiply-add (one rounding, torch rounds twice):
    # the results agree to the last bit or so, and a stale scalar would be far off.
    for s in (2.0, -3.0):
        torch.testing.assert_close(fd.execute([x, s])[0], x * s + 1.5, rtol=1e-6, atol=1e-6)
    assert fd.cache_size == 1


def test_minus_one_sizes_compile_once_per_shape(device):
    fd = seed_fd()
    for batch in (1, 2, 3, 2, 1):
        x = make((batch, 16, 8, 16), torch.float32, device)
        assert torch.equal(fd.execute([x])[0], x.permute(0, 2, 1, 3).reshape(batch, 8, 256))
    assert fd.cache_size == 3
    fd.execute([make((2, 16, 8, 16), torch.float32, device, "transposed")])  # a new layout, same shape
    assert fd.cache_size == 3


def test_requires_grad_inputs_are_read_without_grad():
    fd = seed_fd()
    x = torch.randn(2, 16, 8, 16, requires_grad=True)
    (out,) = fd.execute([x])
    assert not out.requires_grad and torch.equal(out, x.detach().permute(0, 2, 1, 3).reshape(2, 8, 256))


def test_errors_carry_the_cpp_message():
    fd = seed_fd()
    with pytest.raises(vf.UserError, match=r"input 0 \(in0\) has shape \[2, 3\], expected \[\?, 16, 8, 16\]"):
        fd.execute([torch.zeros(2, 3)])
    with pytest.raises(vf.UserError, match=r"input .in0. expects f32\[2, 16, 8, 16\], got f64"):
        fd.execute([torch.zeros(2, 16, 8, 16, dtype=torch.float64)])
    with pytest.raises(vf.TraceError, match=r"<trace>:3:7: error: unsupported op 'prims.nope'"):
        vf.from_trace('def f(x):\n  # x: "cpu f32[2]"\n  t = prims.nope(x)\n  return t\n')
    with pytest.raises(vf.UserError, match="reshape"):
        with vf.FusionDefinition() as fd2:
            x = fd2.define_tensor([2, 3])
            fd2.add_output(fd2.ops.reshape(x, (4, 2)))
    assert issubclass(vf.TraceError, vf.UserError) and issubclass(vf.UserError, vf.Error)
    assert issubclass(vf.DeviceError, vf.Error) and issubclass(vf.InternalError, vf.Error)
    with pytest.raises(AttributeError, match="no op 'conv2d'"):
        fd2.ops.conv2d
    with pytest.raises(vf.UserError, match="expected a tensor"):
        fd.execute(["not a tensor"])


def test_from_trace_runs_the_seed(device):
    fd = vf.from_trace(SEED)
    x = make((2, 16, 8, 16), torch.float32, device, "transposed")
    (out,) = fd.execute([x])
    assert torch.equal(out, x.permute(0, 2, 1, 3).reshape(2, 8, 256))


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.stem)
def test_explain_matches_the_cli_schema(example):
    fd = vf.from_trace(example.read_text())
    desc = vf._viewfuse.describe_trace(example.read_text())
    dtypes = {"bool": torch.bool, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
              "float64": torch.float64, "int64": torch.int64, "int32": torch.int32}
    numbers = {"int": 1, "float": 1.0, "bool": True}
    inputs = [torch.zeros(shape, dtype=dtypes[dt]) if shape is not None else numbers[dt] for _, dt, shape in desc["inputs"]]
    plan = fd.explain(inputs)
    assert set(plan) >= {"bookend", "kernels", "allocated_bytes", "peak_bytes", "outputs", "segments", "view_ops"}
    assert {"name", "shape", "strides", "dtype", "alias_of"} <= set(plan["outputs"][0])
    cli = ROOT / "build" / "viewfuse"
    if cli.exists():  # the same plan as the command line's, for contiguous inputs
        want = json.loads(subprocess.run([cli, "explain", example, "--json"], capture_output=True, check=True).stdout)
        assert plan == want


def test_bookend_option_reaches_the_planner():
    x = torch.randn(2, 16, 8, 16)
    assert seed_fd().explain([x])["bookend"] is False
    assert seed_fd(bookend=True).explain([x])["bookend"] is True


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc (Linux)")
def test_no_leak_over_100000_calls(device):
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([-1, 16], torch.float32)
        y = fd.ops.transpose(x, (1, 0))
        fd.add_output(y)  # an alias of the input
        fd.add_output(fd.ops.mul(y, 2.0))  # a new buffer from torch's allocator
    a = make((64, 16), torch.float32, device)

    def check(outs):
        assert torch.equal(outs[1], a.t() * 2.0)

    check_no_leak(lambda: fd.execute([a]), device, check)


def test_output_memory_is_released_when_the_output_dies(device):
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([-1], torch.float32)
        fd.add_output(fd.ops.exp(x))
    a = make((1 << 16,), torch.float32, device)
    (out,) = fd.execute([a])
    storage = out.untyped_storage()
    assert storage.nbytes() == a.numel() * 4
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        del out, storage
        assert torch.cuda.memory_allocated() == before - (1 << 18)


def test_torch_int_dtype_is_int32_in_the_api_and_in_traces():
    # torch.int is int32 in PyTorch; the Python API and the trace reader share the core's dtype table.
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) * 1.5
    with vf.FusionDefinition() as fd:
        a = fd.define_tensor([2, 3], dtype=torch.float32)
        fd.add_output(fd.ops.convert_element_type(a, torch.int))
    (out,) = fd.execute([x])
    assert out.dtype == torch.int32 and torch.equal(out, x.to(torch.int))
    with vf.FusionDefinition() as fd:
        a = fd.define_tensor([2, 3], dtype=torch.int)
        fd.add_output(fd.ops.neg(a))
    (out,) = fd.execute([x.to(torch.int32)])
    assert out.dtype == torch.int32
    trace = 'def f(x):\n  # x: "cpu f32[2, 3]"\n  y = prims.convert_element_type(x, torch.int)\n  return y\n'
    (out,) = vf.from_trace(trace).execute([x])
    assert out.dtype == torch.int32 and torch.equal(out, x.to(torch.int))


def test_dtype_names_come_from_the_core_table():
    from viewfuse import _dtypes, _viewfuse

    table = _viewfuse.dtype_table()
    assert [long for long, _, _ in table["dtypes"]] == list(_dtypes.LONG_TO_SHORT)
    for alias, long in table["aliases"].items():
        assert _dtypes.long_name(alias) == long
        trace = f'def f(x):\n  # x: "cpu f32[2]"\n  y = prims.convert_element_type(x, torch.{alias})\n  return y\n'
        (_, dtype, _), = _viewfuse.describe_trace(trace)["outputs"]
        assert dtype == long
    for name, long in (("float32", "float32"), (torch.float32, "float32"), ("f32", "float32"), (torch.int, "int32"),
                       (torch.long, "int64"), (torch.half, "float16"), (np.dtype("int16"), "int16")):
        assert _dtypes.long_name(name) == long


def test_torch_spellings_come_from_the_trace_reader():
    from viewfuse import _viewfuse

    spellings = {name: (callee, outputs) for name, callee, outputs in _viewfuse.torch_spellings()}
    assert spellings["permute"] == ("torch.permute", 1) and "flatten" in spellings
    assert spellings["frexp"] == ("torch.frexp", 2)
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([2, 3])
        for name in spellings:
            assert hasattr(fd.ops, name), name
        fd.add_output(fd.ops.flatten(x))
    (out,) = fd.execute([torch.ones(2, 3)])
    assert out.shape == (6,)


def test_matmul_epilogues_option_folds_or_not(device):
    """A linear followed by a tanh gelu (float32, as Thunder writes them): by default one call computes
    both (explain lists matmul_gelu and no kernel); matmul_epilogues=False leaves the gelu to a kernel
    after the call. The values are torch's either way."""
    trace = (
        'def f(x, w, b):\n  # x: "cpu f32[16, 32]"\n  # w: "cpu f32[24, 32]"\n  # b: "cpu f32[24]"\n'
        "  h = ltorch.linear(x, w, b)\n  c = prims.mul(h, h)\n  c3 = prims.mul(c, h)\n  s = prims.mul(0.044715, c3)\n"
        "  i = prims.add(h, s)\n  u = prims.mul(0.7978845608028654, i)\n  t = prims.tanh(u)\n  o = prims.add(1.0, t)\n"
        "  hh = prims.mul(0.5, h)\n  g = prims.mul(hh, o)\n  return g\n")
    x, w, b = (torch.randn(*s, device=device) for s in ((16, 32), (24, 32), (24,)))
    want = torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b), approximate="tanh")
    for folds in (True, False):
        fd = vf.from_trace(trace, matmul_epilogues=folds)
        (got,) = fd.execute([x, w, b])
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        plan = fd.explain_text([x, w, b])
        assert ("matmul_gelu" in plan) == folds, plan
        assert ("0 kernel launch(es)" in plan) == folds, plan
