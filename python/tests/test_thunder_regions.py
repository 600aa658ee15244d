"""How viewfuse's Thunder executor groups a trace into regions (the pull-up of elementwise groups
after Thunder's consecutive grouping) and keys their definitions; values against eager."""

import pytest
import torch

thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed")
from viewfuse.thunder import viewfuse_ex  # noqa: E402


class SwiGLU(torch.nn.Module):
    """Llama's feed-forward block: w2(silu(w1 x) * w3 x)."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1, self.w2, self.w3 = (torch.nn.Linear(*d, bias=False) for d in ((dim, hidden), (hidden, dim), (dim, hidden)))

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


def _flat_subsymbols(bsym):
    for s in bsym.subsymbols:
        yield s
        yield from _flat_subsymbols(s)


@pytest.mark.parametrize("pull_up", [True, False])
def test_swiglu_backward_input_gradients_in_one_region(pull_up):
    """The backward of a SiLU-gated MLP lists the w3 weight-gradient matmuls between the product's
    gradient (b * dh) and SiLU's backward, which Thunder's consecutive grouping made two regions,
    the second reading the first's b * dh instead of dh (Llama's llama2_010 and llama2_012: 738 MB
    moved instead of 461). With the elementwise group pulled up into the region it reads
    (_pull_up_elementwise_groups), SiLU's backward reads dh, the w2 matmul's output, itself; with
    Thunder's grouping as it is (fusion_type="consecutive"), it does not. Gradients equal eager's
    either way."""
    torch.manual_seed(0)
    mlp = SwiGLU(32, 96)
    x = torch.randn(4, 16, 32, requires_grad=True)

    def loss_fn(x):
        return mlp(x).square().sum()

    want = torch.autograd.grad(loss_fn(x), [x, *mlp.parameters()])
    jfn = thunder.jit(loss_fn, executors=[viewfuse_ex], **({} if pull_up else {"fusion_type": "consecutive"}))
    got = torch.autograd.grad(jfn(x), [x, *mlp.parameters()])
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)
    backward = thunder.last_backward_traces(jfn)[-1]
    matmul_outputs = {o.name for b in backward.bound_symbols if b.sym.name == "matmul" for o in b.flat_proxy_outs}
    silu_backward = [b for b in backward.bound_symbols
                     if b.sym.is_fusion and any(s.sym.name == "exp" for s in _flat_subsymbols(b))]
    assert len(silu_backward) == 1, str(backward)
    reads_dh = any(a.name in matmul_outputs for a in silu_backward[0].flat_proxy_args)
    assert reads_dh == pull_up, str(backward)


@pytest.mark.parametrize("later, pulled", [("mul", True), ("sum", False), ("mul_by_the_matmul", False)])
def test_elementwise_group_after_a_matmul_joins_the_region_it_reads(later, pulled):
    """exp(x), then a matmul of it (torch's on the CPU), then an op of exp(x) again: an elementwise
    op joins exp's region (one region, no value passed between regions); a reduction stays a region
    of its own after the matmul (its kernels are planned where Thunder put it), and so does an
    elementwise op that also reads the matmul's result (it cannot run before it). Values equal eager's."""
    def f(x, w):
        a = x.exp()
        m = a @ w
        if later == "mul_by_the_matmul":
            return m, a[:, :4] * m
        return m, (a * 3 if later == "mul" else a.sum(1))

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    jfn = thunder.jit(f, executors=[viewfuse_ex])
    for g, want in zip(jfn(x, w), f(x, w)):
        torch.testing.assert_close(g, want)
    trace = thunder.last_traces(jfn)[-1]
    regions = [b for b in trace.bound_symbols if b.sym.is_fusion]
    assert len(regions) == (1 if pulled else 2), str(trace)


def test_schedule_switches_give_regions_their_own_definition(monkeypatch):
    """A region's kernels are scheduled under the CUDA schedule switches of its first run
    (VF_DISABLE_SCHEDULES, VF_ENABLE_SCHEDULES): the same region text jitted under other switches
    gets a definition of its own, so that model_steps.py's "+plain" and "+without-NAME" systems
    compile their kernels without the schedules instead of reusing another system's."""
    def f(x):
        return (x * 2.75).exp().sum(1) - 0.125  # constants no other test uses: a region text of its own

    x = torch.randn(4, 8)
    counts = []
    for disabled in ("", "deep", ""):
        monkeypatch.setenv("VF_DISABLE_SCHEDULES", disabled)
        before = len(viewfuse_ex._definitions)
        torch.testing.assert_close(thunder.jit(f, executors=[viewfuse_ex])(x), f(x))
        counts.append(len(viewfuse_ex._definitions) - before)
    assert counts[0] >= 1 and counts[1] == counts[0] and counts[2] == 0, counts
