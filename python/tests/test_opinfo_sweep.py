"""Thunder's OpInfo samples (thunder/tests/opinfos.py) with viewfuse as the executor, against
Thunder's torch executor, for the ops of issue 24 so far: the special functions added on
2026-12-05, sign (bool samples), amax (0-dim samples), binary and ternary elementwise ops whose
samples mix 0-dim CPU tensors with larger tensors, the gathers (take, take_along_axis, gather,
and F.embedding, whose samples with padding_idx or max_norm stay with torch by design), and the
scatters (index_add, scatter_add; bool samples stay with torch by design), cumsum, frexp and std. Every sample that the torch executor runs must
give the same values through viewfuse, which must not leave it to torch ("viewfuse left a region
... unfused"). The first SAMPLES samples of each op and dtype run (the CPU
suite in CI; CUDA where present)."""

import warnings

import pytest
import torch

thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed")
opinfos = pytest.importorskip("thunder.tests.opinfos", reason="this Thunder ships no OpInfos")
from thunder.core import dtypes  # noqa: E402
from viewfuse.thunder import viewfuse_ex  # noqa: E402

OPS = ["acosh", "asinh", "atanh", "lgamma", "digamma", "erfcinv", "ndtri", "sign", "amax", "add", "mul", "sub",
       "true_divide", "where", "take", "take_along_axis", "gather", "embedding", "argmax", "argmin", "nextafter",
       "zeta", "bitwise_left_shift", "bitwise_right_shift", "index_add", "scatter_add", "cumsum", "frexp", "std"]
DTYPES = [dtypes.float32, dtypes.bfloat16, dtypes.bool8, dtypes.int64]
# Ops whose bf16 result viewfuse rounds once, after summing in float32 (docs/design.md "Scatters"),
# where the torch executor rounds after each add: checked against the sum in float64 instead, as
# close as the torch executor's or within half a bf16 step of it.
ROUNDED_ONCE = {"index_add", "scatter_add"}
SAMPLES = 4


def cases():
    for name in OPS:
        op = opinfos.get_opinfo(name)
        for dtype in DTYPES:
            if dtype in op.dtypes():
                yield pytest.param(name, dtype, id=f"{name}-{dtype}")


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize(("name", "dtype"), list(cases()))
def test_opinfo_samples_match_the_torch_executor(name, dtype, device):
    op = opinfos.get_opinfo(name)
    ran = 0
    for sample in op.sample_inputs(device, dtype):
        if ran == SAMPLES:
            break
        try:
            want = thunder.jit(op.op, executors=[thunder.get_executor("torch")])(*sample.args, **sample.kwargs)
        except Exception:  # noqa: BLE001 - a sample the torch executor does not run is not a case
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = thunder.jit(op.op, executors=[viewfuse_ex])(*sample.args, **sample.kwargs)
        left = [str(w.message) for w in caught if "viewfuse left" in str(w.message)]
        assert not left, (sample, left)
        if name in ROUNDED_ONCE and dtype == dtypes.bfloat16:
            def wide(x):
                return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x

            exact = thunder.jit(op.op, executors=[thunder.get_executor("torch")])(
                *[wide(a) for a in sample.args], **{k: wide(v) for k, v in sample.kwargs.items()})
            assert got.dtype == want.dtype and got.shape == want.shape, (sample, got, want)
            err, torch_err = (got.double() - exact).abs(), (want.double() - exact).abs()
            assert (err <= torch.maximum(torch_err, exact.abs() * 2.0**-8)).all(), (sample, got, want, exact)
            ran += 1
            continue
        for g, w in zip(_flat(got), _flat(want), strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, (sample, g, w)
            torch.testing.assert_close(g, w, equal_nan=True, msg=lambda m: f"{sample}: {m}")
        ran += 1
    assert ran > 0, f"no sample of {name} ran"
