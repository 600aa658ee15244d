"""The error against float64 of bf16 functions run eagerly, through Thunder's torch executor, and
through Thunder + viewfuse with and without vf_keep_round_trips (docs/design.md, "Round trips
through 16-bit floats"). CPU or CUDA: python bench/round_trip_accuracy.py [--device cuda]."""

import argparse

import torch
import thunder

from viewfuse.thunder import viewfuse_ex


def rope(x, cos, sin):
    d = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., d:], x[..., :d]), dim=-1) * sin


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b)


CASES = {
    "gelu (tanh)": (lambda x: torch.nn.functional.gelu(x, approximate="tanh"), [(64, 4096)]),
    "gelu (erf)": (lambda x: torch.nn.functional.gelu(x), [(64, 4096)]),
    "silu * x": (lambda x, y: torch.nn.functional.silu(x) * y, [(64, 4096), (64, 4096)]),
    "rope": (rope, [(8, 64, 128), (64, 128), (64, 128)]),
    "softmax": (lambda x: torch.softmax(x, -1), [(64, 4096)]),
    "layer norm": (layer_norm, [(64, 4096), (4096,), (4096,)]),
}


def errors(out, exact):
    d = (out.double() - exact).abs()
    return d.max().item(), d.mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    systems = {
        "eager": lambda fn: fn,
        "Thunder, torch executor": lambda fn: thunder.jit(fn, executors=[thunder.get_executor("torch")]),
        "Thunder + viewfuse (default)": lambda fn: thunder.jit(fn, executors=[viewfuse_ex]),
        "Thunder + viewfuse, vf_keep_round_trips": lambda fn: thunder.jit(fn, executors=[viewfuse_ex],
                                                                          vf_keep_round_trips=True),
    }
    print(f"bf16 against float64 on {args.device}: max / mean absolute error")
    print("| case | " + " | ".join(systems) + " |")
    print("|---" * (len(systems) + 1) + "|")
    for name, (fn, shapes) in CASES.items():
        inputs = [(torch.randn(s, generator=gen, dtype=torch.float64) * 2).to(args.device, torch.bfloat16)
                  for s in shapes]
        exact = fn(*[x.double() for x in inputs])
        cells = []
        for make in systems.values():
            hi, mean = errors(make(fn)(*inputs), exact)
            cells.append(f"{hi:.4g} / {mean:.3g}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
