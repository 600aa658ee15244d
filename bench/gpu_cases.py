"""The cases of bench/gpu_bench.py: each a Thunder-style trace for viewfuse and the same program
in PyTorch (eager, and under torch.compile), at full size or at --quick size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

SHORT = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", torch.float64: "f64",
         torch.int64: "i64", torch.bool: "b8"}
LONG = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}
GELU_C = 0.7978845608028654  # sqrt(2 / pi)


@dataclass
class Case:
    name: str
    group: str  # "memory" (GPU time, % of ceiling), "einsum" (wall time), "host" (host time per call)
    what: str  # one line for the table
    inputs: Callable[[torch.device], list]  # fresh random inputs
    eager: Callable  # (*inputs) -> tensor or tuple of tensors
    trace: str | None = None  # viewfuse: one fusion from this trace ...
    viewfuse: Callable | None = None  # ... or a builder: (vf) -> callable(*inputs) (einsum cases)
    target: float = 0.90  # fraction of the copy ceiling the issue asks for (memory group)
    tol: tuple[float, float] = (1e-4, 1e-5)  # rtol, atol against eager
    reference_us: tuple | None = None  # (eager, compile) of REFERENCE.md section 5, when listed
    # Issue 25's bound against eager (torch's cuBLAS call): viewfuse us <= eager us * factor + slack us.
    bound: tuple[float, float] | None = None


class Trace:
    """Builds trace text: `t = tr.op("prims.add", a, b)` appends a line and returns a fresh name."""

    def __init__(self, name: str, inputs: list[tuple[str, torch.dtype, tuple]]):
        self.lines = [f"def {name}({', '.join(n for n, _, _ in inputs)}):"]
        for n, dt, shape in inputs:
            self.lines.append(f'  # {n}: "cuda:0 {SHORT[dt]}[{", ".join(str(s) for s in shape)}]"')
        self.count = 0

    def op(self, callee: str, *args, outputs: int = 1) -> str | tuple[str, ...]:
        names = [f"t{self.count + i}" for i in range(outputs)]
        self.count += outputs
        text = ", ".join(a if isinstance(a, str) else repr(a) for a in args)
        lhs = names[0] if outputs == 1 else "(" + ", ".join(names) + ")"
        self.lines.append(f"  {lhs} = {callee}({text})")
        return names[0] if outputs == 1 else tuple(names)

    def __getattr__(self, prim: str):
        return lambda *args, **kw: self.op("prims." + prim, *args, **kw)

    def convert(self, x: str, dtype: torch.dtype) -> str:
        return self.op("prims.convert_element_type", x, f"dtypes.{LONG[dtype]}")

    def gelu_tanh(self, a: str) -> str:  # 0.5 * a * (1 + tanh(c * (a + 0.044715 * a^3))), in f32
        cube = self.mul(self.mul(a, a), a)
        inner = self.mul(GELU_C, self.add(a, self.mul(0.044715, cube)))
        return self.mul(self.mul(0.5, a), self.add(1.0, self.tanh(inner)))

    def layer_norm(self, x32: str, w: str, b: str, shape: tuple, eps: float = 1e-5) -> str:
        """Layer norm over the last dim of an f32 value; w and b are the low-precision weights."""
        last = len(shape) - 1
        keep = tuple(range(last))
        var, mean = self.var_mean(x32, (last,), "correction=0", outputs=2)
        rstd = self.rsqrt(self.add(var, eps))
        centered = self.sub(x32, self.broadcast_in_dim(mean, shape, keep))
        normed = self.mul(centered, self.broadcast_in_dim(rstd, shape, keep))
        wb = self.broadcast_in_dim(self.convert(w, torch.float32), shape, (last,))
        bb = self.broadcast_in_dim(self.convert(b, torch.float32), shape, (last,))
        return self.add(self.mul(normed, wb), bb)

    def text(self, *outputs: str) -> str:
        return "\n".join(self.lines + [f"  return ({''.join(o + ', ' for o in outputs)})"]) + "\n"


def _rand(dev, shape, dtype=torch.bfloat16, scale=1.0):
    return (torch.randn(shape, device=dev, dtype=torch.float32) * scale).to(dtype)


# ---- memory-bound cases (REFERENCE.md section 5 and the additions) ----

def merge_heads_producer(q: bool) -> Case:
    B, H, S, D = (2, 4, 64, 32) if q else (16, 32, 2048, 128)
    tr = Trace("merge_heads_producer", [("x", torch.bfloat16, (B, H, S, D))])
    t = tr.reshape(tr.transpose(tr.add(tr.mul("x", 0.125), 1.0), (0, 2, 1, 3)), (B, S, H * D))
    return Case("merge_heads_producer", "memory", f"(x*s+1).permute(0,2,1,3).reshape, bf16 [{B},{H},{S},{D}]",
                lambda d: [_rand(d, (B, H, S, D))],
                lambda x: (x * 0.125 + 1).permute(0, 2, 1, 3).reshape(B, S, H * D),
                trace=tr.text(t), tol=(2e-2, 2e-2), reference_us=(815, 132))


def merge_heads_consumer(q: bool) -> Case:
    B, H, S, D = (2, 4, 64, 32) if q else (16, 32, 2048, 128)
    tr = Trace("merge_heads_consumer", [("x", torch.bfloat16, (B, H, S, D))])
    m = tr.convert(tr.reshape(tr.transpose("x", (0, 2, 1, 3)), (B, S, H * D)), torch.float32)
    t = tr.convert(tr.gelu_tanh(m), torch.bfloat16)
    return Case("merge_heads_consumer", "memory", f"gelu_tanh(x.permute(0,2,1,3).reshape), bf16 [{B},{H},{S},{D}]",
                lambda d: [_rand(d, (B, H, S, D))],
                lambda x: F.gelu(x.permute(0, 2, 1, 3).reshape(B, S, H * D), approximate="tanh"),
                trace=tr.text(t), tol=(2e-2, 2e-2), reference_us=(510, 179))


def transpose_add(q: bool) -> Case:
    N = 256 if q else 8192
    tr = Trace("transpose_add", [("x", torch.float32, (N, N)), ("y", torch.float32, (N, N))])
    t = tr.add(tr.transpose("x", (1, 0)), "y")
    return Case("transpose2d_add", "memory", f"x.t() + y, f32 [{N},{N}]",
                lambda d: [_rand(d, (N, N), torch.float32), _rand(d, (N, N), torch.float32)],
                lambda x, y: x.t() + y, trace=tr.text(t), target=0.85, reference_us=(596, 138))


def _norm_shape(q: bool):
    return (64, 256) if q else (16384, 4096)


def layer_norm(q: bool) -> Case:
    N, C = _norm_shape(q)
    tr = Trace("layer_norm", [("x", torch.bfloat16, (N, C)), ("w", torch.bfloat16, (C,)), ("b", torch.bfloat16, (C,))])
    t = tr.convert(tr.layer_norm(tr.convert("x", torch.float32), "w", "b", (N, C)), torch.bfloat16)
    return Case("layer_norm", "memory", f"layer_norm, bf16 [{N},{C}]",
                lambda d: [_rand(d, (N, C)), _rand(d, (C,)), _rand(d, (C,))],
                lambda x, w, b: F.layer_norm(x, (C,), w, b), trace=tr.text(t), target=0.85, tol=(2e-2, 2e-2),
                reference_us=(107, 97))


def rms_norm(q: bool) -> Case:
    N, C = _norm_shape(q)
    tr = Trace("rms_norm", [("x", torch.bfloat16, (N, C)), ("w", torch.bfloat16, (C,))])
    x32 = tr.convert("x", torch.float32)
    ms = tr.div(tr.sum(tr.mul(x32, x32), (1,)), float(C))
    rstd = tr.broadcast_in_dim(tr.rsqrt(tr.add(ms, 1e-6)), (N, C), (0,))
    wb = tr.broadcast_in_dim(tr.convert("w", torch.float32), (N, C), (1,))
    t = tr.convert(tr.mul(tr.mul(x32, rstd), wb), torch.bfloat16)

    def eager(x, w):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)

    return Case("rms_norm", "memory", f"rms_norm (f32 math), bf16 [{N},{C}]",
                lambda d: [_rand(d, (N, C)), _rand(d, (C,))], eager, trace=tr.text(t), target=0.85,
                tol=(2e-2, 2e-2), reference_us=(862, 77))


def add_layer_norm(q: bool) -> Case:
    N, C = _norm_shape(q)
    tr = Trace("add_layer_norm", [("x", torch.bfloat16, (N, C)), ("r", torch.bfloat16, (N, C)),
                                  ("w", torch.bfloat16, (C,)), ("b", torch.bfloat16, (C,))])
    h = tr.add("x", "r")
    t = tr.convert(tr.layer_norm(tr.convert(h, torch.float32), "w", "b", (N, C)), torch.bfloat16)

    def eager(x, r, w, b):
        h = x + r
        return h, F.layer_norm(h, (C,), w, b)

    return Case("add_layer_norm", "memory", f"h = x + r; layer_norm(h), bf16 [{N},{C}]",
                lambda d: [_rand(d, (N, C)), _rand(d, (N, C)), _rand(d, (C,)), _rand(d, (C,))], eager,
                trace=tr.text(h, t), target=0.85, tol=(2e-2, 2e-2), reference_us=(202, 116))


def bias_gelu(q: bool) -> Case:
    N, C = _norm_shape(q)
    tr = Trace("bias_gelu", [("x", torch.bfloat16, (N, C)), ("b", torch.bfloat16, (C,))])
    h = tr.add("x", tr.broadcast_in_dim("b", (N, C), (1,)))
    t = tr.convert(tr.gelu_tanh(tr.convert(h, torch.float32)), torch.bfloat16)
    return Case("bias_gelu_tanh", "memory", f"gelu_tanh(x + b), bf16 [{N},{C}]",
                lambda d: [_rand(d, (N, C)), _rand(d, (C,))],
                lambda x, b: F.gelu(x + b, approximate="tanh"), trace=tr.text(t), tol=(2e-2, 2e-2),
                reference_us=(244, 92))


def causal_softmax(q: bool) -> Case:
    B, H, T = (2, 2, 128) if q else (8, 32, 2048)
    tr = Trace("causal_softmax", [("s", torch.float32, (B, H, T, T))])
    i = tr.op("prims.iota", T, "start=0", "step=1", 'device=devices.Device("cuda:0")', "dtype=dtypes.int64")
    mask = tr.ge(tr.broadcast_in_dim(i, (T, T), (0,)), tr.broadcast_in_dim(i, (T, T), (1,)))
    masked = tr.where(tr.broadcast_in_dim(mask, (B, H, T, T), (2, 3)), "s", "-float('inf')")
    mx = tr.broadcast_in_dim(tr.amax(masked, (3,)), (B, H, T, T), (0, 1, 2))
    e = tr.exp(tr.sub(masked, mx))
    t = tr.convert(tr.div(e, tr.broadcast_in_dim(tr.sum(e, (3,)), (B, H, T, T), (0, 1, 2))), torch.bfloat16)

    def eager(s):
        i = torch.arange(T, device=s.device)
        mask = i[:, None] >= i[None, :]
        return torch.softmax(s.masked_fill(~mask, float("-inf")), -1).to(torch.bfloat16)

    return Case("causal_softmax", "memory", f"causal masked softmax, f32 [{B},{H},{T},{T}] -> bf16",
                lambda d: [_rand(d, (B, H, T, T), torch.float32)], eager, trace=tr.text(t), target=0.85,
                tol=(2e-2, 1e-2), reference_us=(6781, 2816))


def llama_rope(q: bool) -> Case:
    B, T, nh, hs = (2, 16, 2, 16) if q else (8, 2048, 32, 128)
    half = hs // 2
    tr = Trace("llama_rope", [("qkv", torch.bfloat16, (B, T, 3 * nh * hs)), ("cos", torch.bfloat16, (T, hs)),
                              ("sin", torch.bfloat16, (T, hs))])
    q5 = tr.reshape("qkv", (B, T, 3, nh, hs))
    cos = tr.broadcast_in_dim(tr.convert("cos", torch.float32), (B, nh, T, hs), (2, 3))
    sin = tr.broadcast_in_dim(tr.convert("sin", torch.float32), (B, nh, T, hs), (2, 3))
    outs = []
    for part in (0, 1):
        s = tr.slice_prim(q5, [0, 0, part, 0, 0], [B, T, part + 1, nh, hs], [1, 1, 1, 1, 1])
        x = tr.transpose(tr.squeeze(s, (2,)), (0, 2, 1, 3))
        x1 = tr.slice_prim(x, [0, 0, 0, 0], [B, nh, T, half], [1, 1, 1, 1])
        x2 = tr.slice_prim(x, [0, 0, 0, half], [B, nh, T, hs], [1, 1, 1, 1])
        rot = tr.cat(f"[{tr.neg(x2)}, {x1}]", -1)
        y = tr.add(tr.mul(tr.convert(x, torch.float32), cos), tr.mul(tr.convert(rot, torch.float32), sin))
        outs.append(tr.convert(y, torch.bfloat16))

    def eager(qkv, cos, sin):
        q5 = qkv.view(B, T, 3, nh, hs)

        def rope(x):
            rot = torch.cat((-x[..., half:], x[..., :half]), -1)
            return (x.float() * cos.float() + rot.float() * sin.float()).to(torch.bfloat16)

        return rope(q5[:, :, 0].permute(0, 2, 1, 3)), rope(q5[:, :, 1].permute(0, 2, 1, 3))

    return Case("llama_rope", "memory", f"RoPE of q and k from qkv [{B},{T},{3 * nh * hs}] (slice, permute, cat), bf16",
                lambda d: [_rand(d, (B, T, 3 * nh * hs)), _rand(d, (T, hs)), _rand(d, (T, hs))], eager,
                trace=tr.text(*outs), tol=(2e-2, 2e-2), reference_us=(3072, 152))


def elementwise_1gib(q: bool) -> Case:
    n = 1 << 16 if q else 1 << 28  # f32: 1 GiB in, 1 GiB out
    tr = Trace("chain", [("x", torch.float32, (n,))])
    t = tr.sub(tr.mul(tr.add(tr.mul("x", 2.0), 1.0), "x"), 0.5)
    return Case("elementwise_chain_1GiB", "memory", f"((x*2+1)*x-0.5), f32 [{n}]",
                lambda d: [_rand(d, (n,), torch.float32)], lambda x: (x * 2 + 1) * x - 0.5, trace=tr.text(t),
                target=0.92)


def nanogpt_attn_out(q: bool) -> Case:
    B, nh, T, hs = (2, 4, 16, 8) if q else (16, 32, 2048, 128)
    C = nh * hs
    tr = Trace("nanogpt_attn_out", [("y", torch.bfloat16, (B, nh, T, hs)), ("x", torch.bfloat16, (B, T, C)),
                                    ("w", torch.bfloat16, (C,)), ("b", torch.bfloat16, (C,))])
    h = tr.add("x", tr.reshape(tr.transpose("y", (0, 2, 1, 3)), (B, T, C)))
    t = tr.convert(tr.layer_norm(tr.convert(h, torch.float32), "w", "b", (B, T, C)), torch.bfloat16)

    def eager(y, x, w, b):
        h = x + y.transpose(1, 2).reshape(B, T, C)
        return h, F.layer_norm(h, (C,), w, b)

    return Case("nanogpt_merge_heads_residual_ln", "memory",
                f"x + merge_heads(y); layer_norm, bf16 y [{B},{nh},{T},{hs}]",
                lambda d: [_rand(d, (B, nh, T, hs)), _rand(d, (B, T, C)), _rand(d, (C,)), _rand(d, (C,))], eager,
                trace=tr.text(h, t), target=0.85, tol=(2e-2, 2e-2))


def nanogpt_mlp_gelu(q: bool) -> Case:
    B, T, C4 = (2, 16, 128) if q else (8, 2048, 16384)
    tr = Trace("nanogpt_mlp_gelu", [("h", torch.bfloat16, (B, T, C4))])
    t = tr.convert(tr.gelu_tanh(tr.convert("h", torch.float32)), torch.bfloat16)
    return Case("nanogpt_mlp_gelu", "memory", f"gelu_tanh(fc), bf16 [{B},{T},{C4}]",
                lambda d: [_rand(d, (B, T, C4))], lambda h: F.gelu(h, approximate="tanh"), trace=tr.text(t),
                tol=(2e-2, 2e-2))


# ---- the einsum concern: view ops around torch matmuls, wall time ----

def embedding_backward(q: bool, deterministic: bool = False) -> Case:
    """nanoGPT's wte gradient: each token's bf16 gradient row added at its id's row (a scatter)."""
    B, T, V, C = (2, 64, 512, 96) if q else (8, 1024, 50304, 768)
    text = (f"def embedding_backward(g, ids):\n  # g: \"cuda:0 bf16[{B}, {T}, {C}]\"\n  # ids: \"cuda:0 i64[{B}, {T}]\"\n"
            f"  t0 = ltorch.embedding_backward(g, ids, {V}, -1, False, False)\n  return (t0,)\n")

    def build(vf):
        fd = vf.from_trace(text, deterministic=deterministic)
        return lambda *xs: fd.execute(list(xs))

    name = "embedding_backward" + ("_deterministic" if deterministic else "")
    return Case(name, "memory", f"embedding_backward, bf16 [{B},{T},{C}] into [{V},{C}]"
                + (" (viewfuse in order)" if deterministic else ""),
                lambda d: [_rand(d, (B, T, C)), torch.randint(0, V, (B, T), device=d)],
                lambda g, ids: torch.ops.aten.embedding_backward(g, ids, V, -1, False, False),
                viewfuse=build, target=0.0, tol=(2e-2, 2e-2))


def linear_case(name: str, q: bool, n: int, k: int, out: int) -> Case:
    """A bias-free linear layer of the model steps in bf16: x [n, k] @ w.T, w [out, k] (the transpose
    passed to cuBLASLt as a layout): GPU time beside torch's F.linear (cuBLAS) and torch.compile."""
    if q:
        n, k, out = 256, 128, 384
    tr = Trace(name, [("x", torch.bfloat16, (n, k)), ("w", torch.bfloat16, (out, k))])
    y = tr.op("ltorch.linear", "x", "w", "None")
    return Case(name, "memory", f"x @ w.T (linear), bf16 [{n},{k}] x [{out},{k}]",
                lambda d: [_rand(d, (n, k)), _rand(d, (out, k))], lambda x, w: F.linear(x, w), trace=tr.text(y),
                target=0.0, tol=(2e-2, 2e-2), bound=(1.03, 0.0))


def linear_bias_gelu(q: bool) -> Case:
    """nanoGPT's MLP up-projection with its bias and tanh gelu, bf16: x [n, 768] by w [3072, 768] plus
    b. viewfuse computes the bias and the gelu in the cuBLASLt call (its GELU_BIAS epilogue: one
    call, no kernel); torch runs F.linear (addmm with the bias) and F.gelu."""
    n, k, out = (256, 128, 512) if q else (8192, 768, 3072)
    tr = Trace("linear_bias_gelu", [("x", torch.bfloat16, (n, k)), ("w", torch.bfloat16, (out, k)),
                                    ("b", torch.bfloat16, (out,))])
    y = tr.op("ltorch.linear", "x", "w", "b")
    t = tr.convert(tr.gelu_tanh(tr.convert(y, torch.float32)), torch.bfloat16)
    return Case("linear_bias_gelu_nanogpt", "memory", f"gelu_tanh(x @ w.T + b), bf16 [{n},{k}] x [{out},{k}]",
                lambda d: [_rand(d, (n, k)), _rand(d, (out, k)), _rand(d, (out,))],
                lambda x, w, b: F.gelu(F.linear(x, w, b), approximate="tanh"), trace=tr.text(t), target=0.0,
                tol=(3e-2, 3e-2), bound=(1 / 1.10, 0.0))


def linear_residual(q: bool) -> Case:
    """nanoGPT's MLP down-projection and its residual, bf16, as Thunder writes them: x + (h @ w.T + b),
    h [n, 3072], w [768, 3072], x [n, 768]. viewfuse computes the sum in the cuBLASLt call (C = x with
    beta = 1, then the bias epilogue); torch runs F.linear and the add."""
    n, k, out = (256, 512, 128) if q else (8192, 3072, 768)
    tr = Trace("linear_residual", [("x", torch.bfloat16, (n, out)), ("h", torch.bfloat16, (n, k)),
                                   ("w", torch.bfloat16, (out, k)), ("b", torch.bfloat16, (out,))])
    y = tr.op("ltorch.linear", "h", "w", "b")
    t = tr.convert(tr.add(tr.convert("x", torch.float32), tr.convert(y, torch.float32)), torch.bfloat16)
    return Case("linear_residual_nanogpt", "memory", f"x + (h @ w.T + b), bf16 [{n},{k}] x [{out},{k}]",
                lambda d: [_rand(d, (n, out)), _rand(d, (n, k)), _rand(d, (out, k)), _rand(d, (out,))],
                lambda x, h, w, b: x + F.linear(h, w, b), trace=tr.text(t), target=0.0, tol=(3e-2, 3e-2))


def einsum_bij_jk_fused(n: int) -> Case:
    """einsum('bij,jk->bik') as one viewfuse fusion: reshape (a view), matmul (a library call reading
    the view as a layout), reshape back (a view of the call's result): no copy, one call."""
    tr = Trace("einsum_fused", [("x", torch.float32, (n, n, n)), ("w", torch.float32, (n, n))])
    flat = tr.reshape("x", (n * n, n))
    m = tr.matmul(flat, "w")
    out = tr.reshape(m, (n, n, n))
    return Case(f"einsum_bij_jk_fused_n{n}", "einsum", f"einsum('bij,jk->bik') in one fusion, f32 n={n}",
                lambda d: [_rand(d, (n, n, n), torch.float32), _rand(d, (n, n), torch.float32)],
                lambda x, w: torch.einsum("bij,jk->bik", x, w), trace=tr.text(out), tol=(1e-3, 1e-3),
                bound=(1.03, 0.0) if n >= 64 else None)


def einsum_fused_vs_mm(n: int) -> Case:
    """The fused einsum('bij,jk->bik') above against torch's matmul alone (torch.mm of the flat view,
    viewed back: what the einsum costs torch at the least), for the host time of a small call."""
    case = einsum_bij_jk_fused(n)
    case.name = f"einsum_bij_jk_fused_n{n}_vs_mm"
    case.what = f"einsum('bij,jk->bik') in one fusion; eager: torch.mm alone, f32 n={n}"
    case.eager = lambda x, w: torch.mm(x.view(n * n, n), w).view(n, n, n)
    case.bound = (1.0, 3.0)
    return case


def _one(vf, tr: Trace, out: str):
    fd = vf.from_trace(tr.text(out))
    return lambda *xs: fd.execute(list(xs))[0]


def einsum_bij_jk(n: int) -> Case:
    def build(vf):
        pre = Trace("pre", [("x", torch.float32, (n, n, n))])
        flat = _one(vf, pre, pre.reshape("x", (n * n, n)))
        post = Trace("post", [("m", torch.float32, (n * n, n))])
        back = _one(vf, post, post.reshape("m", (n, n, n)))
        return lambda x, w: back(torch.matmul(flat(x), w))

    return Case(f"einsum_bij_jk_n{n}", "einsum", f"einsum('bij,jk->bik'), f32 n={n}",
                lambda d: [_rand(d, (n, n, n), torch.float32), _rand(d, (n, n), torch.float32)],
                lambda x, w: torch.einsum("bij,jk->bik", x, w), viewfuse=build, tol=(1e-3, 1e-3),
                reference_us={16: (8.6, 23.0), 512: (2781, 2780)}.get(n))


def einsum_bijk_bklj(n: int) -> Case:
    def build(vf):
        px = Trace("px", [("x", torch.float32, (n, n, n, n))])
        fx = _one(vf, px, px.reshape("x", (n, n, n * n)))  # [b, i, (j k)]: a view
        py = Trace("py", [("y", torch.float32, (n, n, n, n))])
        fy = _one(vf, py, py.reshape(py.transpose("y", (0, 3, 1, 2)), (n, n * n, n)))  # [b, (j k), l]: a copy
        po = Trace("po", [("m", torch.float32, (n, n, n))])
        fo = _one(vf, po, po.transpose("m", (0, 2, 1)))  # [b, i, l] -> [b, l, i]: a view
        return lambda x, y: fo(torch.bmm(fx(x), fy(y)))

    return Case(f"einsum_bijk_bklj_n{n}", "einsum", f"einsum('bijk,bklj->bli'), f32 n={n}",
                lambda d: [_rand(d, (n, n, n, n), torch.float32), _rand(d, (n, n, n, n), torch.float32)],
                lambda x, y: torch.einsum("bijk,bklj->bli", x, y), viewfuse=build, tol=(1e-3, 1e-2),
                reference_us={16: (15.7, 44.4), 64: (218, 180)}.get(n))


def einsum_bijk_bklj_fused(n: int) -> Case:
    """einsum('bijk,bklj->bli') as one viewfuse fusion: x as [b, i, (j k)] (a view), y as [b, (j k), l]
    (a permute then a reshape: one copy kernel, as torch's one copy), the matmul a library call and
    the result's transpose a view."""
    tr = Trace("einsum_bijk_fused", [("x", torch.float32, (n, n, n, n)), ("y", torch.float32, (n, n, n, n))])
    fx = tr.reshape("x", (n, n, n * n))
    fy = tr.reshape(tr.transpose("y", (0, 3, 1, 2)), (n, n * n, n))
    out = tr.transpose(tr.matmul(fx, fy), (0, 2, 1))
    return Case(f"einsum_bijk_bklj_fused_n{n}", "einsum", f"einsum('bijk,bklj->bli') in one fusion, f32 n={n}",
                lambda d: [_rand(d, (n, n, n, n), torch.float32), _rand(d, (n, n, n, n), torch.float32)],
                lambda x, y: torch.einsum("bijk,bklj->bli", x, y), trace=tr.text(out), tol=(1e-3, 1e-2),
                bound=(1.03, 0.0) if n >= 64 else None)


# ---- host latency from Python: tiny tensors, host-bound loops ----

def host_pointwise3() -> Case:
    tr = Trace("pw3", [(n, torch.float32, (1024,)) for n in "abc"])
    t = tr.sub(tr.mul(tr.add("a", "b"), "c"), "a")
    return Case("host_pointwise3", "host", "(a+b)*c-a, f32 [1024] (one kernel)",
                lambda d: [_rand(d, (1024,), torch.float32) for _ in range(3)], lambda a, b, c: (a + b) * c - a,
                trace=tr.text(t), reference_us=(23.2, 64.9))


def host_alias_only() -> Case:
    tr = Trace("views", [("x", torch.float32, (2, 16, 8, 16))])
    t = tr.transpose(tr.reshape("x", (2, 16, 128)), (0, 2, 1))
    return Case("host_alias_only", "host", "reshape + transpose, a pure view, f32 [2,16,8,16] (no kernel)",
                lambda d: [_rand(d, (2, 16, 8, 16), torch.float32)],
                lambda x: x.reshape(2, 16, 128).transpose(1, 2), trace=tr.text(t), reference_us=(3.5, 34.3))


def host_copy_view() -> Case:
    tr = Trace("copy_view", [("x", torch.float32, (2, 16, 8, 16))])
    t = tr.reshape(tr.transpose("x", (0, 2, 1, 3)), (2, 8, 256))
    return Case("host_permute_reshape_copy", "host", "permute + reshape that needs a copy, f32 [2,16,8,16]",
                lambda d: [_rand(d, (2, 16, 8, 16), torch.float32)],
                lambda x: x.permute(0, 2, 1, 3).reshape(2, 8, 256), trace=tr.text(t), reference_us=(12.9, 47.7))


def host_pointwise(n_ops: int, dtype: torch.dtype, size: int, ref=None) -> Case:
    tr = Trace(f"pw{n_ops}", [("a", dtype, (size,)), ("b", dtype, (size,))])
    ops = ["add", "mul", "sub", "maximum"]
    cur = "a"
    for k in range(n_ops):
        cur = getattr(tr, ops[k % len(ops)])(cur, "b")

    def eager(a, b):
        cur = a
        for k in range(n_ops):
            op = ops[k % len(ops)]
            cur = torch.maximum(cur, b) if op == "maximum" else getattr(torch, op)(cur, b)
        return cur

    return Case(f"host_pointwise{n_ops}_{SHORT[dtype]}", "host", f"{n_ops} pointwise ops, {SHORT[dtype]} [{size}]",
                lambda d: [_rand(d, (size,), dtype, 0.5), _rand(d, (size,), dtype, 0.5)], eager, trace=tr.text(cur),
                tol=(2e-2, 2e-2) if dtype != torch.float32 else (1e-4, 1e-5), reference_us=ref)


def all_cases(quick: bool) -> list[Case]:
    cases = [merge_heads_producer(quick), merge_heads_consumer(quick), transpose_add(quick), layer_norm(quick),
             rms_norm(quick), add_layer_norm(quick), bias_gelu(quick), causal_softmax(quick), llama_rope(quick),
             elementwise_1gib(quick), nanogpt_attn_out(quick), nanogpt_mlp_gelu(quick), embedding_backward(quick),
             embedding_backward(quick, deterministic=True)]
    cases += [linear_case("linear_nanogpt_qkv", quick, 8192, 768, 2304),
              linear_case("linear_llama_mlp", quick, 8192, 2048, 5632), linear_bias_gelu(quick),
              linear_residual(quick)]
    cases += [einsum_bij_jk(16), einsum_bij_jk(64 if quick else 512), einsum_bijk_bklj(16),
              einsum_bijk_bklj(32 if quick else 64), einsum_bij_jk_fused(16), einsum_bij_jk_fused(64 if quick else 512),
              einsum_fused_vs_mm(16), einsum_bijk_bklj_fused(16), einsum_bijk_bklj_fused(32 if quick else 64)]
    cases += [host_pointwise3(), host_alias_only(), host_copy_view(), host_pointwise(10, torch.float32, 1024),
              host_pointwise(32, torch.float16, 13, ref=(384, 60.5))]
    return cases
