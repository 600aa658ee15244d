"""Dtype names: torch dtypes, numpy dtypes and strings to viewfuse's long and short names."""

LONG_TO_SHORT = {
    "bool": "b8", "uint8": "ui8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
}
_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
    "short": "int16", "bool8": "bool", "b8": "bool", "ui8": "uint8", "i8": "int8", "i16": "int16",
    "i32": "int32", "i64": "int64", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
}
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
