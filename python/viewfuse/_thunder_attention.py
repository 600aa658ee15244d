"""Attention for the Thunder executor: scaled_dot_product_attention as the kernel torch's eager call picks.

Thunder's sdpa executor chooses between the flash and the memory-efficient kernels only. Recent
torch (2.11 here) prefers cuDNN's fused attention in eager `F.scaled_dot_product_attention` on
Hopper and Blackwell GPUs with cuDNN newer than 9.15 (aten's sdp_utils.cpp), so eager and
torch.compile run cuDNN's kernels where a Thunder step runs flash's: on an H100 with cuDNN 9.19
(docs/model_steps.md, session 24) eager's and torch.compile's nanoGPT steps ran
`cudnn_generated_fort_native_sdpa_sm90_flash_*` (2.42 ms of attention a step) where Thunder's sdpa
executor ran `pytorch_flash::flash_*` (3.31 ms); Llama's 4.88 against 8.50 ms. viewfuse's executor
claims the torch-level symbol exactly where torch itself would run cuDNN (its own choice, asked at
trace time of CUDA tensors of the proxies' shapes) and runs the two aten calls eager's autograd
runs: `_scaled_dot_product_cudnn_attention` and its backward (then 2.38 and 4.95 ms). Elsewhere it
leaves attention to the next executor (the sdpa executor, or torch). On by default; the compile
option `vf_attention=False` turns the claim off.
"""

from __future__ import annotations

import functools

import thunder.torch as ltorch
import torch
from thunder.core import dtypes
from thunder.core.compile_data import get_compile_option
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grads

# torch.nn.attention.SDPBackend.CUDNN_ATTENTION as torch._fused_sdp_choice returns it
_CUDNN = 3


def _on_cuda(*tensors) -> bool:
    return torch.cuda.is_available() and all(
        isinstance(t, TensorProxy) and t.device.devicetype.name.lower() == "cuda" for t in tensors)


@functools.lru_cache(maxsize=256)
def _choice(shapes, dtype, requires_grad: bool, dropout_p: float, is_causal: bool, scale) -> int:
    # Real CUDA tensors, so that torch decides as in an eager call (fake ones take its meta path);
    # each a row of head_dim elements expanded to its shape: only the last stride is checked.
    q, k, v = (torch.empty(shape[-1], dtype=dtype, device="cuda", requires_grad=requires_grad).expand(shape)
               for shape in shapes)
    return int(torch._fused_sdp_choice(q, k, v, None, dropout_p, is_causal, scale=scale))


def eager_backend(query, key, value, dropout_p: float, is_causal: bool, scale) -> int:
    """The backend torch's eager scaled_dot_product_attention (no mask) runs for tensors of these
    proxies' shapes, dtype and requires_grad on the current CUDA device (torch._fused_sdp_choice)."""
    shapes = tuple(tuple(int(n) for n in t.shape) for t in (query, key, value))
    requires_grad = any(t.requires_grad for t in (query, key, value))
    return _choice(shapes, ltorch.to_torch_dtype(query.dtype), requires_grad, dropout_p, is_causal, scale)


def attention_checker(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None) -> bool:
    """Claims attention without a mask where torch's eager call would run cuDNN's kernel."""
    if get_compile_option("vf_attention", "viewfuse: run scaled_dot_product_attention as torch's eager call "
                          "does where that is cuDNN's kernel (Thunder's sdpa executor runs flash). "
                          "Default True.") is False:
        return False
    if attn_mask is not None or not _on_cuda(query, key, value):
        return False
    if not all(isinstance(x, (int, float, bool)) or x is None for x in (dropout_p, is_causal, scale)):
        return False  # proxies of numbers: the choice is made once, at trace time
    if any(t.ndim != 4 or t.dtype != query.dtype for t in (key, value)) or query.ndim != 4:
        return False
    try:
        return eager_backend(query, key, value, float(dropout_p), bool(is_causal), scale) == _CUDNN
    except Exception:  # noqa: BLE001 - a choice torch cannot make here is not ours to make
        return False


# ---- the two calls, as operators of the executor (run by torch, outside the regions) ----

def _forward_meta(query, key, value, dropout_p, is_causal, scale):
    b, h, s_q, _ = query.shape
    like = dict(device=query.device, requires_grad=False)
    return (TensorProxy(like=query, shape=(b, h, s_q, value.shape[-1])),
            TensorProxy(shape=(b, h, s_q, 1), dtype=dtypes.float32, **like),
            TensorProxy(shape=(), dtype=dtypes.int64, **like),
            TensorProxy(shape=(), dtype=dtypes.int64, **like))


def _forward(query, key, value, dropout_p, is_causal, scale):
    out, lse, _, _, _, _, seed, offset, _ = torch.ops.aten._scaled_dot_product_cudnn_attention(
        query, key, value, None, True, dropout_p, is_causal, False, scale=scale)
    return out, lse, seed, offset


def _backward_meta(grad, query, key, value, out, lse, seed, offset, dropout_p, is_causal, scale):
    return (TensorProxy(like=query), TensorProxy(like=key), TensorProxy(like=value))


def _backward(grad, query, key, value, out, lse, seed, offset, dropout_p, is_causal, scale):
    # No mask (attn_bias None) and dense inputs (no cumulative sequence lengths): the arguments
    # eager's autograd passes for the same forward.
    return torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        grad, query, key, value, out, lse, seed, offset, None, None, None, query.shape[2], key.shape[2],
        dropout_p, is_causal, scale=scale)


def register(executor) -> None:
    """Registers the claim of ltorch.scaled_dot_product_attention on `executor` (a FusionExecutor
    whose can_fuse defers attention to can_execute): the forward alone where no gradient is
    needed, the forward and backward calls in a training trace."""
    # The calls look _forward and _backward up when they run (the CPU tests stand math in for them).
    forward = executor.register_operator(
        "viewfuse_cudnn_attention", meta=_forward_meta, fn=lambda *a: _forward(*a))
    backward = executor.register_operator(
        "viewfuse_cudnn_attention_backward", meta=_backward_meta, fn=lambda *a: _backward(*a))

    def execution(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
        return forward(query, key, value, float(dropout_p), bool(is_causal), scale)[0]

    def grad(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
        args = (float(dropout_p), bool(is_causal), scale)
        out, lse, seed, offset = forward(query, key, value, *args)
        g = get_grad(out)
        put_grads((query, key, value), backward(g, query, key, value, out, lse, seed, offset, *args))
        return out

    executor.register_supported(ltorch.scaled_dot_product_attention.id, attention_checker,
                                execution_transform=execution, grad_transform=grad)


__all__ = ["attention_checker", "eager_backend", "register"]
