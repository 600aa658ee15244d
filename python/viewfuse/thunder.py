"""viewfuse as a Thunder fusion executor: `thunder.jit(fn, executors=[viewfuse.thunder.viewfuse_ex])`.

The executor claims the prims viewfuse supports (ops.def), groups them into regions with the view
ops kept inside (Thunder's data-dependent partition, as its nvFuser and torch.compile executors do),
writes each region as a viewfuse trace whose inputs are only the proxies its ops read, and runs it
through a FusionDefinition, which compiles once per input signature and plans once per layout.

Compile options: `vf_enable_bookend=True` turns bookending on (view ops at a region's edges run
eagerly, the old strategy); it is off by default. `vf_keep_round_trips=True` rounds wherever a region
casts a float32 value to bf16 or f16 and straight back, as the trace says; by default the float32
value is kept (docs/design.md, "Round trips through 16-bit floats"). `vf_deterministic=True` makes the
scatters (embedding_backward, index_add, scatter_add) add in the index's order on CUDA too, so float
gradients repeat from run to run (docs/design.md, "Scatters"). `vf_matmul=True` claims matmul and
linear of CUDA tensors (cuBLASLt calls in the regions); `vf_matmul_epilogues=False` then computes a
tanh gelu or a residual add after one in a kernel rather than in the call (docs/design.md, "Library
segments"). Attention on CUDA is claimed whole where torch's eager call would run cuDNN's kernel
(_thunder_attention); `vf_attention=False` leaves it to the next executor.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import NamedTuple

import thunder
import thunder.torch as ltorch
import torch
from thunder.core import prims, utils
from thunder.core.compile_data import get_compile_option
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy, unvariableify
from thunder.core.pytree import tree_flatten
from thunder.core.rematerialization import rematerialize, replace_uniform
from thunder.core.symbol import BoundSymbol, Symbol
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace
from thunder.core.transform_common import dce
from thunder.executors.passes import update_fusion_call_ctx
from thunder.executors.utils import Region
from thunder.extend import FusionExecutor, register_executor

from . import _thunder_attention, _viewfuse
from ._trace_text import literal
from ._dtypes import LONG_TO_SHORT, long_name
from .fusion_definition import from_trace as _vf_from_trace

__all__ = ["ViewfuseExecutor", "viewfuse_ex"]

# viewfuse's prims that Thunder has no prim of: frexp's two results (Thunder's prims.frexp gives both)
# and cumsum (Thunder's is torch-level): the reader writes those calls as them (_COMPOSITES); the
# matmuls with an epilogue, which viewfuse's planning makes from a matmul and the ops after it;
# scatter_max, which planning makes for an embedding's gradient (Thunder has no such prim).
_VIEWFUSE_ONLY = {"frexp_mantissa", "frexp_exponent", "cumsum", "matmul_gelu", "matmul_add", "scatter_max"}
# Contractions: claimed with their own checker (_matmul_checker), on CUDA and with vf_matmul=True only.
_CONTRACTIONS = {"matmul"}
# Torch-level symbols never claimed through their prims (ViewfuseExecutor.can_fuse): attention is
# claimed whole, as torch's cuDNN kernel, or not at all (_thunder_attention).
_ATTENTION = {ltorch.scaled_dot_product_attention.id}
_PRIMS = {name for name, _category, _outputs in _viewfuse.op_table()} - _VIEWFUSE_ONLY
# Elementwise prims of several operands: Thunder lets a CPU scalar tensor (0-dim) be one of them
# beside tensors of any shape and device, as a number.
_MULTI_OPERAND = {name for name, category, _ in _viewfuse.op_table() if category in ("binary", "ternary")}
# Creation ops: claimed with their own checker (a device argument, literal numbers), and computed in
# the kernel of a region that also reads tensors on that device; alone, they stay with torch.
_CREATION = {"full", "iota"}
# Counter-based random numbers (uniform_philox: a seed and an offset in, the same values wherever
# they are computed), claimed with their own checker.
_RANDOM = {"uniform_philox"}
# Thunder's prim ids to viewfuse's prim names (Thunder may print some under other names).
_PRIM_OF_ID = {getattr(prims, name).id: name for name in _PRIMS}
# Thunder prims whose values are their input's: shallow_copy (a new tensor over the same data),
# stride_order (x.contiguous(): the input's values in a given memory order) and clone (a copy).
# Inside a region they are an identity reshape; after the runner, a region output made by
# stride_order gets its memory order and one made by clone its own storage (_OutputFixups).
_IDENTITIES = {prims.shallow_copy.id, prims.stride_order.id, prims.clone.id}
# Symbols without viewfuse prims that the trace reader writes as several prims (lower_call.cpp),
# by the name it reads them under: Thunder's nll_loss_backward (torch-level), its argmax and argmin
# prims, its index_add and embedding_backward prims (scatter_add of a spread index), its frexp prim
# (frexp_mantissa and frexp_exponent), its std prim (sqrt of var), its torch-level cumsum (a
# conversion and prims.cumsum) and its linear prim (a matmul by the weight's transpose, with the bias).
_COMPOSITES = {ltorch.nll_loss_backward.id: "ltorch.nll_loss_backward", prims.argmax.id: "prims.argmax",
               prims.argmin.id: "prims.argmin", prims.index_add.id: "prims.index_add",
               prims.embedding_backward.id: "prims.embedding_backward", prims.frexp.id: "prims.frexp",
               prims.std.id: "prims.std", ltorch.cumsum.id: "ltorch.cumsum", prims.linear.id: "prims.linear"}


def _dtype_ok(dtype) -> bool:
    try:
        long_name(dtype)
        return True
    except TypeError:
        return False


def _is_cpu_scalar(x) -> bool:
    return isinstance(x, TensorProxy) and x.ndim == 0 and x.device.devicetype.name.lower() == "cpu"


def _checker(*args, **kwargs) -> bool:
    """Claims a prim call when its tensors are CPU or CUDA tensors of supported dtypes on one device
    and its other arguments are numbers, dtypes and sequences of them."""
    return _claims(args, kwargs, scalar_tensors_are_numbers=False)


def _multi_operand_checker(*args, **kwargs) -> bool:
    """_checker for binary and ternary elementwise prims, where a CPU scalar tensor beside other
    tensors is a number: its device does not count."""
    return _claims(args, kwargs, scalar_tensors_are_numbers=True)


def _claims(args, kwargs, scalar_tensors_are_numbers: bool) -> bool:
    devices = set()
    flat = tree_flatten((args, kwargs))[0]
    others = [x for x in flat if isinstance(x, TensorProxy) and not _is_cpu_scalar(x)]
    for x in flat:
        if isinstance(x, TensorProxy):
            if x.device.devicetype.name.lower() not in ("cpu", "cuda") or not _dtype_ok(x.dtype):
                return False
            if not (scalar_tensors_are_numbers and others and _is_cpu_scalar(x)):
                devices.add(str(x.device))
        elif isinstance(x, NumberProxy):
            if x.python_type not in (bool, int, float):
                return False
        elif isinstance(x, complex):
            return False
        elif not (x is None or isinstance(x, (bool, int, float, str)) or _dtype_ok(x)):
            return False
    return len(devices) <= 1


def _nextafter_checker(a, b) -> bool:
    """Claims nextafter of float32 and float64 tensors: the next value of a 16-bit float is a step of
    that type, which viewfuse's float32 arithmetic for half types would not give."""
    tensors = [x for x in (a, b) if isinstance(x, TensorProxy)]
    return (all(_dtype_ok(x.dtype) and long_name(x.dtype) in ("float32", "float64") for x in tensors)
            and _multi_operand_checker(a, b))


def _creation_checker(*args, device, dtype, **kwargs) -> bool:
    """Claims full and iota on a CPU or CUDA device, of a supported dtype, with literal numbers
    (the trace reader takes fill_value, length, start and step as literals)."""
    return (device.devicetype.name.lower() in ("cpu", "cuda") and _dtype_ok(dtype)
            and all(isinstance(x, (bool, int, float)) for x in tree_flatten((args, kwargs))[0]))


def _uniform_philox_checker(shape, minval, maxval, *, device, dtype, seed, offset) -> bool:
    """Claims uniform_philox on a CPU or CUDA device, of a supported float dtype, with literal bounds
    and an int seed and offset (numbers or number proxies, which the region takes as inputs)."""
    def is_int(x):
        return isinstance(x, int) or (isinstance(x, NumberProxy) and x.python_type is int)

    return (device.devicetype.name.lower() in ("cpu", "cuda") and _dtype_ok(dtype)
            and thunder.dtypes.is_float_dtype(dtype) and all(isinstance(x, (int, float)) for x in (minval, maxval))
            and all(isinstance(s, int) for s in shape) and is_int(seed) and is_int(offset))


def _uniform_checker(shape, minval, maxval, *, device, dtype) -> bool:
    """Claims the stateful uniform on CUDA, which the fusion pass turns into uniform_philox with a
    seed and an offset taken from torch's CUDA generator (Thunder's replace_uniform, as its nvFuser
    executor does), unless the compile option disable_replace_uniform is set."""
    if get_compile_option("disable_replace_uniform", "Disables the replace_uniform transform"):
        return False
    return device.devicetype.name.lower() == "cuda" and _uniform_philox_checker(
        shape, minval, maxval, device=device, dtype=dtype, seed=0, offset=0)


def _embedding_checker(a, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                       sparse=False) -> bool:
    """Claims F.embedding where Thunder writes it as prims.take (reshaped): without padding_idx and
    max_norm, which make it prims.embedding (max_norm renormalizes the weight in place)."""
    return padding_idx is None and max_norm is None and _checker(a, weight)


def _scatter_checker(a, index, value, dim) -> bool:
    """Claims scatter_add and index_add of numbers (torch's of a bool tensor is an or; viewfuse's
    scatter takes numbers only)."""
    return not thunder.dtypes.is_boolean_dtype(a.dtype) and _checker(a, index, value, dim)


def _embedding_backward_checker(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse) -> bool:
    """Claims the gradient of an embedding's weight (a scatter_add of grad's rows at the indices'
    rows), with an int padding_idx (-1: none); not scale_grad_by_freq or sparse, which stay with
    torch."""
    return (isinstance(num_weights, int) and isinstance(padding_idx, int) and scale_grad_by_freq is False
            and sparse is False and _checker(grad, indices))


def _nll_loss_backward_checker(g, a, target, weight, reduction, ignore_index, total_weight) -> bool:
    """Claims the gradient of nll_loss (cross-entropy's backward), which the trace reader writes as
    elementwise prims over a's shape, so that it fuses with the log-softmax backward beside it."""
    return (reduction in ("none", "sum", "mean") and isinstance(ignore_index, int)
            and _checker(g, a, target, weight, total_weight))


def _cumsum_checker(a, dim, *, dtype=None) -> bool:
    """Claims cumsum to a numeric dtype (torch's of a bool input, without dtype=, sums in int64)."""
    return (dtype is None or not thunder.dtypes.is_boolean_dtype(dtype)) and _checker(a, dim, dtype=dtype)


def _float_checker(a, *args, **kwargs) -> bool:
    """Claims prims of floating tensors only (frexp, std)."""
    return thunder.dtypes.is_float_dtype(a.dtype) and _checker(a, *args, **kwargs)


def _matmul_checker(a, b, bias=None) -> bool:
    """With the compile option vf_matmul=True, claims matmul and linear of CUDA tensors of one float
    dtype (a cuBLASLt call in the region; on the CPU, viewfuse's loop is the reference's, far slower
    than torch's BLAS). Off by default until the model steps are measured with it (issue 25)."""
    if not get_compile_option("vf_matmul", "viewfuse: run matmul and linear of CUDA tensors in its regions "
                              "(cuBLASLt calls). Default False."):
        return False
    tensors = [x for x in (a, b, bias) if x is not None]
    return (all(isinstance(x, TensorProxy) and x.device.devicetype.name.lower() == "cuda"
                and thunder.dtypes.is_float_dtype(x.dtype) and x.dtype == a.dtype for x in tensors)
            and _checker(a, b, bias))


def _arg_extreme_checker(a, dim) -> bool:
    """Claims argmax and argmin of a tensor of numbers (torch has none of a bool tensor) with elements
    along the dim, or anywhere for dim None (torch raises otherwise)."""
    if thunder.dtypes.is_boolean_dtype(a.dtype) or not isinstance(dim, (int, type(None))):
        return False
    has_elements = a.numel > 0 if dim is None or a.ndim == 0 else a.shape[dim] > 0
    return has_elements and _checker(a)


def _devices(bsyms, outputs) -> set[str]:
    """The devices of the tensors the prims of a region read or create (not of the CPU scalar
    tensors it takes as numbers)."""
    found = set()
    numbers, alias = _scalar_tensors(bsyms, outputs)
    for bsym in _flatten(bsyms):
        for x in bsym.flat_args:
            if isinstance(x, TensorProxy) and x.name not in numbers and x.name not in alias:
                found.add(str(x.device))
        if bsym.sym.id in (prims.full.id, prims.iota.id, prims.uniform_philox.id):
            found.add(str(bsym.kwargs["device"]))
    return found


def _literal(x, alias=None) -> str:
    alias = alias or {}
    return literal(x, lambda v: alias.get(v.name, v.name) if isinstance(v, Proxy) else None)


def _annotation(p: Proxy) -> str:
    if isinstance(p, TensorProxy):
        return f'"cpu {LONG_TO_SHORT[long_name(p.dtype)]}[{", ".join(str(int(s)) for s in p.shape)}]"'
    return f'"{p.python_type.__name__}"'


def _number_annotation(p: TensorProxy) -> str:
    """A CPU scalar tensor taken as a number: its Python type."""
    kind = ("bool" if thunder.dtypes.is_boolean_dtype(p.dtype) else
            "float" if thunder.dtypes.is_float_dtype(p.dtype) else "int")
    return f'"{kind}"'


def _flatten(bsyms):
    """The prims of a region: torch-level symbols are replaced by the prims they call."""
    for bsym in bsyms:
        if bsym.sym.id in _PRIM_OF_ID or bsym.sym.id in _IDENTITIES or bsym.sym.id in _COMPOSITES:
            yield bsym
        elif bsym.subsymbols:
            yield from _flatten(bsym.subsymbols)
        else:
            raise _viewfuse.UserError(f"viewfuse cannot run {bsym.sym.name} (it has no prims)")


def _keeps_number(src, dst) -> bool:
    """Whether casting a number of dtype src to dst gives what an op of dst makes of it as a
    number operand: bool to anything, an integer to a float or a wider integer, a float to a wider
    float (the same conversion, or none)."""
    d = thunder.dtypes
    if d.is_boolean_dtype(src) or src == dst:
        return True
    if d.is_exact_dtype(src):
        return d.is_float_dtype(dst) or (d.is_exact_dtype(dst) and not d.is_boolean_dtype(dst) and dst.bytes >= src.bytes)
    return d.is_float_dtype(src) and d.is_float_dtype(dst) and dst.bytes > src.bytes


def _scalar_tensors(bsyms, outputs=()) -> tuple[set[str], dict[str, str]]:
    """The region inputs that are CPU scalar tensors read only as operands of elementwise prims
    beside a tensor of rank 1 or more, directly or through casts that keep their value (Thunder's
    type promotion, _keeps_number): the region takes them as numbers (their .item()). Returns those inputs and
    each such cast's output name mapped to its input's."""
    produced, candidates, other_uses = set(), set(), set()
    alias: dict[str, str] = {}
    for bsym in _flatten(bsyms):
        prim = _PRIM_OF_ID.get(bsym.sym.id)
        tensors = [x for x in bsym.flat_args if isinstance(x, TensorProxy)]
        outs = [o for o in bsym.flat_outs if isinstance(o, Proxy)]
        if prim == "convert_element_type" and len(tensors) == 1 and _is_cpu_scalar(tensors[0]):
            source = alias.get(tensors[0].name, tensors[0].name)
            if (source not in produced or tensors[0].name in alias) and _keeps_number(tensors[0].dtype, outs[0].dtype):
                alias[outs[0].name] = source
                continue
        beside_larger = prim in _MULTI_OPERAND and any(t.ndim > 0 for t in tensors)
        for x in tensors:
            name = alias.get(x.name, x.name)
            if x.name in alias or name not in produced:
                (candidates if beside_larger and _is_cpu_scalar(x) else other_uses).add(name)
        produced.update(o.name for o in outs)
    other_uses.update(alias.get(o.name, o.name) for o in outputs)  # returned: stays a tensor
    numbers = candidates - other_uses
    return numbers, {k: v for k, v in alias.items() if v in numbers}


def _reads_tensors(bsyms) -> bool:
    return any(isinstance(x, TensorProxy) for bsym in _flatten(bsyms) for x in bsym.flat_args)


def region_trace(bsyms: list[BoundSymbol], outputs: list[Proxy], name: str = "region") -> tuple[str, list[Proxy]]:
    """The viewfuse trace of a region and its inputs: the proxies its ops read that it does not
    produce, in first-use order (unused region inputs are dropped)."""
    produced: set[str] = set()
    inputs: dict[str, Proxy] = {}
    numbers, alias = _scalar_tensors(bsyms, outputs)
    body = []
    for bsym in _flatten(bsyms):
        outs = [o for o in bsym.flat_outs if isinstance(o, Proxy)]
        if len(outs) == 1 and outs[0].name in alias:  # a cast of a number input: the number itself
            if alias[outs[0].name] not in inputs:
                inputs[alias[outs[0].name]] = bsym.flat_args[0]
            continue
        for x in bsym.flat_args:
            if isinstance(x, (TensorProxy, NumberProxy)) and x.name not in produced and x.name not in inputs:
                name = alias.get(x.name, x.name)
                if name not in inputs:
                    inputs[name] = x
        args = [_literal(a, alias) for a in bsym.args]
        args += [f"{k}={_literal(v, alias)}" for k, v in bsym.kwargs.items() if v is not None and k != "device"]
        produced.update(o.name for o in outs)
        lhs = outs[0].name if len(outs) == 1 else "(" + ", ".join(o.name for o in outs) + ")"
        if bsym.sym.id in _IDENTITIES:  # the input's values: an identity reshape
            a = bsym.args[0]
            body.append(f"  {lhs} = prims.reshape({a.name}, {_literal(tuple(int(s) for s in a.shape))})")
            continue
        callee = _COMPOSITES.get(bsym.sym.id) or f"prims.{_PRIM_OF_ID[bsym.sym.id]}"
        body.append(f"  {lhs} = {callee}({', '.join(args)})")
    lines = [f"def {name}({', '.join(inputs)}):"]
    lines += [f"  # {n}: {_number_annotation(p) if n in numbers else _annotation(p)}" for n, p in inputs.items()]
    lines += body
    lines.append("  return (" + "".join(o.name + ", " for o in outputs) + ")")
    return "\n".join(lines) + "\n", list(inputs.values())


class _NumbersOf:
    """A region's runner called with CPU scalar tensors where the region takes numbers: passes
    their .item() (no device synchronization: they are CPU tensors)."""

    def __init__(self, runner, positions: list[int]):
        self._runner, self._positions = runner, positions

    def __call__(self, *args):
        args = list(args)
        for i in self._positions:
            args[i] = args[i].item()
        return self._runner(*args)

    def __getattr__(self, name):  # bookend, keep_round_trips, explain_json, ...
        return getattr(self._runner, name)


def _stride_order_strides(shape, order) -> tuple[int, ...]:
    """The strides prims.stride_order(a, order) gives a tensor of `shape`: dense, dim i's stride the
    order[i]-th smallest (as Thunder's torch executor computes them)."""
    by_order = sorted(range(len(shape)), key=lambda d: order[d])
    strides, step = [0] * len(shape), 1
    for d in by_order:
        strides[d] = step
        step *= int(shape[d])
    return tuple(strides)


def _fixed_outputs(bsyms, outputs) -> tuple[dict[int, tuple[int, ...]], list[int]]:
    """The region outputs made by stride_order (position: the strides they must have) and by clone
    (positions: they must not share an input's storage)."""
    ordered, cloned = {}, set()
    for bsym in _flatten(bsyms):
        if bsym.sym.id == prims.stride_order.id:
            ordered[bsym.flat_outs[0].name] = _stride_order_strides(bsym.args[0].shape, bsym.args[1])
        elif bsym.sym.id == prims.clone.id:
            cloned.add(bsym.flat_outs[0].name)
    return ({i: ordered[o.name] for i, o in enumerate(outputs) if o.name in ordered},
            [i for i, o in enumerate(outputs) if o.name in cloned])


class _OutputFixups:
    """A region's runner whose outputs made by stride_order must have its strides (one the plan laid
    out otherwise is copied into them: no copy where the plan's layout is that one already), and
    whose outputs made by clone must have their own storage (one the plan returned as a view of an
    input is copied)."""

    def __init__(self, runner, strides: dict[int, tuple[int, ...]], copies: list[int]):
        self._runner, self._strides, self._copies = runner, strides, copies

    def __call__(self, *args):
        outs = self._runner(*args)
        for i, strides in self._strides.items():
            t = outs[i]
            if any(got != want for got, want, n in zip(t.stride(), strides, t.shape) if n > 1):
                outs[i] = torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device).copy_(t)
        if self._copies:
            inputs = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
            for i in self._copies:
                if outs[i].untyped_storage().data_ptr() in inputs:
                    outs[i] = outs[i].clone()
        return outs

    def __getattr__(self, name):  # bookend, keep_round_trips, explain_json, ...
        return getattr(self._runner, name)


# Prims after which a group is not pulled up into an earlier one (_pull_up_elementwise_groups):
# reductions, scans, scatters, gathers and library calls, whose kernels the merged region's
# planning would change.
_NOT_PULLED_UP = frozenset({
    "sum", "prod", "amax", "amin", "var", "var_mean", "argmax", "argmin", "cumsum", "scatter_add", "index_add",
    "embedding_backward", "nll_loss_backward", "take", "take_along_axis", "gather", "matmul", "linear",
    "scaled_dot_product_attention"})


_VIEW_PRIMS = frozenset({"reshape", "transpose", "broadcast_in_dim", "slice_prim", "squeeze", "shallow_copy"})


def _pull_up_elementwise_groups(groups: list[list[BoundSymbol]], can_fuse) -> list[list[BoundSymbol]]:
    """Thunder's consecutive grouping cuts a region wherever the trace lists an unclaimed symbol
    between two claimed ones, even one neither depends on: Llama's backward lists the w3
    weight-gradient matmuls between the SiLU-gated MLP's two halves, so its input gradients took
    two regions (the second reading the first's 92 MB product) where one reads a, b and the
    incoming gradient once. A later claimed group of elementwise ops (and views; not views alone,
    which cost no kernel where they are) joins the latest earlier region it reads from when every
    other value it reads is made before that region (so nothing between them needs to run first).
    Reductions and the like stay where they are: Thunder's dataflow grouping, which merges them too,
    made the nanoGPT step 2.3 times slower (a bias gradient's column sum merged with the cat of q, k
    and v gradients it reads)."""
    claimed = [all(can_fuse(b) for b in g) for g in groups]
    made_at = {}  # proxy name -> index of the group that makes it
    for i, g in enumerate(groups):
        for b in g:
            for o in b.flat_proxy_outs:
                made_at.setdefault(o.name, i)
    merged_into = list(range(len(groups)))
    out = [list(g) for g in groups]
    for j, g in enumerate(groups):
        try:
            names = {s.sym.name for s in _flatten(g)} if claimed[j] else set()
        except _viewfuse.Error:  # a symbol without prims: the region is rejected later, where it is
            continue
        if not names - _VIEW_PRIMS or names & _NOT_PULLED_UP:  # nothing computed, or not elementwise
            continue
        made_here = {o.name for b in g for o in b.flat_proxy_outs}
        reads = {a.name for b in g for a in b.flat_proxy_args if a.name not in made_here}
        sources = {merged_into[made_at[n]] for n in reads if n in made_at}
        later = [k for k in sources if k < j and claimed[k]]
        if not later:
            continue
        target = max(later)  # the latest region it reads from: whatever else it reads must be older
        if any(k > target for k in sources):
            continue
        out[target].extend(g)
        out[j] = []
        merged_into[j] = target
    return [g for g in out if g]


class _PassOptions(NamedTuple):
    """The compile options a fusion pass plans its regions with (from_trace's keyword arguments)."""
    bookend: bool = False
    keep_round_trips: bool = False
    deterministic: bool = False
    matmul_epilogues: bool = True


class ViewfuseExecutor(FusionExecutor):
    """Thunder fusion executor running regions of prims through viewfuse."""

    def __init__(self, name: str = "viewfuse"):
        super().__init__(name, version="0.1.0")
        # (trace, options) -> FusionDefinition
        self._definitions: dict[tuple[str, _PassOptions], object] = {}
        # When set (benchmarks: bench/model_steps.py), regions fused from then on call
        # region_hook(name, trace_text, runner, args) instead of runner(*args); it must return
        # what the runner returns.
        self.region_hook = None
        # The options of the fusion pass running: Thunder fuses each region again through
        # fuse(region, counter) (update_fusion_call_ctx, rematerialization), which must plan it
        # with the same options.
        self._pass_options = _PassOptions()
        for sym_name in sorted(_PRIMS - _CREATION - _RANDOM - _CONTRACTIONS):
            checker = _multi_operand_checker if sym_name in _MULTI_OPERAND else _checker
            checker = _nextafter_checker if sym_name == "nextafter" else checker
            self.register_supported(getattr(prims, sym_name).id, checker)
        for sym_name in sorted(_CREATION):
            self.register_supported(getattr(prims, sym_name).id, _creation_checker)
        self.register_supported(prims.uniform_philox.id, _uniform_philox_checker)
        self.register_supported(prims.uniform.id, _uniform_checker)
        # Torch-level symbols that Thunder would give to torch whole before looking at their prims:
        # the fusion pass flattens them to take, take_along_axis and gather (_flatten).
        self.register_supported(ltorch.embedding.id, _embedding_checker)
        for sym in (ltorch.take_along_dim, ltorch.index_select, ltorch.gather):
            self.register_supported(sym.id, _checker)
        self.register_supported(ltorch.nll_loss_backward.id, _nll_loss_backward_checker)
        for sym in (prims.index_add, prims.scatter_add):  # (scatter_add replaces the generic claim)
            self.register_supported(sym.id, _scatter_checker)
        for sym in (prims.embedding_backward, ltorch.embedding_backward):
            self.register_supported(sym.id, _embedding_backward_checker)
        self.register_supported(ltorch.cumsum.id, _cumsum_checker)
        self.register_supported(prims.frexp.id, _float_checker)
        self.register_supported(prims.std.id, _float_checker)
        self.register_supported(prims.matmul.id, _matmul_checker)
        self.register_supported(prims.linear.id, _matmul_checker)
        self.register_supported(prims.argmax.id, _arg_extreme_checker)
        self.register_supported(prims.argmin.id, _arg_extreme_checker)
        self.register_supported(prims.shallow_copy.id, _checker)
        self.register_supported(prims.stride_order.id, _checker)
        self.register_supported(prims.clone.id, _checker)
        _thunder_attention.register(self)

    def can_fuse(self, bsym: BoundSymbol) -> bool:
        """Thunder's rule (a symbol whose prims are all claimed is claimed whole), except attention:
        with vf_matmul=True its prims (two matmuls and a softmax) would be claimed, where a fused
        kernel computes it without writing the T x T scores. Attention is claimed whole where
        torch's eager call would run cuDNN's kernel (_thunder_attention), else left to the sdpa
        executor or torch."""
        if bsym.sym.id in _ATTENTION:
            return self.can_execute(bsym)
        return super().can_fuse(bsym)

    def get_fuel(self, amount: int = 1, /) -> bool:
        return True

    def set_fuel(self, value) -> None:
        pass

    def _definition(self, text: str, options: _PassOptions):
        # The CUDA schedule switches (codegen/schedule_cuda.h schedule_enabled) are read when a
        # region's kernels are scheduled, at its first run: a definition made under other switches
        # would keep the kernels it scheduled then (bench/model_steps.py's "+plain" systems).
        switches = (os.environ.get("VF_DISABLE_SCHEDULES", ""), os.environ.get("VF_ENABLE_SCHEDULES", ""))
        key = (text, options, switches)
        fd = self._definitions.get(key)
        if fd is None:
            fd = self._definitions[key] = _vf_from_trace(text, convert_inputs=True, **options._asdict())
        return fd

    def fuse(self, region: Region, fusion_counter: int, options: _PassOptions | None = None) -> BoundSymbol:
        if len(devices := _devices(region.bound_symbols, [unvariableify(x) for x in region.outputs])) > 1:
            raise _viewfuse.UserError(f"viewfuse runs a region on one device; this one has {sorted(devices)}")
        options = self._pass_options if options is None else options
        outputs = [unvariableify(x) for x in region.outputs]
        fusion_name = f"viewfuse{fusion_counter}"
        text, inputs = region_trace(region.bound_symbols, outputs, fusion_name)
        # called as runner(*inputs), straight into C++
        runner = self._definition(text, options)._runner
        numbers, _ = _scalar_tensors(region.bound_symbols, outputs)
        if numbers:
            runner = _NumbersOf(runner, [i for i, p in enumerate(inputs) if p.name in numbers])
        ordered, copies = _fixed_outputs(region.bound_symbols, outputs)
        if ordered or copies:
            runner = _OutputFixups(runner, ordered, copies)
        if self.region_hook is not None:
            hook, inner = self.region_hook, runner

            def runner(*args):
                return hook(fusion_name, text, inner, args)

        fusion_sym = Symbol(fusion_name, meta=None, is_fusion=True, executor=self)
        return BoundSymbol(fusion_sym, tuple(inputs), {}, outputs, region.bound_symbols,
                           _call_ctx={fusion_name: runner})

    def fusion_pass(self, trace: TraceCtx) -> TraceCtx:
        start = time.perf_counter_ns()
        options = _PassOptions(
            bookend=bool(get_compile_option(
                "vf_enable_bookend", "viewfuse: run view ops at region edges eagerly (bookending). Default False.")),
            keep_round_trips=bool(get_compile_option(
                "vf_keep_round_trips", "viewfuse: round where a float is cast to bf16/f16 and back. Default False.")),
            deterministic=bool(get_compile_option(
                "vf_deterministic", "viewfuse: scatters (embedding_backward, index_add, scatter_add) add in the "
                "index's order on CUDA too, so float gradients repeat from run to run. Default False.")),
            matmul_epilogues=get_compile_option(
                "vf_matmul_epilogues", "viewfuse: with vf_matmul, a matmul's tanh gelu or residual add is computed "
                "in its cuBLASLt call. Default True.") in (None, True))
        self._pass_options = options
        # The uniforms claimed (_uniform_checker) become uniform_philox of a seed and an offset that
        # get_and_update_rng_state (run by torch) reads from the CUDA generator and advances: the
        # numbers are computed in the region's kernel, and rematerialization may recompute a
        # dropout mask in the backward from the two numbers instead of saving it.
        trace = replace_uniform(trace)
        fused_trace = from_trace(trace)
        producers, consumers = utils.producers_and_consumers(trace)
        from thunder.executors.data_dependent_partition import Node, fuse_bound_symbols

        def can_fuse_node(n: Node) -> bool:
            return len(n.group_bsyms) > 1 or self.can_fuse(n.group_bsyms[0])

        groups = fuse_bound_symbols(trace, lambda a, b: can_fuse_node(a) and can_fuse_node(b))
        if get_compile_option("fusion_type", "Choose the type of fusion to use") is None:  # Thunder's, as asked
            groups = _pull_up_elementwise_groups(groups, self.can_fuse)
        fused = []
        counter = 0
        for bsyms in groups:
            if len(bsyms) == 1 and not self.can_fuse(bsyms[0]):
                fused.append(bsyms[0])
                continue
            if not _reads_tensors(bsyms):  # creation ops alone: nothing to fuse them with
                fused.extend(bsyms)
                continue
            try:
                fused.append(self.fuse(Region(producers, consumers, bsyms), counter, options))
                counter += 1
            except _viewfuse.Error as e:  # viewfuse rejects the region: its symbols stay for other executors
                warnings.warn(f"viewfuse left a region of {len(bsyms)} symbols unfused: {e}")
                fused.extend(bsyms)
        fused_trace.bound_symbols = fused
        fused_trace = rematerialize(fused_trace)
        fused_trace = dce(fused_trace)
        fused_trace = update_fusion_call_ctx(fused_trace)
        ms = (time.perf_counter_ns() - start) // 1_000_000
        fused_trace.set_provenance(TraceProvenance(f"viewfuse fusion (took {ms} milliseconds)"))
        return fused_trace


viewfuse_ex = ViewfuseExecutor()
register_executor(viewfuse_ex)
