#!/usr/bin/env python3
"""Interleaved A/B timing of the merge-heads producer (bench/gpu_cases.py): torch.compile(dynamic=False),
viewfuse, a device-to-device copy of the same bytes and, with --kernels, the hand-written reference
kernels of bench/producer_kernels.cu. Every round runs each system once, in a shuffled order, each
run on fresh data with the L2 cache flushed; a pass reports each system's median and its median
difference from torch.compile in the same rounds, with the share of rounds it was the faster.

  nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o build-bench/producer_kernels.so bench/producer_kernels.cu
  python3 bench/producer_ab.py --kernels build-bench/producer_kernels.so [--rounds 400] [--passes 3]

docs/performance.md ("What moved them (sessions 11 and 12)") has what it measured. The reference
kernels write a fresh output per call, as torch.compile and viewfuse do; --offsets also runs them
into one buffer at these byte offsets (the output's placement).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench  # noqa: E402
import gpu_cases  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=400, help="rounds per pass")
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--kernels", default="", help="the shared library built from bench/producer_kernels.cu")
    p.add_argument("--offsets", default="", help="comma-separated byte offsets (0x.. allowed) for the reference kernels")
    return p.parse_args()


def reference_systems(path: str, x, want, tol, offsets: list[int]) -> dict:
    lib = ctypes.CDLL(path)
    lib.vf_ref_name.restype = ctypes.c_char_p
    stream = lambda: ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)  # noqa: E731
    systems = {}

    def runner(i, out_of):
        def run():
            out = out_of()
            rc = lib.vf_ref_launch(i, ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(out.data_ptr()), stream())
            if rc != 0:
                raise RuntimeError(f"vf_ref_launch({i}): cudaError {rc}")
            return out
        return run

    nbytes = want.numel() * want.element_size()
    buffer = torch.empty(nbytes + max(offsets, default=0), dtype=torch.uint8, device=x.device) if offsets else None
    for i in range(lib.vf_ref_count()):
        name = lib.vf_ref_name(i).decode()
        run = runner(i, lambda: torch.empty_like(want))
        if lib.vf_ref_is_producer(i):
            verdict = gpu_bench.check(torch, run(), want, tol)
            print(f"check {name}: {verdict}")
            if verdict != "ok":
                continue
        systems[name] = run
        for off in offsets:
            view = buffer[off:off + nbytes].view(want.dtype).view(want.shape)
            systems[f"{name}@{off:#x}"] = runner(i, lambda v=view: v)
    return systems


def report(times: dict) -> None:
    """Each system's median, and its median difference from torch.compile run by run (the same rounds)."""
    if "compile" not in times:
        print("torch.compile was not timed (see its error above)")
        return
    base = times["compile"]
    print(f"{'system':34s} {'median':>8s} {'p10':>8s} {'p90':>8s} {'-compile':>8s} {'faster':>6s}")
    for name in sorted(times, key=lambda k: statistics.median(times[k])):
        t = sorted(times[name])
        diff = [a - b for a, b in zip(times[name], base)]
        faster = sum(1 for d in diff if d < 0) / len(diff) * 100
        print(f"{name:34s} {statistics.median(t):8.2f} {t[len(t) // 10]:8.2f} {t[len(t) * 9 // 10]:8.2f} "
              f"{statistics.median(diff):8.2f} {faster:5.0f}%", flush=True)


def main() -> int:
    args = parse_args()
    import viewfuse as vf

    case = gpu_cases.merge_heads_producer(False)
    inputs = case.inputs(torch.device("cuda"))
    x, want = inputs[0], case.eager(*inputs)
    compiled = torch.compile(case.eager, dynamic=False)
    fd = vf.from_trace(case.trace)
    fd_inputs = list(inputs)
    copy_out = torch.empty_like(x)
    systems = {"compile": lambda: compiled(*inputs), "viewfuse": lambda: fd.execute(fd_inputs)[0],
               "device copy": lambda: copy_out.copy_(x)}
    for name in ("compile", "viewfuse"):
        print(f"check {name}: {gpu_bench.check(torch, systems[name](), want, case.tol)}")
    if args.kernels:
        offsets = [int(v, 0) for v in args.offsets.split(",") if v]
        systems.update(reference_systems(args.kernels, x, want, case.tol, offsets))
    timer = gpu_bench.Timer(torch, x.device)
    for fn in systems.values():
        fn()
    torch.cuda.synchronize()
    for seed in range(args.passes):
        errors = {}
        times = timer.gpu_times_interleaved(systems, x.normal_, {name: args.rounds for name in systems}, errors, seed)
        for name, error in errors.items():
            print(f"{name}: {error}")
        report(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
