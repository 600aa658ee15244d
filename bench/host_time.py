#!/usr/bin/env python3
"""Where the host's time goes in a Thunder + viewfuse training step (bench/model_steps.py's models
and step, on the GPU): each viewfuse region call's host time (from the call to its return, the
launches included, no synchronization), the step's first calls on a timeline from the step's start,
and the step's Python functions by their own time under cProfile.

The GPU waits for the host where the host falls behind (model_steps.py --profile names the
kernels on either side of each wait); this says what the host was doing.

  python3 bench/host_time.py [--model llama2] [--steps 5]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_steps  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="llama2")
    ap.add_argument("--system", default="thunder+viewfuse")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()

    import torch
    from viewfuse.thunder import viewfuse_ex

    calls = []  # (fusion name, start ns, end ns) of the step being timed
    def hook(name, text, runner, call_args):
        start = time.perf_counter_ns()
        out = runner(*call_args)
        calls.append((name, start, time.perf_counter_ns()))
        return out

    viewfuse_ex.region_hook = hook
    small = args.device != "cuda"
    module, idx, targets = model_steps.build(torch, args.model, small, torch.float32 if small else torch.bfloat16,
                                             torch.device(args.device))
    fn = model_steps.make_system(torch, args.system, module)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for _ in range(3):
        model_steps.step(fn, module, idx, targets)
    sync()

    per_region, steps_ns = {}, []
    for _ in range(args.steps):
        calls.clear()
        start = time.perf_counter_ns()
        model_steps.step(fn, module, idx, targets)
        steps_ns.append(time.perf_counter_ns() - start)
        sync()
        for name, a, b in calls:
            per_region.setdefault(name, []).append(b - a)
    first = [(n, (a - start) / 1e3, (b - a) / 1e3) for n, a, b in calls[:8]]
    total_calls = sum(len(v) for v in per_region.values()) / args.steps
    host_in_calls = sum(sum(v) for v in per_region.values()) / args.steps / 1e3
    print(f"{args.model} {args.system}: host time of a step {sorted(steps_ns)[len(steps_ns) // 2] / 1e3:.0f} us "
          f"(issued, not synchronized), {total_calls:.0f} viewfuse calls taking {host_in_calls:.0f} us of it")
    print("the last step's first calls (start after the step's start, host time of the call; us):")
    for n, at, took in first:
        print(f"  {n:14s} at {at:8.1f}  took {took:8.1f}")
    print("costliest calls (median host us per call, calls per step):")
    rows = sorted(((sorted(v)[len(v) // 2] / 1e3, n, len(v) / args.steps) for n, v in per_region.items()), reverse=True)
    for us, n, count in rows[:10]:
        print(f"  {n:14s} {us:8.1f} us x {count:.0f}")

    prof = cProfile.Profile()
    prof.enable()
    model_steps.step(fn, module, idx, targets)
    prof.disable()
    sync()
    print("one step under cProfile, by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
