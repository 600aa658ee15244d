#!/usr/bin/env python3
"""GPU benchmark suite: viewfuse beside PyTorch eager and torch.compile(dynamic=False), one process.

Every case (bench/gpu_cases.py) is first checked against eager; then each system is called for
WARMUP_S seconds (viewfuse specializes its kernels to the sizes meanwhile) and timed:
  memory cases: GPU time from CUDA events, median of many runs, each on fresh random data with the
                L2 cache flushed (a large buffer written) before it; the systems run interleaved,
                one run each per round in a shuffled order; GB/s counts each input and
                output byte once, against the copy ceiling (a 1 GiB device-to-device copy, bytes
                read + written) measured in the same run;
  einsum cases: wall time per call (host + GPU, synchronized), median;
  host cases:   host time per call in a loop of many calls on tiny tensors, median of batches, the
                systems' batches interleaved as above.
The C++ benchmarks (bench/host_latency.cpp, bench/first_call.cpp) are run too when --cpp-build names
a build with them. Writes docs/benchmarks.md, docs/benchmarks.json and docs/benchmarks.png; the
markdown and JSON are rewritten after every case, so a run cut short keeps what it measured.

  python3 bench/gpu_bench.py [--quick] [--cases REGEX] [--skip-compile] [--cpp-build DIR]
  python3 bench/gpu_bench.py --from-json docs/benchmarks.json   # redo the markdown and the plot
"""

from __future__ import annotations

import argparse
import datetime
import functools
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARMUP_S = 0.5  # seconds of calls before a memory case's systems are timed


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes and few runs (a smoke test)")
    p.add_argument("--cases", default="", help="only cases whose name matches this regular expression")
    p.add_argument("--skip-compile", action="store_true", help="leave torch.compile out")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (a functional check of the script)")
    p.add_argument("--reps", type=int, default=0, help="timed runs per system (default 50, quick 10)")
    p.add_argument("--time-budget", type=float, default=0, help="seconds; cases not started by then are skipped")
    p.add_argument("--cpp-build", default="", help="build dir with bench/ targets (VF_BUILD_BENCH=ON) to run too")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    p.add_argument("--commit", default=os.environ.get("VF_COMMIT", ""), help="commit to record (default: git)")
    p.add_argument("--from-json", default="", help="only rewrite the markdown and plot from a results file")
    p.add_argument("--resume", default="", help="a results file of an earlier run: its measured cases are kept "
                   "(each with the ceiling of its own run) and not run again")
    return p.parse_args(argv)


def commit_name(given: str) -> str:
    if given:
        return given
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Timer:
    """GPU time with CUDA events (L2 flushed first), or wall time on the CPU device."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device
        self.cuda = device.type == "cuda"
        # Larger than the L2 cache (60 MB on the H200): writing it evicts the case's data.
        self.ceiling_gbps = None  # the copy ceiling of this process, once measured
        self.flush = torch.empty((256 if self.cuda else 32) << 20, dtype=torch.uint8, device=device)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def gpu_run_us(self, fn, refresh) -> float:
        """One timed run of fn: fresh data, L2 flushed, GPU time from CUDA events (wall time on the CPU)."""
        torch = self.torch
        refresh()
        self.flush.zero_()  # also keeps the GPU busy while the host issues fn's work
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn()
            end.record()
            end.synchronize()
            us = start.elapsed_time(end) * 1e3
        else:
            t0 = time.perf_counter()
            out = fn()
            us = (time.perf_counter() - t0) * 1e6
        del out
        return us

    def gpu_us(self, fn, refresh, reps: int) -> float:
        return statistics.median(self.gpu_run_us(fn, refresh) for _ in range(reps))

    def gpu_times_interleaved(self, calls: dict, refresh, runs: dict, errors: dict, seed: int = 0) -> dict:
        """GPU times (us, one per round) of each of calls (name -> fn), timed round-robin: each round
        runs every system once, in an order shuffled per round (seeded), so that every system sees
        the same clocks, temperature and memory state, which drift over a run. A system is timed in
        its first runs[name] rounds only. One that raises is dropped; its error goes to errors[name]."""
        return self._interleaved(calls, runs, errors, lambda fn: self.gpu_run_us(fn, refresh), seed)

    def _interleaved(self, fns: dict, runs: dict, errors: dict, time_one, seed: int) -> dict:
        rng = random.Random(seed)
        times = {name: [] for name in fns}
        for r in range(max(runs.values(), default=0)):
            order = [name for name in fns if r < runs[name] and name not in errors]
            rng.shuffle(order)
            for name in order:
                try:
                    times[name].append(time_one(fns[name]))
                except Exception as e:  # noqa: BLE001
                    errors[name] = f"{type(e).__name__}: {e}".strip()
                    print(traceback.format_exc(), file=sys.stderr)
                    self.sync()
        return {name: t for name, t in times.items() if t and name not in errors}

    def warm_up(self, fn, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        for calls in itertools.count():
            if calls >= 2 and time.perf_counter() >= deadline:
                break
            fn()
            self.sync()

    def wall_us(self, fn, reps: int) -> float:
        times = []
        for _ in range(reps):
            self.sync()
            t0 = time.perf_counter()
            out = fn()
            self.sync()
            times.append((time.perf_counter() - t0) * 1e6)
            del out
        return statistics.median(times)

    def host_batch_us(self, fn, calls: int) -> float:
        """Host time per call over a batch of calls, the device idle before and after it."""
        self.sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        self.sync()
        return (time.perf_counter() - t0) * 1e6 / calls

    def host_us(self, fn, calls: int, batches: int = 5) -> float:
        return statistics.median(self.host_batch_us(fn, calls) for _ in range(batches))

    def host_times_interleaved(self, fns: dict, calls: int, errors: dict, batches: int = 7) -> dict:
        """Host times per call (us, one per batch of calls) of each of fns (name -> fn), the systems'
        batches interleaved as in gpu_times_interleaved: a slow stretch of the host falls on all."""
        return self._interleaved(fns, {name: batches for name in fns}, errors,
                                 lambda fn: self.host_batch_us(fn, calls), 0)


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check(torch, got, want, tol) -> str:
    """'ok', or what differs."""
    got, want = as_tuple(got), as_tuple(want)
    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if tuple(g.shape) != tuple(w.shape):
            return f"output {i}: shape {list(g.shape)}, eager {list(w.shape)}"
        try:
            torch.testing.assert_close(g.float(), w.float(), rtol=tol[0], atol=tol[1], equal_nan=True)
        except AssertionError as e:
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            return f"output {i}: " + "; ".join(lines[:3])
    return "ok"


def copy_ceiling(torch, timer: Timer, quick: bool, reps: int) -> dict:
    n = (64 << 20) if quick else (1 << 30)
    src = torch.empty(n, dtype=torch.uint8, device=timer.device)
    dst = torch.empty_like(src)
    src.fill_(1)
    us = timer.gpu_us(lambda: dst.copy_(src), lambda: None, reps)
    return {"bytes": 2 * n, "us": us, "gbps": 2 * n / us / 1e3}


def make_runners(torch, vf, case, skip_compile: bool):
    """name -> (callable(*inputs), error text, FusionDefinition or None)."""
    runners = {"eager": (case.eager, "", None)}
    if skip_compile:
        runners["compile"] = (None, "skipped (--skip-compile)", None)
    else:
        try:
            runners["compile"] = (torch.compile(case.eager, dynamic=False), "", None)
        except Exception as e:  # noqa: BLE001
            runners["compile"] = (None, f"{type(e).__name__}: {e}", None)
    try:
        if vf is None:
            raise RuntimeError("import viewfuse failed")
        if case.viewfuse is not None:
            runners["viewfuse"] = (case.viewfuse(vf), "", None)
        else:
            fd = vf.from_trace(case.trace)
            runners["viewfuse"] = (lambda *xs: fd.execute(list(xs)), "", fd)
    except Exception as e:  # noqa: BLE001
        runners["viewfuse"] = (None, f"{type(e).__name__}: {e}", None)
    return runners


def host_segment_note(fd, inputs, total_bytes: int) -> str:
    """Why a viewfuse run is not timed: segments that run on the host (the reference executor) over
    large data would take minutes. Empty when it can run."""
    if fd is None or total_bytes < (64 << 20):
        return ""
    try:
        kinds = [seg["kind"] for seg in fd.explain(list(inputs))["segments"]]
    except Exception:  # noqa: BLE001  (explain is informative only)
        return ""
    if "host" in kinds:
        return f"not run: its plan has {kinds.count('host')} host segment(s) (reference executor on the CPU)"
    return ""


def refresh_fn(torch, inputs):
    floats = [t for t in inputs if t.is_floating_point()]

    def refresh():
        for t in floats:
            t.normal_()

    return refresh


def run_case(torch, vf, case, timer: Timer, args, reps: int) -> dict:
    result = {"name": case.name, "group": case.group, "what": case.what, "target": case.target,
              "reference_us": case.reference_us, "bound": case.bound, "ceiling_gbps": timer.ceiling_gbps,
              "systems": {}}
    inputs = case.inputs(timer.device)
    result["bytes"] = sum(t.numel() * t.element_size() for t in inputs)
    result["bytes"] += sum(t.numel() * t.element_size() for t in as_tuple(case.eager(*inputs)))
    refresh = refresh_fn(torch, inputs)
    timed, runs = {}, {}  # memory and host cases: the systems to time together (memory: how many runs each)
    for name, (fn, error, fd) in make_runners(torch, vf, case, args.skip_compile).items():
        entry = {"us": None, "check": None, "error": error or host_segment_note(fd, inputs, result["bytes"])}
        result["systems"][name] = entry
        if fn is None or entry["error"]:
            continue
        try:
            want = as_tuple(case.eager(*inputs))  # of the current data: timing refreshes it
            t0 = time.perf_counter()
            got = fn(*inputs)  # also compiles
            timer.sync()
            entry["first_call_ms"] = (time.perf_counter() - t0) * 1e3
            entry["check"] = "ok" if name == "eager" else check(torch, got, want, case.tol)
            del got, want
            if entry["first_call_ms"] > 60e3 and case.group == "memory":
                entry["error"] = f"not timed: its first call took {entry['first_call_ms'] / 1e3:.0f} s"
                continue
            # Each system is called as its user calls it: viewfuse's FusionDefinition straight
            # (one C++ call on a prebuilt list), the others through their Python function.
            call = functools.partial(fd.execute, list(inputs)) if fd is not None else functools.partial(fn, *inputs)
            # Warm-up, the same for every system: calls for WARMUP_S seconds (at least two), in
            # which viewfuse also makes and loads its kernels specialized to these sizes, on a
            # background thread after a kernel's second launch (docs/design.md).
            timer.warm_up(call, WARMUP_S)
            if case.group == "memory":
                one = timer.wall_us(call, 1)  # fewer runs for slow systems (host fallbacks)
                timed[name] = call
                runs[name] = reps if one < 20e3 else max(3, min(reps, int(2e6 / one)))
            elif case.group == "einsum":
                entry["us"] = timer.wall_us(call, reps * 2)
            else:
                timed[name] = call
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {e}".strip()
            print(traceback.format_exc(), file=sys.stderr)
            try:
                timer.sync()
            except Exception as e2:  # noqa: BLE001
                entry["error"] += f" (device unusable afterwards: {e2})"
    if timed:
        errors = {}
        if case.group == "host":
            times = timer.host_times_interleaved(timed, 200 if args.quick else 2000, errors)
        else:
            times = timer.gpu_times_interleaved(timed, refresh, runs, errors)
        for name in timed:
            entry = result["systems"][name]
            if name in runs:
                entry["runs"] = runs[name]
            if name in errors:
                entry["error"] = errors[name]
            else:
                entry["us"] = statistics.median(times[name])
    if case.group == "host":  # the floor from Python: one fill_ launch
        t = inputs[0]
        result["fill_us"] = timer.host_us(lambda: t.fill_(1.0), 200 if args.quick else 2000)
    return result


def run_cpp(build: str, quick: bool) -> dict:
    """The C++ benchmarks' results, or errors, from a build with VF_BUILD_BENCH=ON."""
    out = {}
    host = os.path.join(build, "bench", "vf_bench_host_latency")
    first = os.path.join(build, "bench", "vf_bench_first_call")
    try:
        # Repetitions in random interleaved order, reported as medians: the bare launch that is the
        # floor and the fused calls see the same conditions (in one order, the first benchmark of
        # the launch queue's kind ran slower than the same benchmark later).
        r = subprocess.run([host, "--benchmark_format=json", f"--benchmark_min_time={0.05 if quick else 0.2}",
                            f"--benchmark_repetitions={2 if quick else 7}", "--benchmark_enable_random_interleaving=true",
                            "--benchmark_report_aggregates_only=true"],
                           capture_output=True, text=True, timeout=300)
        out["host_latency"] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-2000:]}
        out["host_latency_stderr"] = r.stderr[-2000:]
    except Exception as e:  # noqa: BLE001
        out["host_latency"] = {"error": f"{type(e).__name__}: {e}"}
    try:
        path = os.path.join(build, "first_call.json")
        r = subprocess.run([first, "--repeat", "3" if quick else "7", "--json", path], capture_output=True, text=True,
                           timeout=300)
        out["first_call"] = json.load(open(path)) if r.returncode == 0 else {"error": r.stderr[-2000:]}
        out["first_call_text"] = r.stdout
    except Exception as e:  # noqa: BLE001
        out["first_call"] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    json_path = os.path.splitext(args.out)[0] + ".json"
    png_path = os.path.splitext(args.out)[0] + ".png"
    if args.from_json:
        results = json.load(open(args.from_json))
        gpu_report.write(results, args.out, png_path)
        return 0

    import torch

    try:
        import viewfuse as vf
        vf_error = ""
    except Exception as e:  # noqa: BLE001
        vf, vf_error = None, f"{type(e).__name__}: {e}"
        print(f"viewfuse could not be imported: {vf_error}", file=sys.stderr)
    import gpu_cases

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device; use --device cpu to check the script on the CPU", file=sys.stderr)
        return 2
    reps = args.reps or (10 if args.quick else 50)
    timer = Timer(torch, device)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__, "cuda": torch.version.cuda, "commit": commit_name(args.commit),
        "command": "python3 bench/gpu_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": args.quick, "reps": reps, "interleaved": True, "viewfuse_import_error": vf_error, "cases": [],
    }
    torch.manual_seed(0)
    results["ceiling"] = copy_ceiling(torch, timer, args.quick, reps)
    timer.ceiling_gbps = results["ceiling"]["gbps"]
    print(f"copy ceiling: {results['ceiling']['gbps']:.0f} GB/s", flush=True)
    if args.cpp_build:
        results["cpp"] = run_cpp(args.cpp_build, args.quick)
    done = set()
    if args.resume:
        for c in json.load(open(args.resume)).get("cases", []):
            if c.get("systems") and not c.get("error") and not c.get("skipped"):
                results["cases"].append(c)
                done.add(c["name"])
    started = time.perf_counter()
    pattern = re.compile(args.cases) if args.cases else None
    for case in gpu_cases.all_cases(args.quick):
        if (pattern and not pattern.search(case.name)) or case.name in done:
            continue
        if args.time_budget and time.perf_counter() - started > args.time_budget:
            results["cases"].append({"name": case.name, "group": case.group, "what": case.what,
                                     "skipped": "time budget spent", "systems": {}})
            continue
        print(f"== {case.name}", flush=True)
        try:
            r = run_case(torch, vf, case, timer, args, reps)
        except Exception as e:  # noqa: BLE001  (making inputs or running eager failed)
            print(traceback.format_exc(), file=sys.stderr)
            r = {"name": case.name, "group": case.group, "what": case.what, "error": f"{type(e).__name__}: {e}",
                 "systems": {}}
        for name, s in r["systems"].items():
            us = f"{s['us']:.1f} us" if s.get("us") is not None else s.get("error", "")
            print(f"   {name:9s} {us}  check: {s.get('check')}", flush=True)
        results["cases"].append(r)
        gpu_report.write(results, args.out, None)
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    gpu_report.write(results, args.out, png_path)
    print(f"wrote {args.out}, {json_path}" + (f", {png_path}" if os.path.exists(png_path) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
