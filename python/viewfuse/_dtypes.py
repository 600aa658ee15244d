"""Dtype names: torch dtypes, numpy dtypes and strings to viewfuse's long and short names.

The names come from the C++ core's table (base/dtype.h, through _viewfuse.dtype_table), the one the
trace reader uses, so `torch.int` means int32 on both sides.
"""

from . import _viewfuse

_TABLE = _viewfuse.dtype_table()
LONG_TO_SHORT = {long: short for long, short, _ in _TABLE["dtypes"]}
# Every other accepted name: the core's aliases (torch.int, torch.half, ...) and the short names.
_ALIASES = {**_TABLE["aliases"], **{short: long for long, short in LONG_TO_SHORT.items()}}
SCALAR_KINDS = {"bool", "int", "float"}


def long_name(dtype) -> str:
    """The viewfuse name ("float32") of a torch dtype, numpy dtype, thunder dtype or string."""
    if isinstance(dtype, str):
        name = dtype
    else:
        name = str(dtype)
        for prefix in ("torch.", "thunder.dtypes.", "dtypes."):
            if name.startswith(prefix):
                name = name[len(prefix):]
        name = name.rstrip("_")
    name = _ALIASES.get(name, name)
    if name not in LONG_TO_SHORT:
        raise TypeError(f"unsupported dtype {dtype!r}; expected one of {', '.join(LONG_TO_SHORT)}")
    return name


def scalar_kind(dtype) -> str:
    """'bool', 'int' or 'float' for a Python type, a string or a tensor dtype."""
    if dtype in (bool, int, float):
        return dtype.__name__
    if isinstance(dtype, str) and dtype in SCALAR_KINDS:
        return dtype
    name = long_name(dtype)
    if name == "bool":
        return "bool"
    return "float" if name.startswith(("float", "bfloat")) else "int"
