"""viewfuse: a fusion compiler for tensor programs that keeps view ops inside the fusion.

    import torch, viewfuse as vf
    with vf.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 16, 8, 16], dtype=torch.float32)
        fd.add_output(fd.ops.reshape(fd.ops.transpose(x, (0, 2, 1, 3)), (2, 8, 256)))
    (out,) = fd.execute([x_tensor])
"""

from ._viewfuse import DeviceError, Error, InternalError, TraceError, UserError
from .fusion_definition import FusionDefinition, Value, from_trace

__all__ = ["FusionDefinition", "Value", "from_trace", "Error", "UserError", "TraceError", "DeviceError",
           "InternalError", "ops", "torch_fast_path"]


def ops() -> list[str]:
    """The names fd.ops accepts: the prims of ops.def and the torch spellings the reader knows."""
    from .fusion_definition import _Ops

    return _Ops.names()


def torch_fast_path() -> tuple[bool, str]:
    """(True, why) when torch tensors take the C++ fast path viewfuse._torch_fast, else (False, why).

    Imports torch when the module was built. The fast path reads inputs and makes outputs through
    PyTorch's C++ API; without it (not built, or built against another torch version) tensors are
    read through their attributes.
    """
    from . import _viewfuse

    return _viewfuse.torch_path_status()
