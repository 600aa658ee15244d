"""FusionDefinition: build a fusion op by op in the vocabulary of Thunder traces, then execute it."""

from __future__ import annotations

import json
import warnings
from typing import Any, Sequence

from . import _viewfuse
from ._dtypes import LONG_TO_SHORT, long_name, scalar_kind
from ._trace_text import literal

# Prim names (ops.def) and how many results each gives.
_PRIMS = {name: outputs for name, _category, outputs in _viewfuse.op_table()}
# The torch spellings the trace reader accepts besides the prims, how a trace calls each
# (torch.<name>) and how many results it gives; a prim of the same name (reshape, transpose,
# squeeze, cat, cumsum) takes precedence.
_TORCH_SPELLINGS = {name: (callee, outputs) for name, callee, outputs in _viewfuse.torch_spellings()
                    if name not in _PRIMS}


class Value:
    """A value of a FusionDefinition: a tensor or a number, named as in the generated trace."""

    __slots__ = ("fd", "name", "is_tensor")

    def __init__(self, fd: "FusionDefinition", name: str, is_tensor: bool):
        self.fd, self.name, self.is_tensor = fd, name, is_tensor

    def __repr__(self) -> str:
        return f"<viewfuse {'tensor' if self.is_tensor else 'scalar'} {self.name}>"


class _Name:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def _literal(x: Any, fd: "FusionDefinition") -> str:
    """The trace text of one argument."""

    def name_of(v: Any):
        if not isinstance(v, Value):
            return None
        if v.fd is not fd:
            raise ValueError(f"{v!r} belongs to another FusionDefinition")
        return v.name

    return literal(x, name_of)


class _Ops:
    """fd.ops.<prim>(...): records one call; returns its result (a tuple for var_mean)."""

    def __init__(self, fd: "FusionDefinition"):
        self._fd = fd

    def __getattr__(self, name: str):
        if name in _PRIMS:
            callee, outputs = "prims." + name, _PRIMS[name]
        elif name in _TORCH_SPELLINGS:
            callee, outputs = _TORCH_SPELLINGS[name]
        else:
            raise AttributeError(f"viewfuse has no op '{name}' (ops: {', '.join(sorted(self.names()))})")
        fd = self._fd

        def record(*args, **kwargs):
            return fd._record(callee, outputs, args, kwargs)

        record.__name__ = name
        return record

    @staticmethod
    def names() -> list[str]:
        return list(_PRIMS) + list(_TORCH_SPELLINGS)

    def __dir__(self):
        return self.names()


class FusionDefinition:
    """A fusion defined op by op inside a `with` block, executed on torch tensors or arrays.

    Sizes given as -1 in define_tensor are taken from the inputs at run time: the fusion is built
    and compiled once per input signature (shapes and dtypes; layouts are planned per stride
    pattern inside the compiled fusion) and cached.
    """

    def __init__(self, *, bookend: bool = False, keep_round_trips: bool = False, deterministic: bool = False,
                 matmul_epilogues: bool = True):
        self.bookend = bookend
        self.keep_round_trips = keep_round_trips  # round where a float is cast to bf16/f16 and back
        self.deterministic = deterministic  # scatters add in the index's order on CUDA too
        self.matmul_epilogues = matmul_epilogues  # a matmul's tanh gelu or residual add in its call
        self.ops = _Ops(self)
        self._inputs: list[tuple[Value, str, tuple | None]] = []  # (value, dtype or kind, shape)
        self._lines: list[str] = []
        self._outputs: list[Value] = []
        self._counter = 0
        self._text: str | None = None  # fixed trace text (from_trace)
        self._convert_inputs = False  # from_trace(convert_inputs=True)
        self._runner = None

    # ---- definition ----
    def __enter__(self) -> "FusionDefinition":
        if self._runner is not None:
            raise _viewfuse.UserError("this FusionDefinition is already defined")
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._finish()

    def _fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter - 1}"

    def _check_open(self) -> None:
        if self._runner is not None:
            raise _viewfuse.UserError("the FusionDefinition is finished; define ops inside its `with` block")

    def define_tensor(self, shape: Sequence[int], dtype="float32", **_ignored) -> Value:
        """A tensor input. Sizes of -1 are known at run time; dtype is a torch dtype or a name."""
        self._check_open()
        shape = tuple(int(s) for s in shape)
        if any(s < -1 for s in shape):
            raise _viewfuse.UserError(f"define_tensor: sizes must be >= 0 or -1, got {list(shape)}")
        v = Value(self, self._fresh("in"), True)
        self._inputs.append((v, long_name(dtype), shape))
        return v

    def define_scalar(self, value=None, dtype=None) -> Value | bool | int | float:
        """A number input of kind dtype (float, int, bool), or the constant `value` when given."""
        self._check_open()
        if value is not None:
            return value
        v = Value(self, self._fresh("in"), False)
        self._inputs.append((v, scalar_kind(dtype if dtype is not None else float), None))
        return v

    def _record(self, callee: str, outputs: int, args, kwargs):
        self._check_open()
        text = ", ".join([_literal(a, self) for a in args] + [f"{k}={_literal(v, self)}" for k, v in kwargs.items()])
        results = [Value(self, self._fresh("t"), True) for _ in range(outputs)]
        lhs = results[0].name if outputs == 1 else "(" + ", ".join(r.name for r in results) + ")"
        self._lines.append(f"  {lhs} = {callee}({text})")
        return results[0] if outputs == 1 else tuple(results)

    def add_output(self, value: Value) -> None:
        self._check_open()
        if not isinstance(value, Value) or value.fd is not self:
            raise _viewfuse.UserError(f"add_output: expected a value of this FusionDefinition, got {value!r}")
        self._outputs.append(value)

    def _trace_text(self, shapes, dtypes) -> str:
        """The trace for one input signature (shapes: a tuple per tensor input, None for numbers)."""
        if self._text is not None:
            return self._converted_text(dtypes) if self._convert_inputs else self._text
        if len(shapes) != len(self._inputs):
            raise _viewfuse.UserError(f"execute: expected {len(self._inputs)} inputs, got {len(shapes)}")
        lines = ["def fusion(" + ", ".join(v.name for v, _, _ in self._inputs) + "):"]
        for i, ((v, dtype, shape), given, given_dtype) in enumerate(zip(self._inputs, shapes, dtypes)):
            if shape is None or given is None:  # the reader checks scalar kinds and tensor-ness
                lines.append(f'  # {v.name}: "{dtype if shape is None else given_dtype}"')
                continue
            if len(given) != len(shape) or any(s != -1 and s != g for s, g in zip(shape, given)):
                want = "[" + ", ".join("?" if s == -1 else str(s) for s in shape) + "]"
                raise _viewfuse.UserError(f"execute: input {i} ({v.name}) has shape {list(given)}, expected {want}")
            sizes = ", ".join(str(s) for s in given)
            lines.append(f'  # {v.name}: "cpu {LONG_TO_SHORT[dtype]}[{sizes}]"')
        lines += self._lines
        lines.append("  return (" + "".join(o.name + ", " for o in self._outputs) + ")")
        return "\n".join(lines) + "\n"

    def _converted_text(self, dtypes) -> str:
        """The fixed trace, each tensor input given in another dtype than it declares taken in that
        dtype and converted to the declared one first (from_trace(convert_inputs=True))."""
        lines = self._text.splitlines()
        body = next(i for i, line in enumerate(lines) if line.startswith("def "))
        changed = []
        for (v, declared, shape), given in zip(self._inputs, dtypes):
            if shape is None or given == declared or given not in LONG_TO_SHORT:
                continue
            taken = f"{v.name}__as_{given}"
            for i, line in enumerate(lines):
                if line.strip().startswith(f"# {v.name}: "):
                    lines[i] = line.replace(f"# {v.name}: ", f"# {taken}: ").replace(
                        f" {LONG_TO_SHORT[declared]}[", f" {LONG_TO_SHORT[given]}[", 1)
            head, args = lines[body].split("(", 1)
            names = [a.strip() for a in args.rsplit(")", 1)[0].split(",")]
            lines[body] = head + "(" + ", ".join(taken if a == v.name else a for a in names) + "):"
            changed.append(f"  {v.name} = prims.convert_element_type({taken}, dtypes.{declared})")
            warnings.warn(f"viewfuse: input {v.name} arrived as {given} where the trace declares {declared} "
                          f"(its producer returned another dtype than the trace's metadata); it is converted "
                          f"to {declared} at the start of the fusion", stacklevel=2)
        first = next(i for i in range(body + 1, len(lines)) if not lines[i].strip().startswith("#"))
        return "\n".join(lines[:first] + changed + lines[first:]) + "\n"

    def _finish(self) -> None:
        if not self._outputs:
            raise _viewfuse.UserError("the FusionDefinition has no outputs (call add_output)")
        if all(shape is None or -1 not in shape for _, _, shape in self._inputs):
            shapes = [shape for _, _, shape in self._inputs]
            dtypes = [dtype for _, dtype, _ in self._inputs]
            _viewfuse.describe_trace(self._trace_text(shapes, dtypes), "<fusion>")  # errors surface here
        # The builder holds copies of the definition, not the FusionDefinition: no reference cycle
        # through the C++ Runner (which the garbage collector cannot see into).
        builder = FusionDefinition.__new__(FusionDefinition)
        builder._inputs = [(_Name(v.name), dtype, shape) for v, dtype, shape in self._inputs]
        builder._outputs = [_Name(o.name) for o in self._outputs]
        builder._lines, builder._text = list(self._lines), self._text
        builder._convert_inputs = self._convert_inputs
        self._runner = _viewfuse.Runner(builder._trace_text, self.bookend, self.keep_round_trips, self.deterministic,
                                        self.matmul_epilogues)
        self.execute = self._runner.run  # the per-call path: straight into C++

    # ---- use ----
    def execute(self, inputs: Sequence) -> list:
        """Runs on torch tensors (torch out, same device) or numpy/DLPack arrays (numpy out)."""
        raise _viewfuse.UserError("execute: the FusionDefinition is not finished (leave its `with` block first)")

    def _need_runner(self):
        if self._runner is None:
            raise _viewfuse.UserError("the FusionDefinition is not finished (leave its `with` block first)")
        return self._runner

    def explain(self, inputs: Sequence) -> dict:
        """The plan for these inputs, with the schema of `viewfuse explain --json`."""
        return json.loads(self._need_runner().explain_json(inputs))

    def explain_text(self, inputs: Sequence) -> str:
        return self._need_runner().explain_text(inputs)

    def trace(self, inputs: Sequence | None = None) -> str:
        """The trace text of the fusion (for these inputs when sizes are -1)."""
        if inputs is None:
            shapes = [shape for _, _, shape in self._inputs]
            return self._text if self._text is not None else self._trace_text(shapes, [d for _, d, _ in self._inputs])
        return self._need_runner().trace(inputs)

    @property
    def cache_size(self) -> int:
        """The number of input signatures compiled so far."""
        return self._need_runner().cache_size


def from_trace(text: str, *, bookend: bool = False, convert_inputs: bool = False,
               keep_round_trips: bool = False, deterministic: bool = False,
               matmul_epilogues: bool = True) -> FusionDefinition:
    """A FusionDefinition from a Thunder trace (REFERENCE.md section 3); its shapes are fixed.

    With convert_inputs, a tensor input given in another dtype than the trace declares is taken in
    that dtype and converted to the declared one inside the fusion (one compiled fusion per such
    signature, and a warning); without, it is an error."""
    desc = _viewfuse.describe_trace(text)
    fd = FusionDefinition(bookend=bookend, keep_round_trips=keep_round_trips, deterministic=deterministic,
                          matmul_epilogues=matmul_epilogues)
    fd._text = text
    fd._convert_inputs = convert_inputs
    for name, dtype, shape in desc["inputs"]:
        fd._inputs.append((Value(fd, name, shape is not None), dtype, shape))
    for name, _, _ in desc["outputs"]:
        fd._outputs.append(Value(fd, name, True))
    fd._finish()
    return fd
