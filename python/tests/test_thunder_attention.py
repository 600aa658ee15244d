"""viewfuse's Thunder executor and attention: claimed whole where torch's eager call runs cuDNN."""

import pytest
import torch
import torch.nn.functional as F

thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed")
from viewfuse import _thunder_attention  # noqa: E402
from viewfuse.thunder import ViewfuseExecutor, viewfuse_ex  # noqa: E402


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True) * 2


def _inputs(device, dtype, shape=(2, 3, 64, 16)):
    torch.manual_seed(0)
    return [torch.randn(shape, device=device, dtype=dtype, requires_grad=True) for _ in range(3)]


def _check_values_and_grads(jfn, args, tol):
    """jfn(*args) and the gradients of args under a random cotangent equal eager's _attention."""
    g = torch.randn_like(args[0])
    got = jfn(*args)
    got_grads = torch.autograd.grad(got, args, g)
    want = _attention(*args)
    want_grads = torch.autograd.grad(want, args, g)
    torch.testing.assert_close(got, want, atol=tol, rtol=tol)
    for a, b in zip(got_grads, want_grads):
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)


def _names(trace) -> set[str]:
    return {b.sym.name for b in trace.bound_symbols}


def _math_forward(query, key, value, dropout_p, is_causal, scale):
    """Stands in for cuDNN's forward on the CPU: the output, and the log-sum-exp of each query's
    scaled scores as [b, h, s_q, 1] float32, as the aten call returns them."""
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    scores = (query @ key.transpose(-2, -1)).float() * scale
    if is_causal:
        mask = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = scores.logsumexp(-1, keepdim=True)
    out = ((scores - lse).exp().to(value.dtype) @ value)
    seed = torch.zeros((), dtype=torch.int64)
    return out, lse, seed, seed.clone()


def _math_backward(grad, query, key, value, out, lse, seed, offset, dropout_p, is_causal, scale):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        again = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
        return torch.autograd.grad(again, (q, k, v), grad)


@pytest.fixture
def cpu_claiming_executor(monkeypatch):
    """A viewfuse executor whose attention claim takes CPU tensors for CUDA ones, torch's choice
    for cuDNN, and runs the math above in place of the two cuDNN calls: the Thunder wiring (the
    claim and its option, the forward's saved values, the backward's gradients in their places)
    checked on a machine without a GPU."""
    monkeypatch.setattr(_thunder_attention, "_forward", _math_forward)
    monkeypatch.setattr(_thunder_attention, "_backward", _math_backward)
    monkeypatch.setattr(_thunder_attention, "_on_cuda", lambda *tensors: True)
    monkeypatch.setattr(_thunder_attention, "eager_backend", lambda *args: _thunder_attention._CUDNN)
    return ViewfuseExecutor("viewfuse_attention_test")


@pytest.mark.parametrize("options", [{}, {"vf_attention": True}])
def test_Attention_Claimed_ForwardAndBackwardCallsGiveEagerValues(cpu_claiming_executor, options):
    """Claimed by default and with vf_attention=True."""
    jfn = thunder.jit(_attention, executors=[cpu_claiming_executor], **options)
    _check_values_and_grads(jfn, _inputs("cpu", torch.float32), 1e-5)
    forward, backward = thunder.last_traces(jfn)[-1], thunder.last_backward_traces(jfn)[-1]
    assert "viewfuse_cudnn_attention" in _names(forward), str(forward)
    assert "viewfuse_cudnn_attention_backward" in _names(backward), str(backward)
    # the * 2 after it, and the backward's * 2 before it, are in regions
    assert any(b.sym.is_fusion for b in forward.bound_symbols), str(forward)


def test_Attention_NoGradient_ForwardCallOnly(cpu_claiming_executor):
    jfn = thunder.jit(_attention, executors=[cpu_claiming_executor])
    args = [a.detach() for a in _inputs("cpu", torch.float32)]
    torch.testing.assert_close(jfn(*args), _attention(*args), atol=1e-5, rtol=1e-5)
    assert "viewfuse_cudnn_attention" in _names(thunder.last_traces(jfn)[-1])


def test_Attention_OptionOff_NotClaimed(cpu_claiming_executor):
    jfn = thunder.jit(_attention, executors=[cpu_claiming_executor], vf_attention=False)
    args = _inputs("cpu", torch.float32)
    torch.testing.assert_close(jfn(*args), _attention(*args), atol=1e-5, rtol=1e-5)
    assert "viewfuse_cudnn_attention" not in _names(thunder.last_traces(jfn)[-1])


def test_Attention_NotCudnnsChoice_NotClaimed(cpu_claiming_executor, monkeypatch):
    monkeypatch.setattr(_thunder_attention, "eager_backend", lambda *args: 1)  # flash
    jfn = thunder.jit(_attention, executors=[cpu_claiming_executor])
    args = _inputs("cpu", torch.float32)
    torch.testing.assert_close(jfn(*args), _attention(*args), atol=1e-5, rtol=1e-5)
    assert "viewfuse_cudnn_attention" not in _names(thunder.last_traces(jfn)[-1])


def test_Attention_OnTheCpu_LeftToItsPrims():
    """The real checker on CPU tensors: no claim (cuDNN is a CUDA kernel); Thunder writes attention
    as matmuls and a softmax, whose elementwise parts viewfuse fuses."""
    jfn = thunder.jit(_attention, executors=[viewfuse_ex])
    args = [a.detach() for a in _inputs("cpu", torch.float32)]
    torch.testing.assert_close(jfn(*args), _attention(*args), atol=1e-5, rtol=1e-5)
    assert "viewfuse_cudnn_attention" not in _names(thunder.last_traces(jfn)[-1])


@pytest.mark.parametrize("shape", [(2, 4, 256, 64), (1, 2, 200, 128)])
def test_Attention_OnCuda_ClaimedExactlyWhereEagerRunsCudnn(shape):
    """bf16 causal attention with the sdpa executor after viewfuse (as the model-step benchmark
    runs it), the claim on by default: viewfuse claims it exactly when torch's own choice for these
    tensors is cuDNN, and the output and the gradients of q, k and v equal eager's."""
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA: the claim is of cuDNN's kernel (the CPU tests above check the wiring)")
    args = _inputs("cuda", torch.bfloat16, shape)
    cudnn = int(torch._fused_sdp_choice(*args, None, 0.0, True)) == _thunder_attention._CUDNN
    jfn = thunder.jit(_attention, executors=[viewfuse_ex, thunder.get_executor("sdpa")])
    _check_values_and_grads(jfn, args, 2e-2)
    forward = thunder.last_traces(jfn)[-1]
    assert ("viewfuse_cudnn_attention" in _names(forward)) == cudnn, str(forward)
