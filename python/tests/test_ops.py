"""Per-op consistency against PyTorch: every prim viewfuse supports, its dtypes, many layouts."""

import math

import pytest
import torch

import viewfuse as vf
from conftest import LAYOUTS, make

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64, torch.int8, torch.uint8, torch.int16]
SHAPES = [(4, 6), (2, 3, 5), (0, 3)]



def run1(op, inputs, *attrs, **kwargs):
    """fd.ops.<op>(tensors..., *attrs) on the inputs (sizes -1), one output."""
    with vf.FusionDefinition() as fd:
        ts = [fd.define_tensor([-1] * x.dim(), dtype=x.dtype) if isinstance(x, torch.Tensor) else x for x in inputs]
        out = getattr(fd.ops, op)(*ts, *attrs, **kwargs)
        for o in out if isinstance(out, tuple) else (out,):
            fd.add_output(o)
    res = fd.execute([x for x in inputs if isinstance(x, torch.Tensor)])
    return res if isinstance(out, tuple) else res[0]


def check(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape and got.device == want.device
    if dtype in (torch.float16, torch.bfloat16):
        torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2, equal_nan=True)
    elif dtype == torch.float32:
        torch.testing.assert_close(got, want, rtol=2e-5, atol=1e-5, equal_nan=True)
    elif dtype == torch.float64:
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)
    else:
        assert torch.equal(got, want)


UNARY_FLOAT = {
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log, "log1p": torch.log1p,
    "log2": torch.log2, "log10": torch.log10, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh,
    "sinh": torch.sinh, "cosh": torch.cosh, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan,
    "erf": torch.erf, "erfc": torch.erfc, "erfinv": torch.erfinv, "floor": torch.floor, "ceil": torch.ceil,
    "round": torch.round, "trunc": torch.trunc, "isfinite": torch.isfinite, "signbit": torch.signbit,
}
UNARY_ANY = {"abs": torch.abs, "neg": torch.neg, "sign": torch.sign}
# The special functions, each with its domain (low, high) and torch's function (erfcinv: through
# erfinv in float64, away from the tail where 1 - c loses digits).
SPECIAL = {
    "acosh": ((1.0, 5.0), torch.acosh), "asinh": ((-4.0, 4.0), torch.asinh), "atanh": ((-0.99, 0.99), torch.atanh),
    "lgamma": ((-4.0, 6.0), torch.lgamma), "digamma": ((-4.0, 6.0), torch.digamma),
    "erfcinv": ((0.01, 1.99), lambda c: torch.erfinv(1 - c.double()).to(c.dtype)),
    "ndtri": ((0.001, 0.999), torch.special.ndtri),
}


def run_many(ops, inputs):
    """One fusion computing every op of `ops` ({name: (prim, args)}) on the inputs: one compile per
    dtype and layout instead of one per op. Returns {name: output}."""
    with vf.FusionDefinition() as fd:
        ts = [fd.define_tensor([-1] * x.dim(), dtype=x.dtype) for x in inputs]
        for prim, args in ops.values():
            fd.add_output(getattr(fd.ops, prim)(*[ts[a] if isinstance(a, int) else a[0] for a in args]))
    return dict(zip(ops, fd.execute(inputs)))


def check_each(got: dict, want: dict, dtype):
    for name in want:
        try:
            check(got[name], want[name], dtype)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float_ops_match_torch(dtype, layout, device):
    x = make((4, 6), dtype, device, layout, -4.0, 4.0)
    u = make((4, 6), dtype, device, layout, -0.99, 0.99)  # inside the domain of asin, acos, erfinv
    ops = {op: (op, (1 if op in ("asin", "acos", "erfinv") else 0,)) for op in UNARY_FLOAT}
    got = run_many(ops, [x, u])
    check_each(got, {op: fn(u if op in ("asin", "acos", "erfinv") else x) for op, fn in UNARY_FLOAT.items()}, dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS[:2] + INTS)
def test_unary_any_ops_match_torch(dtype, layout, device):
    x = make((3, 5), dtype, device, layout, -5, 5 if dtype != torch.uint8 else 9)
    ops = {op: (op, (0,)) for op in UNARY_ANY}
    want = {op: fn(x) for op, fn in UNARY_ANY.items()}
    if not dtype.is_floating_point:
        ops["bitwise_not"] = ("bitwise_not", (0,))
        want["bitwise_not"] = torch.bitwise_not(x)
    check_each(run_many(ops, [x]), want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_float_ops_match_torch(dtype, device):
    inputs = [make((4, 6), dtype, device, "transposed", *domain) for domain, _ in SPECIAL.values()]
    got = run_many({op: (op, (i,)) for i, op in enumerate(SPECIAL)}, inputs)
    # torch has no float16 lgamma or digamma on the CPU: float32 rounded for the half types
    wide = (lambda x: x.float()) if dtype in (torch.float16, torch.bfloat16) else (lambda x: x)
    want = {op: fn(wide(x)).to(dtype) for (op, (_, fn)), x in zip(SPECIAL.items(), inputs)}
    check_each(got, want, dtype)


def test_sign_of_bool_matches_torch(device):
    x = make((3, 5), torch.bool, device, "transposed")
    check(run1("sign", [x]), torch.sign(x), torch.bool)


def test_bitwise_not_of_bool_matches_torch(device):
    x = make((3, 5), torch.bool, device, "transposed")
    check(run1("bitwise_not", [x]), torch.bitwise_not(x), torch.bool)


def _div(a, b):
    return torch.div(a, b) if a.dtype.is_floating_point else torch.div(a, b, rounding_mode="trunc")


BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": _div, "maximum": torch.maximum,
    "minimum": torch.minimum, "fmod": torch.fmod, "remainder": torch.remainder, "eq": torch.eq, "ne": torch.ne,
    "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
}
BINARY_FLOAT = {"pow": torch.pow, "atan2": torch.atan2}
BITWISE = {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded", "offset", "strided"])
@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_binary_ops_match_torch(dtype, layout, device):
    a = make((4, 6), dtype, device, layout, -5, 5)
    b = make((4, 6), dtype, device, "transposed", 1, 4)  # no zero divisors: torch raises for integers
    if dtype == torch.bool:
        table = {**BITWISE, **{k: BINARY[k] for k in ("eq", "ne")}}
    elif dtype.is_floating_point:
        table = {**BINARY, **BINARY_FLOAT}
    else:  # integer pow with negative exponents differs from torch by design (ir.h); compared on floats
        table = {**BINARY, **BITWISE}
    want = {op: fn(a.abs() if op == "pow" else a, b) for op, fn in table.items()}
    ops = {op: (op, (2 if op == "pow" else 0, 1)) for op in table}
    check_each(run_many(ops, [a, b, a if dtype == torch.bool else a.abs()]), want, dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_match_torch(dtype, device):
    """bitwise_left_shift and bitwise_right_shift as torch's, amounts below 0 and of the width and
    more among them (0 to the left, the sign to the right)."""
    width = torch.iinfo(dtype).bits
    a = make((6, 7), dtype, device, "transposed", -100, 100)
    b = torch.arange(-3, width + 3, device=device).repeat(7)[:42].reshape(6, 7).to(dtype)
    with vf.FusionDefinition() as fd:
        x, y = fd.define_tensor([-1, -1], dtype=dtype), fd.define_tensor([-1, -1], dtype=dtype)
        fd.add_output(fd.ops.bitwise_left_shift(x, y))
        fd.add_output(fd.ops.bitwise_right_shift(x, y))
    left, right = fd.execute([a, b])
    check(left, torch.bitwise_left_shift(a, b), dtype)
    check(right, torch.bitwise_right_shift(a, b), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nextafter_and_zeta_match_torch(dtype, device):
    """nextafter (exact) and the Hurwitz zeta (q negative, integer and not, among the points)."""
    a = make((4, 6), dtype, device, "transposed", -2, 2)
    b = make((4, 6), dtype, device, "contiguous", -2, 2)
    check(run1("nextafter", [a, b]), torch.nextafter(a, b), dtype)
    x = make((4, 6), dtype, device, "contiguous", 1.05, 6)
    q = make((4, 6), dtype, device, "offset", -2.5, 4)
    q.view(-1)[::5] = -2.0
    check(run1("zeta", [x, q]), torch.special.zeta(x, q), dtype)


def test_uniform_philox_is_in_range_and_repeats(device):
    """uniform_philox of run-time seed and offset: values in [minval, maxval), the same for the same
    numbers, other values for another offset (the generator itself: test_thunder.py)."""
    with vf.FusionDefinition() as fd:
        seed, offset = fd.define_scalar(dtype=int), fd.define_scalar(dtype=int)
        x = fd.define_tensor([-1, -1], dtype=torch.float32)
        u = fd.ops.uniform_philox((64, 96), -1.0, 3.0, dtype=torch.float32, seed=seed, offset=offset)
        fd.add_output(fd.ops.add(x, u))
    zero = torch.zeros(64, 96, device=device)
    a, = fd.execute([3, 7, zero])
    again, = fd.execute([3, 7, zero])
    other, = fd.execute([3, 8, zero])
    assert a.min() >= -1 and a.max() < 3 and abs(a.mean().item() - 1) < 0.05
    assert torch.equal(a, again) and not torch.equal(a, other)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_binary_with_number_matches_torch(dtype, device):
    a = make((5, 3), dtype, device, "transposed")
    check(run1("mul", [a, 3]), a * 3, dtype)
    check(run1("add", [2, a]), 2 + a, dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_where_matches_torch(dtype, layout, device):
    p = make((4, 6), torch.bool, device, layout)
    a, b = make((4, 6), dtype, device, "transposed"), make((4, 6), dtype, device, "offset")
    check(run1("where", [p, a, b]), torch.where(p, a, b), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_lerp_matches_torch(dtype, device):
    a, b, w = (make((4, 6), dtype, device, lay) for lay in ("contiguous", "transposed", "expanded"))
    check(run1("lerp", [a, b, w]), torch.lerp(a, b, w), dtype)


@pytest.mark.parametrize("src", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.bool])
@pytest.mark.parametrize("dst", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.uint8, torch.bool])
def test_convert_element_type_matches_torch(src, dst, device):
    x = make((3, 7), src, device, "transposed", 0, 100)
    check(run1("convert_element_type", [x], dst), x.to(dst), dst)


REDUCTIONS = {"sum": torch.sum, "amax": torch.amax, "amin": torch.amin}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "offset"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("op", sorted(REDUCTIONS) + ["prod"])
def test_reduction_matches_torch(op, dtype, layout, shape, device):
    x = make(shape, dtype, device, layout, -2, 2)
    dims = (len(shape) - 1,)
    if op in ("amax", "amin") and 0 in shape and shape[dims[0]] == 0:
        pytest.skip("torch raises for amax/amin over an empty extent; viewfuse gives the identity")
    want = torch.prod(x, dims[0]) if op == "prod" else REDUCTIONS[op](x, dims)
    check(run1(op, [x], dims), want, dtype)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("op", ["sum", "amax"])
def test_long_reduction_runs_in_two_stages_and_matches_torch(op, layout, device):
    """Two rows of 2**17 elements: planning splits the reduction (two kernels, explain says so)."""
    x = make((2, 2 ** 17), torch.float32, device, layout, -2, 2)
    with vf.FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=torch.float32)
        fd.add_output(getattr(fd.ops, op)(t, (1,)))
    plan = fd.explain([x])
    assert len(plan["rewrites"]) == 1 and plan["kernels"] == 2, plan
    torch.testing.assert_close(fd.execute([x])[0], REDUCTIONS[op](x, (1,)), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("correction", [0, 1])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_var_and_var_mean_match_torch(correction, layout, device):
    x = make((4, 6), torch.float32, device, layout)
    check(run1("var", [x], (1,), correction=correction), torch.var(x, (1,), correction=correction), torch.float32)
    var, mean = run1("var_mean", [x], (0,), correction=correction)
    want_var, want_mean = torch.var_mean(x, (0,), correction=correction)
    check(var, want_var, torch.float32)
    check(mean, want_mean, torch.float32)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_view_ops_match_torch(dtype, layout, device):
    x = make((4, 6, 2), dtype, device, layout)
    check(run1("transpose", [x], (2, 0, 1)), x.permute(2, 0, 1), dtype)
    check(run1("reshape", [x], (4, 12)), x.reshape(4, 12), dtype)
    check(run1("reshape", [x], (-1,)), x.reshape(-1), dtype)
    check(run1("slice_prim", [x], (1, 0, 0), (4, 6, 2), (2, 3, 1)), x[1:4:2, 0:6:3, :], dtype)
    check(run1("broadcast_in_dim", [x], (3, 4, 6, 2), (1, 2, 3)), x.expand(3, 4, 6, 2), dtype)
    y = make((4, 1, 2), dtype, device, layout)
    check(run1("squeeze", [y], (1,)), y.squeeze(1), dtype)
    check(run1("permute", [x], (1, 0, 2)), x.permute(1, 0, 2), dtype)
    check(run1("unsqueeze", [x], 1), x.unsqueeze(1), dtype)
    check(run1("expand", [y], (3, 4, 5, 2)), y.expand(3, 4, 5, 2), dtype)
    check(run1("flatten", [x]), x.flatten(), dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_movement_ops_match_torch(dtype, layout, device):
    x = make((4, 6), dtype, device, layout)
    check(run1("flip", [x], (0, 1)), torch.flip(x, (0, 1)), dtype)
    y = make((4, 3), dtype, device, "transposed")
    e = make((0, 6), dtype, device, "contiguous")
    with vf.FusionDefinition() as fd:
        a, b = fd.define_tensor([-1, 6], dtype), fd.define_tensor([-1, 6], dtype)
        fd.add_output(fd.ops.cat([a, b, a], 0))
    check(fd.execute([x, e])[0], torch.cat([x, e, x], 0), dtype)
    with vf.FusionDefinition() as fd:
        a, b = fd.define_tensor([-1, -1], dtype), fd.define_tensor([-1, -1], dtype)
        fd.add_output(fd.ops.cat([a, b], 1))
    check(fd.execute([x, y])[0], torch.cat([x, y], 1), dtype)
    # pad: lo/hi (negative crops), no interior padding (torch's pad has none)
    want = torch.nn.functional.pad(x, (2, -1, 1, 3), value=7)
    check(run1("pad", [x], 7, ((1, 3, 0), (2, -1, 0))), want, dtype)


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_indexing_ops_match_torch(dtype, index_dtype, device):
    """take (index_select), take_along_axis (take_along_dim) and gather, reading sources of every
    layout, with int64 and int32 indices; index_select by its torch spelling too."""
    for layout in LAYOUTS:
        x = make((5, 7), dtype, device, layout)
        rows = torch.randint(0, 5, (9,), device=device, dtype=index_dtype)
        along = torch.randint(0, 7, (5, 3), device=device, dtype=index_dtype)
        smaller = torch.randint(0, 5, (2, 4), device=device, dtype=index_dtype)
        check(run1("take", [x, rows], 0), torch.index_select(x, 0, rows), dtype)
        check(run1("take_along_axis", [x, along], 1), torch.take_along_dim(x, along.long(), 1), dtype)
        check(run1("gather", [x, smaller], 0), torch.gather(x, 0, smaller.long()), dtype)
        check(run1("index_select", [x, 1, rows]), torch.index_select(x, 1, rows), dtype)
        check(run1("gather", [x, along], -1), torch.gather(x, -1, along.long()), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.float64])
def test_scatter_add_index_add_and_embedding_backward_match_torch(dtype, device):
    """prims.scatter_add (sources of every layout, along both dims, an index smaller than the
    source), index_add and embedding_backward (scatter_add of a spread index) by their torch
    spellings, with repeated indices: float sums within rounding (CUDA adds in any order), bf16
    summed in float32 and rounded once (torch's op in float32, rounded: torch's own bf16 ops round
    after each add), integers exact."""
    def rand(*shape):
        return (torch.randn(*shape, device=device) * 4).to(dtype)

    def torch_op(fn, *args):
        if dtype != torch.bfloat16:
            return fn(*args)
        wide = [x.float() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in args]
        return fn(*wide).to(dtype)

    for layout in LAYOUTS:
        a = make((5, 7), dtype, device, layout)
        src = make((9, 7), dtype, device, layout)
        rows = torch.randint(0, 5, (6, 7), device=device)
        check(run1("scatter_add", [a, rows, src], 0), torch_op(torch.scatter_add, a, 0, rows, src[:6]), dtype)
        cols = torch.randint(0, 7, (5, 12), device=device)
        wide = rand(5, 12)
        check(run1("scatter_add", [a, cols, wide], 1), torch_op(torch.scatter_add, a, 1, cols, wide), dtype)
    a, v = rand(5, 7), rand(5, 40)
    index = torch.randint(0, 7, (40,), device=device)
    check(run1("index_add", [a, 1, index, v]), torch_op(torch.index_add, a, 1, index, v), dtype)
    if dtype.is_floating_point:
        g = rand(3, 16, 8)
        ids = torch.randint(0, 10, (3, 16), device=device)
        for padding in (-1, 4):
            want = torch_op(torch.ops.aten.embedding_backward, g, ids, 10, padding, False, False)
            check(run1("embedding_backward", [g, ids, 10, padding, False, False]), want, dtype)
        # Few tokens into many rows: summed in a row per token where the result is rounded
        # (passes/compact_row_scatters.h), ids repeating.
        g, ids = rand(2, 40, 32), torch.randint(0, 9, (2, 40), device=device) * 111
        want = torch_op(torch.ops.aten.embedding_backward, g, ids, 1000, -1, False, False)
        check(run1("embedding_backward", [g, ids, 1000, -1, False, False]), want, dtype)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8])
def test_scatter_max_matches_torch(dtype, device):
    """prims.scatter_max is torch.scatter_reduce with "amax" and include_self: sources of every
    layout, along both dims, repeated indices, exact (the oracle on the CPU)."""
    def oracle(a, dim, index, src):
        return torch.scatter_reduce(a.cpu(), dim, index.cpu(), src.cpu(), "amax").to(device)

    for layout in LAYOUTS:
        a = make((5, 7), dtype, device, layout)
        src = make((9, 7), dtype, device, layout)
        rows = torch.randint(0, 5, (6, 7), device=device)
        check(run1("scatter_max", [a, rows, src], 0), oracle(a, 0, rows, src[:6]), dtype)
        cols = torch.randint(0, 7, (5, 12), device=device)
        wide = make((5, 12), dtype, device, layout)
        check(run1("scatter_max", [a, cols, wide], 1), oracle(a, 1, cols, wide), dtype)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.int8])
def test_cumsum_matches_torch(dtype, device):
    """prims.cumsum along every dim of every layout: floats within rounding, integers exact (wrapping,
    in the input's dtype: torch's with dtype=); torch.cumsum's spelling promotes integers to int64.
    bf16 and f16 sum in float32 and round each element once (ir.h): the oracle is torch's cumsum in
    float32, rounded (torch's CPU kernel does the same; its CUDA scan rounds partial sums to the
    half type, several steps off after 40 terms)."""
    for layout in LAYOUTS:
        x = make((6, 40, 3), dtype, device, layout, -3.0, 3.0)
        for dim in (0, 1, 2, -1):
            want = (torch.cumsum(x.float(), dim).to(dtype) if dtype in (torch.float16, torch.bfloat16)
                    else torch.cumsum(x, dim, dtype=x.dtype))
            check(run1("cumsum", [x], dim), want, dtype)
    if not dtype.is_floating_point:
        with vf.FusionDefinition() as fd:
            t = fd.define_tensor([-1, -1], dtype=dtype)
            fd.add_output(fd._record("torch.cumsum", 1, (t, 1), {}))
        x = make((5, 9), dtype, device)
        (got,) = fd.execute([x])
        check(got, torch.cumsum(x, 1), torch.int64)


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_matches_torch(dtype, device):
    """torch.frexp's mantissa and int32 exponent, exactly: random values, zeros, infinities, NaN,
    and the dtype's subnormals."""
    x = make((4, 50), dtype, device, "contiguous", -1e4, 1e4)
    special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, 0.5, -0.75,
                            torch.finfo(dtype).tiny / 4, -torch.finfo(dtype).tiny / 3], dtype=dtype, device=device)
    for a in (x, special):
        mantissa, exponent = run1("frexp", [a])
        want_m, want_e = torch.frexp(a)
        assert exponent.dtype == torch.int32
        torch.testing.assert_close(mantissa, want_m, rtol=0, atol=0, equal_nan=True)
        finite = torch.isfinite(a)  # torch leaves the exponent of inf and NaN unspecified
        assert torch.equal(exponent[finite], want_e[finite])


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_and_linear_match_torch(dtype, device):
    """prims.matmul (a library segment) against torch.matmul: matrices of every layout (transposed,
    expanded, offset and strided operands are read with their layouts), vectors, broadcast batch
    dims; matmul with a bias (torch.addmm) and linear with and without one, the bias of every
    layout. Half types within their rounding (viewfuse sums in float32, adds the bias and rounds
    once, as cuBLAS does)."""
    for layout in LAYOUTS:
        a, b = make((5, 7), dtype, device, layout), make((7, 4), dtype, device, layout)
        check(run1("matmul", [a, b]), torch.matmul(a, b), dtype)
    for sa, sb in [((7,), (7,)), ((7,), (7, 3)), ((2, 5, 7), (7,)), ((2, 1, 5, 7), (3, 7, 4)), ((4, 5, 0), (0, 2))]:
        a, b = make(sa, dtype, device), make(sb, dtype, device)
        check(run1("matmul", [a, b]), torch.matmul(a, b), dtype)
    x, w, bias = make((3, 6, 8), dtype, device), make((5, 8), dtype, device), make((5,), dtype, device)
    check(run1("linear", [x, w, bias]), torch.nn.functional.linear(x, w, bias), dtype)
    check(run1("linear", [x, w, None]), torch.nn.functional.linear(x, w), dtype)
    for layout in LAYOUTS:
        a, b, c = make((6, 8), dtype, device), make((8, 5), dtype, device, layout), make((5,), dtype, device, layout)
        check(run1("matmul", [a, b, c]), torch.addmm(c, a, b), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_matmul_gelu_matches_torch(dtype, device):
    """prims.matmul_gelu (one call, cuBLASLt's gelu epilogue on CUDA; a linear followed by a tanh gelu
    folds into it): the tanh gelu of the float32 sum plus the bias, rounded once, and the sum itself,
    rounded; operands of every layout."""
    for layout in LAYOUTS:
        a, b, c = make((6, 8), dtype, device, layout), make((8, 16), dtype, device, layout), make((16,), dtype, device)
        y, r = run1("matmul_gelu", [a, b, c])
        s = torch.addmm(c.float(), a.float(), b.float())
        check(r, s.to(dtype), dtype)
        check(y, torch.nn.functional.gelu(s, approximate="tanh").to(dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_add_matches_torch(dtype, device):
    """prims.matmul_add (one call, cuBLASLt's C with beta = 1 on CUDA; a residual add after a linear
    folds into it): the float32 sum plus c plus the bias, rounded once; operands of every layout."""
    for layout in LAYOUTS:
        a, b = make((6, 8), dtype, device, layout), make((8, 16), dtype, device, layout)
        c, bias = make((6, 16), dtype, device, layout), make((16,), dtype, device)
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        s = torch.addmm(c.to(wide), a.to(wide), b.to(wide))
        check(run1("matmul_add", [a, b, c]), s.to(dtype), dtype)
        check(run1("matmul_add", [a, b, c, bias]), (s + bias.to(wide)).to(dtype), dtype)


def test_index_out_of_range_is_an_error_on_cpu():
    x = torch.randn(4, 3)
    with pytest.raises(vf.UserError, match=r"prims.take .* index 4 is out of range"):
        run1("take", [x, torch.tensor([0, 4])], 0)


def test_pad_interior_matches_manual_construction(device):
    x = make((3,), torch.float32, device)
    got = run1("pad", [x], 0.5, ((1, 2, 1),))
    want = torch.tensor([0.5, x[0], 0.5, x[1], 0.5, x[2], 0.5, 0.5], device=device)
    check(got, want, torch.float32)


@pytest.mark.parametrize("shape", [(0, 4), (3, 0, 2)])
def test_empty_inputs_give_empty_outputs(shape, device):
    x = make(shape, torch.float32, device)
    check(run1("exp", [x]), torch.exp(x), torch.float32)
    check(run1("sum", [x], (0,)), torch.sum(x, (0,)), torch.float32)


def test_every_prim_is_covered():
    covered = (set(UNARY_FLOAT) | set(UNARY_ANY) | set(SPECIAL) | {"bitwise_not"} | set(BINARY) | set(BINARY_FLOAT) | set(BITWISE)
               | {"where", "lerp", "convert_element_type", "prod", "var", "var_mean", "transpose", "reshape",
                  "slice_prim", "broadcast_in_dim", "squeeze", "flip", "cat", "pad", "full", "iota", "take",
                  "take_along_axis", "gather", "bitwise_left_shift", "bitwise_right_shift", "nextafter", "zeta",
                  "uniform_philox", "scatter_add", "scatter_max", "cumsum", "frexp_mantissa", "frexp_exponent", "matmul", "matmul_gelu", "matmul_add"} | set(REDUCTIONS))
    prims = {name for name, _, _ in vf._viewfuse.op_table()}
    assert prims - covered == set()


def test_full_and_iota_match_torch(device):
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor([2, 3], torch.float32)
        fd.add_output(fd.ops.add(x, fd.ops.full((2, 3), 1.5, dtype=torch.float32)))
        fd.add_output(fd.ops.iota(5, start=2, step=3, dtype=torch.int64))
    x = make((2, 3), torch.float32, device)
    a, b = fd.execute([x])
    check(a, x + 1.5, torch.float32)
    check(b, torch.arange(2, 17, 3, device=device), torch.int64)
