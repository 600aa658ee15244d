"""Finds the C++ fast path for torch tensors, viewfuse._torch_fast (docs/python.md, "The per-call path").

_viewfuse calls `load()` once, when the first torch tensor reaches an execute. The module is built
only when torch was found at build time, against that torch's headers and libraries; it is used only
when the installed torch has the same version (checked before the module is loaded, since a module
built against another torch may not even link). Otherwise torch tensors take the attribute path.
"""

from __future__ import annotations

import warnings


def load():
    """(the TorchApi capsule or None, a sentence saying which path torch tensors take and why)."""
    try:
        from ._torch_fast_build import TORCH_VERSION
    except ImportError:
        return None, "attribute path: viewfuse._torch_fast was not built (no torch at build time, or VF_PYTHON_TORCH=OFF)"
    import torch

    if torch.__version__ != TORCH_VERSION:
        reason = (f"attribute path: viewfuse._torch_fast was built against torch {TORCH_VERSION}, "
                  f"but torch {torch.__version__} is installed; rebuild viewfuse to use the fast path")
        warnings.warn("viewfuse: " + reason, RuntimeWarning, stacklevel=2)
        return None, reason
    try:
        from . import _torch_fast
    except ImportError as e:
        reason = f"attribute path: viewfuse._torch_fast did not load ({e})"
        warnings.warn("viewfuse: " + reason, RuntimeWarning, stacklevel=2)
        return None, reason
    return _torch_fast.api, f"fast path: viewfuse._torch_fast, built against torch {TORCH_VERSION}"
