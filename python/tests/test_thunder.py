"""viewfuse as a Thunder executor: each program equals plain PyTorch, bookend off and on."""

import math

import pytest
import torch

thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed")
from viewfuse.thunder import region_trace, viewfuse_ex  # noqa: E402

from conftest import make  # noqa: E402


def jit_and_compare(fn, args, bookend, atol=1e-5, rtol=1e-5, min_regions=1, **options):
    kwargs = {"vf_enable_bookend": True} if bookend else {}
    jfn = thunder.jit(fn, executors=[viewfuse_ex], **kwargs, **options)
    got, want = jfn(*args), fn(*args)
    got, want = (got, want) if isinstance(got, (tuple, list)) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype and g.device == w.device
        torch.testing.assert_close(g, w, atol=atol, rtol=rtol)
    trace = str(thunder.last_traces(jfn)[-1])
    assert trace.count("= viewfuse") >= min_regions, trace
    # The runners the trace calls were planned with the options asked for (Thunder fuses each region
    # a second time, without them, to update the call context).
    runners = [r for b in thunder.last_traces(jfn)[-1].bound_symbols
               if b.sym.is_fusion and b.sym.executor is viewfuse_ex for r in b._call_ctx.values()]
    assert runners and all(r.bookend == bookend for r in runners)
    assert all(r.keep_round_trips == options.get("vf_keep_round_trips", False) for r in runners)
    assert all(r.matmul_epilogues == options.get("vf_matmul_epilogues", True) for r in runners)
    return jfn, trace


@pytest.mark.parametrize("bookend", [False, True])
def test_seed_permute_reshape(bookend, device):
    def fn(x):
        return x.permute(0, 2, 1, 3).reshape(2, 8, 256)

    jit_and_compare(fn, [make((2, 16, 8, 16), torch.float32, device)], bookend)


@pytest.mark.parametrize("bookend", [False, True])
def test_getitem_with_empty_slice(bookend, device):
    def fn(x, w):
        y = x[3:1] * 2  # slice(3, 1): an empty slice
        return y, y.sum(0), (x + 1.0) * w

    jit_and_compare(fn, [make((5, 6), torch.float32, device), make((6,), torch.float32, device)], bookend)


@pytest.mark.parametrize("bookend", [False, True])
def test_cat_with_empty_inputs(bookend, device):
    def fn(past, k, extra):
        t = torch.cat([past, k, extra], 1)
        return torch.exp(t * 0.5), -torch.cat([past, past], 1)

    args = [make((2, 0, 8), torch.float32, device), make((2, 3, 8), torch.float32, device),
            make((2, 1, 8), torch.float32, device)]
    jit_and_compare(fn, args, bookend)


@pytest.mark.parametrize("bookend", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_llama_rope(bookend, dtype, device):
    B, T, H, D = 2, 16, 4, 8

    def fn(qkv, cos, sin):
        q, k, v = qkv.split(H * D, dim=-1)
        q = q.view(B, T, H, D).permute(0, 2, 1, 3)
        k = k.view(B, T, H, D).permute(0, 2, 1, 3)

        def rotate(x):
            x1, x2 = x[..., : D // 2], x[..., D // 2:]
            return torch.cat((-x2, x1), dim=-1)

        q = q * cos + rotate(q) * sin
        k = k * cos + rotate(k) * sin
        return q, k, v.view(B, T, H, D).transpose(1, 2)

    args = [make((B, T, 3 * H * D), dtype, device), make((T, D), dtype, device), make((T, D), dtype, device)]
    if dtype == torch.float32:
        jit_and_compare(fn, args, bookend)
        return
    # bf16: eager rounds each op's result. Rounding where Thunder's decomposition does gives eager's
    # values; keeping float32 there (the default) is as close to float64 as eager or closer (the
    # oracle below). Against eager itself the default may differ by a few bf16 steps of the
    # products where q * cos and rotate(q) * sin cancel.
    jit_and_compare(fn, args, bookend, atol=2e-2, rtol=2e-2, vf_keep_round_trips=True)
    jfn, _ = jit_and_compare(fn, args, bookend, atol=0.08, rtol=2e-2)
    exact = fn(*[a.double() for a in args])
    for got, eager, want in zip(jfn(*args), fn(*args), exact):
        assert (got.double() - want).abs().max() <= (eager.double() - want).abs().max()


class Block(torch.nn.Module):
    """nanoGPT's transformer block (causal self-attention and MLP)."""

    def __init__(self, n_embd=32, n_head=4, block_size=16):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = torch.nn.LayerNorm(n_embd)
        self.c_attn = torch.nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = torch.nn.Linear(n_embd, n_embd)
        self.ln_2 = torch.nn.LayerNorm(n_embd)
        self.c_fc = torch.nn.Linear(n_embd, 4 * n_embd)
        self.mlp_proj = torch.nn.Linear(4 * n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = torch.nn.functional.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


@pytest.mark.parametrize("bookend", [False, True])
def test_nanogpt_block(bookend, device):
    torch.manual_seed(0)
    block = Block().to(device).requires_grad_(False)
    x = make((2, 16, 32), torch.float32, device)
    jfn, _ = jit_and_compare(block, [x], bookend, atol=1e-4, rtol=1e-4, min_regions=2)
    assert {"linear", "matmul"} <= _left_to_torch(thunder.last_traces(jfn)[-1])  # torch's, by default
    jfn, _ = jit_and_compare(block, [x], bookend, atol=1e-4, rtol=1e-4, vf_matmul=True)
    left = _left_to_torch(thunder.last_traces(jfn)[-1])
    if device == "cuda":  # the linears and matmuls run in the regions (cuBLASLt)
        assert not left & {"linear", "matmul"}, left
    else:  # the CPU keeps torch's BLAS
        assert {"linear", "matmul"} <= left


def _left_to_torch(trace) -> set[str]:
    """The names of the symbols of an execution trace that run outside viewfuse's regions."""
    return {b.sym.name for b in trace.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}


def test_region_inputs_are_only_what_the_ops_read():
    def fn(x, unused):
        return x[3:1] * 2, unused.sum()

    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    jfn(torch.randn(5, 6), torch.randn(3))
    trace = thunder.last_traces(jfn)[-1]
    for bsym in trace.bound_symbols:
        if bsym.sym.name.startswith("viewfuse"):
            text, inputs = region_trace(bsym.subsymbols, list(bsym.flat_outs))
            assert {p.name for p in inputs} == {p.name for p in bsym.flat_args}
            for p in inputs:
                assert text.count(p.name) >= 3  # the signature, its annotation and a use


def test_region_viewfuse_rejects_stays_with_other_executors(monkeypatch):
    import viewfuse
    import viewfuse.thunder as vft

    def reject(text, **options):
        raise viewfuse.UserError("rejected for the test")

    monkeypatch.setattr(vft, "_vf_from_trace", reject)
    monkeypatch.setattr(viewfuse_ex, "_definitions", {})

    def fn(x):
        return x.permute(1, 0).reshape(-1) * 2

    x = torch.randn(4, 6)
    with pytest.warns(UserWarning, match="viewfuse left a region of .* unfused: rejected for the test"):
        jfn = thunder.jit(fn, executors=[viewfuse_ex])
        got = jfn(x)
    assert torch.equal(got, fn(x))
    assert "viewfuse" not in str(thunder.last_traces(jfn)[-1])


def test_region_input_in_another_dtype_is_converted_with_a_warning(device):
    """A region input that another executor returned in another dtype than Thunder's metadata
    (Inductor's nll_loss_backward gives float32 for bfloat16 inputs, where eager gives bfloat16) is
    converted to the declared dtype inside the region; a plain FusionDefinition still refuses it."""
    import viewfuse
    from viewfuse.fusion_definition import from_trace

    text = """def region(g, s):
  # g: "cpu bf16[4, 6]"
  # s: "cpu f32[4, 6]"
  t0 = prims.convert_element_type(g, dtypes.float32)
  t1 = prims.mul(t0, s)
  return (t1, )
"""
    g32 = make((4, 6), torch.float32, device)
    s = make((4, 6), torch.float32, device)
    fd = from_trace(text, convert_inputs=True)
    with pytest.warns(UserWarning, match="input g arrived as float32 where the trace declares bfloat16"):
        (got,) = fd.execute([g32, s])
    torch.testing.assert_close(got, g32.to(torch.bfloat16).float() * s, rtol=0, atol=0)
    (again,) = fd.execute([g32.to(torch.bfloat16), s])  # the declared dtype: its own compiled fusion
    torch.testing.assert_close(again, got, rtol=0, atol=0)
    assert fd.cache_size == 2
    with pytest.raises(viewfuse.UserError, match="input 'g' expects bf16\\[4, 6\\], got f32\\[4, 6\\]"):
        from_trace(text).execute([g32, s])


def test_default_executors_with_inductor_cross_entropy_train():
    """nanoGPT in bfloat16 with Thunder's torchcompile_xentropy executor after viewfuse (made to
    claim CPU tensors here; it claims CUDA ones): the step trains, its loss and gradients as eager's.
    viewfuse claims cross-entropy's backward (nll_loss_backward) first; when xentropy had it, its
    region returned float32 where the trace says bfloat16 (the conversion is tested above)."""
    from thunder.executors import torch_compile as tc
    from thunder.extend import ImplInfo
    from thunder.tests import nanogpt_model

    xent = tc.TorchCompileExecutor(name="xentropy_cpu", required_ops=tc.torch_compile_xentropy_ex.required_ops)
    xent._implmap = {op: ImplInfo() for op in tc.torch_compile_xentropy_ex._implmap}
    cfg = nanogpt_model.GPTConfig(block_size=16, vocab_size=64, n_layer=1, n_head=2, n_embd=32, dropout=0.0)
    torch.manual_seed(0)
    model = nanogpt_model.GPT(cfg).to(torch.bfloat16)
    idx = torch.randint(0, 64, (2, 16))
    targets = torch.randint(0, 64, (2, 16))

    def step(fn):
        _, loss = fn(idx, targets)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad(set_to_none=True)
        return loss, grads

    want_loss, want = step(model)
    jmodel = thunder.jit(model, executors=[viewfuse_ex, xent])
    loss, got = step(jmodel)
    bw = thunder.last_backward_traces(jmodel)[-1]
    assert "nll_loss_backward" in {s.sym.name for b in bw.bound_symbols if b.sym.is_fusion and b.sym.executor is viewfuse_ex
                                   for s in b.subsymbols}, str(bw)
    torch.testing.assert_close(loss, want_loss, rtol=2e-2, atol=2e-2)
    for name, g in want.items():
        assert got[name].dtype == g.dtype, name
        torch.testing.assert_close(got[name], g, rtol=5e-2, atol=5e-2, msg=name)


@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_bf16_gelu_keeps_float32_between_steps(approximate, device):
    """Thunder decomposes a bf16 GELU into float32 steps, each rounded to bf16 and widened again.
    By default viewfuse keeps the float32 values there (docs/design.md, "Round trips through
    16-bit floats"): its error against float64 is eager's (one rounding at the end); with
    vf_keep_round_trips=True it rounds after every step, as the decomposition says."""
    x = make((64, 1024), torch.bfloat16, device, low=-5.0, high=5.0)
    fn = lambda t: torch.nn.functional.gelu(t, approximate=approximate)  # noqa: E731
    exact = fn(x.double())

    def error(out):  # mean absolute error: the max is the last rounding of the largest values
        return (out.double() - exact).abs().mean().item()

    eager = error(fn(x))
    kept = error(thunder.jit(fn, executors=[viewfuse_ex])(x))
    rounded = error(thunder.jit(fn, executors=[viewfuse_ex], vf_keep_round_trips=True)(x))
    assert kept <= eager * 1.02, (kept, eager)
    assert rounded > 1.3 * eager, (rounded, eager)


def test_creation_ops_fuse_with_the_ops_they_feed(device):
    """full and iota (arange, full_like, zeros_like, zeros) are computed inside the region that
    reads them; creation ops with no tensor op beside them stay with torch, without a warning."""
    import warnings

    def fn(x):
        pos = torch.arange(x.shape[-1], device=x.device, dtype=torch.float32)
        return x * pos + torch.full_like(x, 2.0) + torch.zeros_like(x), torch.zeros(3, device=x.device)

    x = make((4, 8), torch.float32, device)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        jfn, trace = jit_and_compare(fn, [x], False)
        alone = thunder.jit(lambda t: torch.zeros(3, device=t.device), executors=[viewfuse_ex])
        torch.testing.assert_close(alone(x), torch.zeros(3, device=device))
    fused = [b for b in thunder.last_traces(jfn)[-1].bound_symbols if b.sym.is_fusion]
    assert len(fused) == 1, trace
    assert {"arange", "full_like", "zeros_like", "zeros"} <= {s.sym.name for s in fused[0].subsymbols}, trace
    assert not any(b.sym.is_fusion for b in thunder.last_traces(alone)[-1].bound_symbols)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cpu_scalar_tensor_operand_is_a_number(dtype, device):
    """A 0-dim CPU tensor beside a larger tensor (Thunder's prims take it as a number, on any
    device) is a number input of the region: one region, eager's values."""
    def fn(x, s, i):
        return x * s + i, torch.where(x > 0, s, x)

    x = make((4, 6), dtype, device)
    s = torch.tensor(1.75, dtype=dtype)
    i = torch.tensor(3, dtype=dtype)
    jfn, trace = jit_and_compare(fn, [x, s, i], False, atol=1e-2 if dtype == torch.bfloat16 else 1e-5, rtol=1e-2)
    fused = [b for b in thunder.last_traces(jfn)[-1].bound_symbols if b.sym.is_fusion]
    assert len(fused) == 1, trace
    got = jfn(x, torch.tensor(-2.0, dtype=dtype), i)  # the value is read at every call
    torch.testing.assert_close(got[0], fn(x, torch.tensor(-2.0, dtype=dtype), i)[0], atol=1e-2, rtol=1e-2)


def test_contiguous_inside_a_region_and_as_its_output(device):
    """x.t().contiguous() (prims.stride_order) is the input's values inside a region, which stays
    one region; returned, it has the memory order asked for, as eager's."""
    x = make((6, 4), torch.float32, device)
    jfn, trace = jit_and_compare(lambda t: t.t().contiguous() * 2, [x], False)
    assert sum(b.sym.is_fusion for b in thunder.last_traces(jfn)[-1].bound_symbols) == 1, trace
    back = thunder.jit(lambda t: (t.t().contiguous(), t.t() + 1), executors=[viewfuse_ex])
    got, plus = back(x)
    assert got.is_contiguous() and torch.equal(got, x.t().contiguous()), got.stride()
    torch.testing.assert_close(plus, x.t() + 1)


def test_clone_inside_a_region_and_as_its_output(device):
    """clone is the input's values inside a region; returned, it never shares an input's storage."""
    x = make((6, 4), torch.float32, device)
    jfn, trace = jit_and_compare(lambda t: (t.clone() * 2, t.clone()), [x], False)
    assert sum(b.sym.is_fusion for b in thunder.last_traces(jfn)[-1].bound_symbols) == 1, trace
    doubled, copy = jfn(x)
    assert copy.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert torch.equal(copy, x)


@pytest.mark.parametrize("reduction,weighted,ignore_index,shape", [
    ("mean", False, -100, (6, 5)), ("mean", True, 2, (6, 5)), ("sum", True, -100, (3, 5, 4)), ("none", False, 1, (6, 5)),
    ("mean", False, -100, (5,))])
def test_cross_entropy_backward_fuses(device, reduction, weighted, ignore_index, shape):
    """nll_loss's gradient (Thunder's nll_loss_backward, which has no prims) runs inside a viewfuse
    region with the log-softmax backward, none of it left to torch; the input gradient equals
    eager's, with a class weight, an ignored target inside and outside the classes, rank 1 and 3."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    classes = shape[1] if len(shape) > 1 else shape[0]
    logits = torch.randn(shape, device=device, requires_grad=True)
    target = torch.randint(0, classes, shape[:1] + shape[2:] if len(shape) > 1 else (), device=device)
    if target.ndim:
        target.view(-1)[0] = ignore_index
    weight = torch.rand(classes, device=device) + 0.5 if weighted else None

    def fn(x, t, w):
        return F.cross_entropy(x, t, weight=w, ignore_index=ignore_index, reduction=reduction)

    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    got, want = jfn(logits, target, weight), fn(logits, target, weight)
    torch.testing.assert_close(got, want)
    g_out = torch.rand_like(want) + 0.5
    torch.testing.assert_close(torch.autograd.grad(got, logits, g_out)[0], torch.autograd.grad(want, logits, g_out)[0],
                               atol=1e-6, rtol=1e-5)
    bw = thunder.last_backward_traces(jfn)[-1]
    left = {b.sym.name for b in bw.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert "nll_loss_backward" not in left, str(bw)
    fused = {s.sym.name for b in bw.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert "nll_loss_backward" in fused, str(bw)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_argmax_argmin_match_torch(device, dtype):
    """torch.argmax and torch.argmin (Thunder's prims, which the trace reader writes as an extreme
    and the least index reaching it) in a viewfuse region, equal to torch's: ties pick the first
    index, a NaN counts as the extreme, every dim and none, keepdim."""
    torch.manual_seed(0)
    x = torch.randint(-3, 4, (6, 40, 33), device=device).to(dtype)
    if dtype.is_floating_point:
        x.view(-1)[::97] = float("nan")

    def fn(t):
        return (torch.argmax(t, 1), torch.argmin(t, -1), torch.argmax(t, 0, keepdim=True), torch.argmin(t),
                torch.argmax(t * 2, 2))

    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    for got, want in zip(jfn(x), fn(x)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got, want)
    trace = thunder.last_traces(jfn)[-1]
    left = {b.sym.name for b in trace.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert not left & {"argmax", "argmin"}, str(trace)


def test_embedding_and_cross_entropy_pick_fuse(device):
    """F.embedding (prims.take, with its positions' arange) and cross-entropy's pick of each row's
    target (take_along_dim) run inside viewfuse regions, none left to torch; the loss and the
    gradients equal eager's. In the backward, the embeddings' gradients (embedding_backward) and
    the gather's (scatter_add) run in viewfuse regions too."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    wte = torch.randn(50, 16, device=device, requires_grad=True)
    wpe = torch.randn(8, 16, device=device, requires_grad=True)

    def fn(ids, target):
        pos = torch.arange(0, ids.shape[1], device=ids.device)
        x = F.embedding(ids, wte) + F.embedding(pos, wpe)
        logits = (torch.tanh(x) @ wte.t()).view(-1, 50)
        return F.cross_entropy(logits, target.view(-1)), F.log_softmax(logits, -1).gather(1, target.view(-1, 1))

    ids = torch.randint(0, 50, (2, 8), device=device)
    target = torch.randint(0, 50, (2, 8), device=device)
    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    (loss, picked), (want_loss, want_picked) = jfn(ids, target), fn(ids, target)
    torch.testing.assert_close(loss, want_loss)
    torch.testing.assert_close(picked, want_picked)
    got_grads = torch.autograd.grad(loss, (wte, wpe))
    want_grads = torch.autograd.grad(want_loss, (wte, wpe))
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
    trace = thunder.last_traces(jfn)[-1]
    left = {b.sym.name for b in trace.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert not left & {"embedding", "take_along_dim", "arange", "gather", "take", "take_along_axis"}, str(trace)
    fused = {s.sym.name for b in trace.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert {"embedding", "take_along_dim", "gather"} <= fused, str(trace)
    backward = thunder.last_backward_traces(jfn)[-1]
    left = {b.sym.name for b in backward.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert not left & {"embedding_backward", "scatter_add", "index_add"}, str(backward)
    fused = {s.sym.name for b in backward.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert {"embedding_backward", "scatter_add"} <= fused, str(backward)


def test_cumsum_and_frexp_fuse(device):
    """torch.cumsum (with its backward, a flip, a cumsum and a flip) and torch.frexp run inside
    viewfuse regions with their neighbours; values and the gradient equal eager's."""
    torch.manual_seed(2)
    w = torch.randn(4, 33, device=device, requires_grad=True)

    def fn(x):
        c = torch.cumsum(torch.exp(x) * w, 1)
        m, e = torch.frexp(c)
        return c * 0.5, m + e

    x = torch.randn(4, 33, device=device)
    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    (got, got_me), (want, want_me) = jfn(x), fn(x)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_me, want_me)
    g = torch.randn_like(want)
    torch.testing.assert_close(torch.autograd.grad(got, w, g)[0], torch.autograd.grad(want, w, g)[0])
    for trace in (thunder.last_traces(jfn)[-1], thunder.last_backward_traces(jfn)[-1]):
        left = {b.sym.name for b in trace.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
        assert not left & {"cumsum", "frexp", "flip"}, str(trace)
    fused = {s.sym.name for b in thunder.last_traces(jfn)[-1].bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert {"cumsum", "frexp"} <= fused


def _small_step(model_name: str, device: str):
    """Thunder's nanoGPT or Llama test model at a small size in f32 on `device`, a training step's
    loss function of it (cross-entropy over a 512 vocabulary) and its arguments."""
    import torch.nn.functional as F
    from thunder.tests import llama2_model, nanogpt_model

    torch.manual_seed(0)
    if model_name == "nanogpt":
        cfg = nanogpt_model.GPTConfig(block_size=64, vocab_size=512, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
        model = nanogpt_model.GPT(cfg).to(device)
    else:
        args = llama2_model.ModelArgs(dim=64, n_layers=2, n_heads=4, vocab_size=512, max_seq_len=64, dropout=0.0)
        model = llama2_model.Transformer(args).to(device)

    def step(idx, targets):
        out = model(idx, targets)
        logits, loss = out if isinstance(out, tuple) else (out, None)
        return loss if loss is not None else F.cross_entropy(logits.view(-1, 512), targets.view(-1))

    idx, targets = (torch.randint(0, 512, (2, 64), device=device) for _ in range(2))
    return model, step, (idx, targets)


def _check_step(model, step, args, executors, **options):
    """Runs `step` through Thunder with `executors` (and compile options) and checks the loss and
    every gradient against eager's; returns the jitted step."""
    jstep = thunder.jit(step, executors=executors, **options)
    loss = jstep(*args)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    want = step(*args)
    want_grads = torch.autograd.grad(want, list(model.parameters()))
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    for g, w in zip(grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    return jstep


@pytest.mark.parametrize("model_name", ["nanogpt", "llama2"])
def test_model_step_leaves_only_matmuls_to_torch(model_name):
    """A training step (forward, cross-entropy loss, backward) of Thunder's nanoGPT and Llama test
    models at small sizes in f32: every op but the matmuls and linears (torch's BLAS on the CPU;
    on CUDA viewfuse claims them with vf_matmul=True, the test below) runs in viewfuse regions, in the forward and in
    the backward (the embeddings and their gradients, positions, norms, RoPE, attention's softmax,
    cross-entropy and its backward); the
    loss and every gradient equal eager's. On the CPU only: there Thunder writes attention as
    matmuls and a softmax; on CUDA it may keep scaled_dot_product_attention whole (with the sdpa
    executor of the model-step benchmark it does), which this set of names does not cover."""
    jstep = _check_step(*_small_step(model_name, "cpu"), [viewfuse_ex])
    for trace in (thunder.last_traces(jstep)[-1], thunder.last_backward_traces(jstep)[-1]):
        assert _left_to_torch(trace) <= {"linear", "matmul", "clear_mutable_collection"}, str(trace)


@pytest.mark.parametrize("model_name", ["nanogpt", "llama2"])
def test_model_step_on_cuda_runs_everything_in_regions(model_name):
    """The same training step on CUDA with the sdpa executor (as the model-step benchmark runs it)
    and vf_matmul=True: the linears and matmuls, forward and backward, are in viewfuse regions
    (cuBLASLt calls, linear's bias in the call), only attention stays with sdpa (viewfuse, first in
    the list, does not claim it through its matmuls and softmax: a flash kernel never writes the
    T x T scores; nor whole, in float32, where torch's own choice is not cuDNN), and the loss and
    every gradient equal eager's (float32 without TF32 on both sides)."""
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA: on the CPU viewfuse leaves matmuls to torch (the test above)")
    sdpa = thunder.get_executor("sdpa")
    jstep = _check_step(*_small_step(model_name, "cuda"), [viewfuse_ex, sdpa], vf_matmul=True)
    for trace in (thunder.last_traces(jstep)[-1], thunder.last_backward_traces(jstep)[-1]):
        left = _left_to_torch(trace)
        assert not left & {"linear", "matmul"}, str(trace)
        assert any(b.sym.executor is sdpa for b in trace.bound_symbols), str(trace)


def test_deterministic_scatters_repeat_bit_for_bit(device):
    """With vf_deterministic=True an embedding's weight gradient (many repeated ids) is the same
    bits on every run, and eager's within rounding."""
    import torch.nn.functional as F

    torch.manual_seed(1)
    wte = torch.randn(20, 64, device=device, requires_grad=True)
    ids = torch.randint(0, 20, (4, 256), device=device)
    g = torch.randn(4, 256, 64, device=device)

    def fn(ids):
        return F.embedding(ids, wte) * 2

    jfn = thunder.jit(fn, executors=[viewfuse_ex], vf_deterministic=True)
    grads = [torch.autograd.grad(jfn(ids), wte, g)[0] for _ in range(3)]
    want = torch.autograd.grad(fn(ids), wte, g)[0]
    for got in grads:
        assert torch.equal(got, grads[0])
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-5)
    backward = thunder.last_backward_traces(jfn)[-1]
    fused = {s.sym.name for b in backward.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert "embedding_backward" in fused, str(backward)


def _philox4x32_10(c0, c1, c2, c3, key):
    """Philox4x32-10 (Salmon et al.) over numpy uint64 arrays holding 32-bit words: the test's own
    oracle for viewfuse's uniform_philox (ir.h states the mapping)."""
    import numpy as np

    m32 = np.uint64(0xFFFFFFFF)
    k0, k1 = np.uint64(key & 0xFFFFFFFF), np.uint64(key >> 32)
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m32
    return c0, c1, c2, c3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_uniform_philox_matches_an_independent_philox(device, dtype):
    """thunder.torch.uniform_philox with int seed and offset runs in a viewfuse region and gives,
    for every element, the value a numpy Philox4x32-10 gives for its row-major position."""
    import numpy as np
    import thunder.torch as ltorch

    shape, seed, offset = (7, 33), 0x123456789, 5

    def fn(x):
        u = ltorch.uniform_philox(shape, 0.0, 1.0, device=x.device, dtype=x.dtype, seed=seed, offset=offset)
        return u, x + u

    x = torch.zeros(shape, device=device, dtype=dtype)
    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    u, y = jfn(x)
    i = np.arange(7 * 33, dtype=np.uint64)
    per_block = 4 if dtype == torch.float32 else 2
    block = i // np.uint64(per_block)
    words = _philox4x32_10(block & np.uint64(0xFFFFFFFF), block >> np.uint64(32),
                           np.full_like(i, offset & 0xFFFFFFFF), np.full_like(i, offset >> 32), seed)
    words = np.stack(words, axis=1)
    if dtype == torch.float32:
        want = (words[np.arange(i.size), i % np.uint64(4)] >> np.uint64(8)).astype(np.float64) * 2.0**-24
    else:
        lane = (i % np.uint64(2)).astype(np.int64) * 2
        hi, lo = words[np.arange(i.size), lane], words[np.arange(i.size), lane + 1]
        want = ((hi << np.uint64(32) | lo) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    assert torch.equal(u.cpu().double().flatten(), torch.from_numpy(want))
    assert torch.equal(y, u)
    trace = thunder.last_traces(jfn)[-1]
    fused = {s.sym.name for b in trace.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert "uniform_philox" in fused, str(trace)


def test_dropout_fuses_and_backward_reuses_the_mask(device):
    """F.dropout in training through Thunder: its uniform becomes uniform_philox inside a viewfuse
    region (seed and offset from torch's CUDA generator), none left to torch; the backward uses the
    forward's mask (y == x * dy/dx for the loss 2 * y.sum()), about 1 - p of the elements are kept,
    and two calls draw different masks."""
    if device != "cuda":
        pytest.skip("Thunder's get_and_update_rng_state reads torch's CUDA generator only; "
                    "on the CPU uniform stays with torch (tested above: uniform_philox with int seed)")
    import torch.nn.functional as F

    p = 0.25

    def fn(x, w):
        y = F.dropout(x * w, p=p)
        return y, (y * 2).sum()

    torch.manual_seed(0)
    x = torch.randn(64, 1000, device=device, requires_grad=True)
    w = torch.randn(64, 1000, device=device)
    jfn = thunder.jit(fn, executors=[viewfuse_ex])
    y, loss = jfn(x, w)
    loss.backward()
    dx = x.grad
    assert torch.allclose(y, x.detach() * dx / 2, rtol=1e-6, atol=1e-6)
    kept = (dx != 0).double().mean().item()
    assert abs(kept - (1 - p)) < 0.01, kept
    assert torch.allclose(dx[dx != 0], (2 * w / (1 - p))[dx != 0])
    y2, _ = jfn(x, w)
    assert not torch.equal(y2 != 0, y != 0)
    trace = thunder.last_traces(jfn)[-1]
    left = {b.sym.name for b in trace.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert not left & {"uniform", "uniform_philox", "philox_rand"}, str(trace)
    fused = {s.sym.name for b in trace.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert "uniform_philox" in fused, str(trace)
    # Rematerialization draws the mask again in the backward's region from the seed and offset
    # (two numbers) instead of saving it: H100, 2026-12-06, only w is saved for the backward.
    bw = thunder.last_backward_traces(jfn)[-1]
    recomputed = {s.sym.name for b in bw.bound_symbols if b.sym.is_fusion for s in b.subsymbols}
    assert "uniform_philox" in recomputed, str(bw)


def test_nanogpt_dropout_fuses(device):
    """A nanoGPT (Thunder's test model) with dropout 0.1 trains through Thunder with viewfuse: every
    F.dropout (embedding, attention output, MLP) draws its mask in a viewfuse region, none left to
    torch, and the backward draws masks again rather than saving them."""
    if device != "cuda":
        pytest.skip("Thunder's get_and_update_rng_state reads torch's CUDA generator only")
    from thunder.tests import nanogpt_model

    cfg = nanogpt_model.GPTConfig(block_size=32, vocab_size=64, n_layer=2, n_head=2, n_embd=64, dropout=0.1)
    torch.manual_seed(0)
    model = nanogpt_model.GPT(cfg).to(device)
    idx = torch.randint(0, 64, (4, 32), device=device)
    jmodel = thunder.jit(model, executors=[viewfuse_ex])
    _, loss = jmodel(idx, idx)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    fw = thunder.last_traces(jmodel)[-1]
    left = {b.sym.name for b in fw.bound_symbols if b.sym.executor is not None and not b.sym.is_fusion}
    assert not left & {"uniform", "uniform_philox", "philox_rand", "dropout"}, str(fw)
    fused = [s.sym.name for b in fw.bound_symbols if b.sym.is_fusion for s in b.subsymbols]
    assert fused.count("uniform_philox") >= 1 + 2 * cfg.n_layer, fused
    bw = thunder.last_backward_traces(jmodel)[-1]
    recomputed = [s.sym.name for b in bw.bound_symbols if b.sym.is_fusion for s in b.subsymbols]
    # H100, 2026-12-06: 7 in the forward, 5 of them drawn again in the backward instead of saved.
    assert recomputed.count("uniform_philox") >= 1, recomputed
