"""Python values as trace text, shared by FusionDefinition and the Thunder executor."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ._dtypes import long_name


def literal(x: Any, name_of: Callable[[Any], Optional[str]]) -> str:
    """The trace text of one argument; `name_of` gives the name of a traced value, or None."""
    name = name_of(x)
    if name is not None:
        return name
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "float('nan')"
        if math.isinf(x):
            return "float('inf')" if x > 0 else "-float('inf')"
        return repr(x)
    if x is None:
        return "None"
    if isinstance(x, tuple):
        return "(" + "".join(literal(i, name_of) + ", " for i in x) + ")"
    if isinstance(x, list):
        return "[" + ", ".join(literal(i, name_of) for i in x) + "]"
    if isinstance(x, str):  # a dtype's name ("float32", "bf16"), or a string argument (a reduction: 'mean')
        try:
            return "dtypes." + long_name(x)
        except TypeError:
            return repr(x)
    if type(x).__name__ == "dtype" or "dtype" in type(x).__module__:
        return "dtypes." + long_name(x)
    raise TypeError(f"unsupported argument {x!r} of type {type(x).__name__}")
