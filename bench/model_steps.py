#!/usr/bin/env python3
"""Training steps of real models through Thunder: eager, torch.compile, Thunder with its
torch.compile executor, and Thunder with viewfuse, side by side in one process.

The models are the ones Thunder ships in thunder/tests/ (nanogpt_model.GPT at GPT-2 124M size;
llama2_model.Transformer of dim 2048, 8 layers, 16 heads; litgpt_model configs where litgpt is
installed). One step is forward, loss and backward, no optimizer, in bf16 on the GPU.

  1. Correctness first, on small f32 configs: the loss, the logits and every gradient of each
     system against eager.
  2. Step time: CUDA events around a whole step, the systems' steps interleaved (each round runs
     every system once, in a shuffled order, after the L2 is flushed), median of --steps rounds
     after warm-up steps; peak memory of a step (torch.cuda.max_memory_allocated) above what the
     parameters and inputs hold.
  3. Regions: every viewfuse region of one system's step (--regions-system, Thunder + viewfuse by
     default; found through the executor's region_hook), timed alone on fresh inputs of the layouts the step gave it (median of many
     runs, L2 flushed), with the bytes of its inputs and outputs (each element once: an expanded
     dim, or an output that is a view of another, is not counted again) against the copy ceiling
     measured in the same run, its kernel count and ops; worst first. Each region's trace (with its input
     layouts as repro `# layout` lines) is saved under --regions-dir, so that the CPU tests can
     plan them (tests/segment/model_regions).

A viewfuse system (Thunder with viewfuse, then the sdpa executor) may be named with modifiers
after "thunder+viewfuse", each a compile option (VIEWFUSE_MODIFIERS): +matmul (vf_matmul=True:
matmul and linear as cuBLASLt calls in the regions), -matmul (the default, said), -epilogues
(vf_matmul_epilogues=False: a matmul's gelu and residual adds in kernels), +attention (the
default, said: attention as torch's cuDNN kernel where torch's eager call would run it),
-attention (vf_attention=False: attention left to the sdpa executor), +consecutive (Thunder's
fusion_type="consecutive" as Thunder has it: regions cut by the trace's order, without viewfuse's
pull-up of elementwise groups), +dataflow (Thunder's fusion_type="dataflow"). thunder+viewfuse+defaults
is viewfuse before Thunder's default executors. Schedule switches may end a name: "+plain" sets
VF_DISABLE_SCHEDULES to every CUDA schedule that can be switched off (SWITCHABLE_SCHEDULES) during
each of the system's steps, so that its kernels are compiled without them (viewfuse's Thunder
region definitions are keyed by the switches, its kernel cache by source, so the other systems
keep theirs); "+without-NAME" switches off schedule NAME
alone; "+with-NAME" switches on one that is off by default (VF_ENABLE_SCHEDULES: "async"); several
add up (thunder+viewfuse+without-warp-rows+without-exact-groups).

Writes docs/model_steps.md, docs/model_steps.json and docs/model_steps.png (--out to elsewhere).
--device cpu --small runs everything on tiny configs on the CPU: a check of the script.

  python3 bench/model_steps.py [--models nanogpt,llama2] [--systems ...] [--steps 10] [--small]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import statistics
import sys
import time
import traceback
import unittest.mock
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_bench import Timer, commit_name, copy_ceiling  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEMS = ("eager", "torch.compile", "thunder+torchcompile", "thunder+viewfuse", "thunder+viewfuse+defaults",
           "thunder+viewfuse+matmul")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="nanogpt,llama2")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--steps", type=int, default=10, help="timed rounds (one step of each system per round)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps of each system first")
    ap.add_argument("--small", action="store_true", help="the small configs for the timing too (a check of the script)")
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--check-systems", default="thunder+viewfuse,thunder+viewfuse+defaults",
                    help="the systems checked against eager first (the others are the baselines)")
    ap.add_argument("--region-runs", type=int, default=20)
    ap.add_argument("--regions-system", default="thunder+viewfuse",
                    help="the viewfuse system whose regions are timed alone and saved (one of --systems; "
                         "none: no regions timed)")
    ap.add_argument("--profile", action="store_true",
                    help="one more step of each system under torch.profiler: its GPU time by kernel kind, and "
                         "its twelve costliest kernels outside viewfuse and its twelve costliest viewfuse kernels by name "
                         "(the JSON, and printed)")
    ap.add_argument("--trace-dir", default="",
                    help="with --profile, one more step of each system under torch.profiler with the host's "
                         "activity too, saved as a gzipped Chrome trace there (DIR/MODEL-SYSTEM.json.gz, other characters than letters, digits, _ . - as _): what the "
                         "host did while the GPU waited")
    ap.add_argument("--regions-dir", default=os.path.join(ROOT, "tests/segment/model_regions"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/model_steps.md"))
    ap.add_argument("--commit", default="")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="dropout of the timed (full-size) models; the checks on small configs keep 0, "
                         "since a random mask is not eager's")
    return ap.parse_args(argv)


# ---- models ----

DROPOUT = 0.0  # the full-size models' dropout (--dropout)


def model_config(name: str, small: bool):
    """(constructor, batch, seq, vocab) of a model at full or small size."""
    from thunder.tests import llama2_model, nanogpt_model

    if name == "nanogpt":
        if small:
            cfg = nanogpt_model.GPTConfig(block_size=64, vocab_size=512, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
            return (lambda: nanogpt_model.GPT(cfg)), 2, 64, 512
        cfg = nanogpt_model.GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768,
                                      dropout=DROPOUT)
        return (lambda: nanogpt_model.GPT(cfg)), 8, 1024, 50304
    if name == "llama2":
        if small:
            args = llama2_model.ModelArgs(dim=64, n_layers=2, n_heads=4, vocab_size=512, max_seq_len=64, dropout=0.0)
            return (lambda: llama2_model.Transformer(args)), 2, 64, 512
        args = llama2_model.ModelArgs(dim=2048, n_layers=8, n_heads=16, vocab_size=32000, max_seq_len=2048,
                                      dropout=DROPOUT)
        return (lambda: llama2_model.Transformer(args)), 4, 2048, 32000
    if name.startswith("litgpt:"):
        from thunder.tests import litgpt_model  # needs litgpt

        cfg = litgpt_model.Config.from_name(name.split(":", 1)[1])
        return (lambda: litgpt_model.GPT(cfg)), 2 if small else 4, min(cfg.block_size, 64 if small else 2048), cfg.padded_vocab_size
    raise SystemExit(f"unknown model {name!r}")


def with_loss(torch, model, vocab: int, with_logits: bool = False):
    """The model with its cross-entropy loss: (idx, targets) -> loss, or (loss, logits) for the
    checks. nanoGPT computes its loss itself (and returns it); the Llama returns the logits. A
    step that returned the logits too would give Thunder's backward a zero gradient of them to add
    (786 MB for nanoGPT's), which eager autograd never materialises."""
    import torch.nn.functional as F

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, idx, targets):
            out = self.model(idx, targets)
            if isinstance(out, tuple):
                logits, loss = out
            else:
                logits, loss = out, F.cross_entropy(out.view(-1, vocab), targets.view(-1))
            return (loss, logits) if with_logits else loss

    return Step()


# A viewfuse system's name after "thunder+viewfuse": modifiers, each a compile option.
VIEWFUSE_MODIFIERS = {"+matmul": {"vf_matmul": True}, "-matmul": {"vf_matmul": False},
                      "-epilogues": {"vf_matmul_epilogues": False}, "+attention": {"vf_attention": True},
                      "-attention": {"vf_attention": False}, "+consecutive": {"fusion_type": "consecutive"},
                      "+dataflow": {"fusion_type": "dataflow"}}
SWITCHABLE_SCHEDULES = "sliced,preload,prefetch,deep,warp-rows,exact-groups,compact"  # codegen/schedule_cuda.h schedule_enabled


class ScheduledSystem:
    """A system whose steps run with schedule switches in the environment (see step())."""

    def __init__(self, fn, environment: dict):
        self.fn, self.environment = fn, environment

    def __call__(self, *args):
        return self.fn(*args)


def make_system(torch, name: str, module):
    import thunder

    if name.endswith("+plain"):
        return ScheduledSystem(make_system(torch, name.removesuffix("+plain"), module),
                               {"VF_DISABLE_SCHEDULES": SWITCHABLE_SCHEDULES})
    switch = re.search(r"\+(without|with)-([\w-]+)$", name)
    if switch:  # switches add up: thunder+viewfuse+with-a+with-b enables a and b
        variable = "VF_DISABLE_SCHEDULES" if switch.group(1) == "without" else "VF_ENABLE_SCHEDULES"
        inner = make_system(torch, name[:switch.start()], module)
        environment = dict(inner.environment) if isinstance(inner, ScheduledSystem) else {}
        environment[variable] = ",".join(filter(None, [environment.get(variable, ""), switch.group(2)]))
        return ScheduledSystem(inner.fn if isinstance(inner, ScheduledSystem) else inner, environment)

    if name == "eager":
        return module
    if name == "torch.compile":
        return torch.compile(module, dynamic=False)
    if name == "thunder+torchcompile":
        return thunder.jit(module, executors=[thunder.get_executor("torchcompile"), thunder.get_executor("sdpa")])
    from viewfuse.thunder import viewfuse_ex

    if name == "thunder+viewfuse+defaults":
        return thunder.jit(module, executors=[viewfuse_ex, *thunder.get_default_executors()])
    if name.startswith("thunder+viewfuse"):  # with the sdpa executor; modifiers set compile options
        options = {}
        for modifier in re.findall(r"[+-]\w+", name[len("thunder+viewfuse"):]):
            if modifier not in VIEWFUSE_MODIFIERS:
                raise SystemExit(f"unknown system {name!r}: {modifier} is none of {sorted(VIEWFUSE_MODIFIERS)}")
            options.update(VIEWFUSE_MODIFIERS[modifier])
        return thunder.jit(module, executors=[viewfuse_ex, thunder.get_executor("sdpa")], **options)
    raise SystemExit(f"unknown system {name!r}")


def build(torch, model_name: str, small: bool, dtype, device, seed: int = 0, with_logits: bool = False):
    make, batch, seq, vocab = model_config(model_name, small)
    torch.manual_seed(seed)
    with torch.device(device):
        model = make().to(dtype)
    g = torch.Generator(device="cpu").manual_seed(seed)
    idx = torch.randint(0, vocab, (batch, seq), generator=g).to(device)
    targets = torch.randint(0, vocab, (batch, seq), generator=g).to(device)
    return with_loss(torch, model, vocab, with_logits), idx, targets


def step(fn, module, idx, targets):
    environment = getattr(fn, "environment", None)
    if environment is not None:  # the backward's regions compile in loss.backward(): the whole step
        with unittest.mock.patch.dict(os.environ, environment):
            return step(fn.fn, module, idx, targets)
    out = fn(idx, targets)
    loss, logits = out if isinstance(out, tuple) else (out, None)
    loss.backward()
    grads = {n: p.grad for n, p in module.named_parameters() if p.grad is not None}
    for p in module.parameters():
        p.grad = None
    return loss, logits, grads


# ---- 1. correctness ----

def check_system(torch, model_name: str, system: str, device) -> str:
    """'ok', or what differs from eager, on the small f32 config."""
    module, idx, targets = build(torch, model_name, True, torch.float32, device, with_logits=True)
    want = step(module, module, idx, targets)
    fn = make_system(torch, system, module)
    got = step(fn, module, idx, targets)
    pairs = [("loss", got[0], want[0]), ("logits", got[1], want[1])]
    pairs += [(f"grad of {n}", got[2].get(n), g) for n, g in want[2].items()]
    for what, g, w in pairs:
        if g is None:
            return f"{what}: missing"
        try:
            torch.testing.assert_close(g, w, rtol=2e-4, atol=2e-5)
        except AssertionError as e:
            return f"{what}: " + " ".join(str(e).split())[:300]
    return "ok"


# ---- 3. regions ----

class RegionRecorder:
    """viewfuse_ex.region_hook: the trace, runner and argument layouts of each region's first call."""

    def __init__(self):
        self.regions = {}  # fusion name -> dict

    def __call__(self, name, text, runner, args):
        if name not in self.regions:
            self.regions[name] = {"text": text, "runner": runner, "args": [describe_arg(a) for a in args]}
        return runner(*args)


def describe_arg(a):
    import torch

    if isinstance(a, torch.Tensor):
        return {"shape": tuple(a.shape), "stride": tuple(a.stride()), "dtype": a.dtype, "offset": a.storage_offset(),
                "device": a.device}
    return {"value": a}


def fresh_arg(torch, d, gen):
    if "value" in d:
        return d["value"]
    extent = d["offset"] + 1 + sum((s - 1) * st for s, st in zip(d["shape"], d["stride"]) if s > 0)
    if d["dtype"] == torch.bool:
        flat = torch.rand(extent, generator=gen, device=d["device"]) > 0.5
    elif d["dtype"].is_floating_point:
        flat = torch.randn(extent, generator=gen, device=d["device"], dtype=torch.float32).to(d["dtype"])
    else:
        flat = torch.randint(0, 7, (extent,), generator=gen, device=d["device"]).to(d["dtype"])
    return torch.as_strided(flat, d["shape"], d["stride"], d["offset"])


def distinct_bytes(torch, tensors) -> int:
    """The bytes the tensors hold, each element once: a dim of stride 0 (an expand) counts once, and
    tensors over the same bytes of one storage (a value returned twice, an output and its view)
    count once."""
    spans = {}
    for x in tensors:
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            continue
        start = x.data_ptr()
        end = start + x.element_size() * (1 + sum((n - 1) * abs(st) for n, st in zip(x.shape, x.stride())))
        n = 1
        for size, stride in zip(x.shape, x.stride()):
            n *= size if stride != 0 else 1
        spans[(start, end)] = max(spans.get((start, end), 0), n * x.element_size())
    return sum(spans.values())


def region_layout_lines(text: str, args) -> str:
    """The region's trace with its inputs' layouts as repro `# layout` lines (runtime/repro.h)."""
    names = re.match(r"def \w+\(([^)]*)\)", text).group(1).split(", ")
    lines = []
    for name, d in zip(names, args):
        if "shape" in d:
            lines.append(f"# layout {name}: sizes {list(d['shape'])} strides {list(d['stride'])} offset {d['offset']}")
    return "\n".join(lines) + ("\n" if lines else "") + text


def region_form(text: str) -> str:
    """The region's trace (with its layout lines) with every value renamed by order of appearance:
    the regions of a model's layers have one form."""
    head = re.search(r"^def \w+\(([^)]*)\)", text, re.M)
    names = [a.strip() for a in head.group(1).split(",") if a.strip()]
    for lhs in re.findall(r"^\s+\(?([\w, ]+?)\)? = prims\.", text, re.M):
        names += [n.strip() for n in lhs.split(",") if n.strip()]
    rename = {n: f"v{i}" for i, n in enumerate(dict.fromkeys(names))}
    text = re.sub(r"^def \w+\(", "def region(", text, flags=re.M)
    return re.sub(r"[A-Za-z_]\w*", lambda m: rename.get(m.group(0), m.group(0)), text)


def time_regions(torch, timer: Timer, recorder: RegionRecorder, runs: int, ceiling_gbps: float, save_dir, model_name,
                 results_stamp: str = ""):
    rows = []
    gen = torch.Generator(device=timer.device).manual_seed(7)
    forms = {}  # region form -> the file its first region was saved as
    for name, r in recorder.regions.items():
        args = [fresh_arg(torch, d, gen) for d in r["args"]]
        runner = r["runner"]
        form = region_form(region_layout_lines(r["text"], r["args"]))
        first = form not in forms
        if first:
            forms[form] = f"{model_name}_{len(forms):03d}.py"
        row = {"region": name, "ops": r["text"].count("= prims."), "trace": forms[form]}
        try:
            plan = json.loads(runner.explain_json(args))
            row["kernels"] = plan["kernels"]
            row["kernel_names"] = [s.get("kernel_name", "") for s in plan["segments"] if s.get("kind") == "kernel"]
            row["library"] = sum(1 for s in plan["segments"] if s.get("kind") == "library")
            outs = runner(*args)
            row["bytes"] = distinct_bytes(torch, list(args) + list(outs))
            del outs
            for _ in range(3):
                runner(*args)
            row["us"] = timer.gpu_us(lambda: runner(*args), lambda: None, runs)
            # A region of views only (no kernel) moves no bytes: it has no share of the ceiling; nor
            # has one with matmuls (library calls), whose time is mostly arithmetic.
            moves = row["kernels"] > 0 and not row["library"] and ceiling_gbps
            row["pct"] = row["bytes"] / row["us"] / 1e3 / ceiling_gbps if moves else None
        except Exception as e:  # noqa: BLE001
            row["error"] = f"{type(e).__name__}: {e}"
        if save_dir and first:
            os.makedirs(save_dir, exist_ok=True)
            with open(os.path.join(save_dir, row["trace"]), "w") as f:
                f.write(f"# {model_name} step ({results_stamp}), region {name} and the regions of its form: "
                        f"{row.get('kernels', '?')} kernel(s)\n")
                f.write(region_layout_lines(r["text"], r["args"]))
        rows.append(row)
        del args
    rows.sort(key=lambda x: (x.get("pct") is None, x.get("pct") or 0))
    return rows


# ---- 2. steps ----

def run_model(torch, args, model_name: str, systems: list[str], timer: Timer, ceiling_gbps) -> dict:
    device = timer.device
    dtype = torch.float32 if args.small or device.type == "cpu" else torch.bfloat16
    result = {"model": model_name, "systems": {}, "regions": []}
    if not args.skip_check:
        for s in systems:
            if s not in args.check_systems.split(","):
                continue
            try:
                result["systems"].setdefault(s, {})["check"] = check_system(torch, model_name, s, device)
            except Exception as e:  # noqa: BLE001
                result["systems"].setdefault(s, {})["check"] = f"error: {type(e).__name__}: {e}"[:400]
            print(f"  check {s}: {result['systems'][s]['check']}", flush=True)
    module, idx, targets = build(torch, model_name, args.small, dtype, device)
    _, batch, seq, _ = model_config(model_name, args.small)
    result.update(batch=batch, seq=seq, dtype=str(dtype).replace("torch.", ""),
                  params=sum(p.numel() for p in module.parameters()))
    from viewfuse.thunder import viewfuse_ex

    fns, recorder = {}, RegionRecorder()
    for s in systems:
        entry = result["systems"].setdefault(s, {})
        try:
            viewfuse_ex.region_hook = recorder if s == args.regions_system else None
            fn = make_system(torch, s, module)
            t0 = time.perf_counter()
            step(fn, module, idx, targets)
            timer.sync()
            entry["first_step_s"] = time.perf_counter() - t0
            for _ in range(args.warmup):
                step(fn, module, idx, targets)
            fns[s] = fn
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {e}"[:600]
            print(traceback.format_exc(), file=sys.stderr)
        finally:
            viewfuse_ex.region_hook = None
        print(f"  {s}: {entry.get('error') or 'compiled, %.1f s first step' % entry['first_step_s']}", flush=True)
    # Peak memory of one step, above what is allocated before it (parameters, inputs).
    for s, fn in fns.items():
        if device.type == "cuda":
            timer.sync()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            step(fn, module, idx, targets)
            timer.sync()
            result["systems"][s]["peak_bytes"] = torch.cuda.max_memory_allocated() - base
    errors = {}
    times = timer.gpu_times_interleaved({s: (lambda fn=fn: step(fn, module, idx, targets)) for s, fn in fns.items()},
                                        lambda: None, {s: args.steps for s in fns}, errors, seed=1)
    for s, t in times.items():
        result["systems"][s]["ms"] = statistics.median(t) / 1e3
        result["systems"][s]["ms_all"] = [round(x / 1e3, 3) for x in t]
    for s, e in errors.items():
        result["systems"][s]["error"] = e
    if args.profile and device.type == "cuda":
        for s, fn in fns.items():
            prof = result["systems"][s]["profile"] = profile_step(torch, lambda fn=fn: step(fn, module, idx, targets))
            for name, count, us in prof["top_other_kernels"]:
                print(f"  profile {s}: {us:9.1f} us {count:4d}x {name}", flush=True)
            for name, count, us in prof["top_viewfuse_kernels"]:
                print(f"  profile {s} (viewfuse): {us:9.1f} us {count:4d}x {name}", flush=True)
            for before, after, count, us in prof["top_gaps"]:
                print(f"  profile {s} (GPU idle, {model_name}): {us:9.1f} us {count:4d}x {before} -> {after}", flush=True)
            for name, count, us in prof["copies"]:
                print(f"  profile {s} (copies, {model_name}): {us:9.1f} us {count:4d}x {name}", flush=True)
            if args.trace_dir:
                save_trace(torch, lambda fn=fn: step(fn, module, idx, targets),
                           os.path.join(args.trace_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", f"{model_name}-{s}") + ".json.gz"))
    if recorder.regions:
        save = None if args.small else os.path.join(args.regions_dir)
        stamp = f"{datetime.date.today().isoformat()}, {timer.torch.cuda.get_device_name() if device.type == 'cuda' else 'CPU'}"
        result["regions"] = time_regions(torch, timer, recorder, args.region_runs, ceiling_gbps, save, model_name, stamp)
        result["regions_system"] = args.regions_system
    return result


# The kinds of GPU kernels in a step's profile, first match wins (kernel names as CUPTI reports them).
KERNEL_KINDS = (
    ("viewfuse", re.compile(r"^vf_")),
    # before matmul: the memory-efficient attention kernels are named fmha_cutlass*
    ("attention", re.compile(r"flash|fmha|attention|cudnn", re.I)),
    ("matmul", re.compile(r"gemm|nvjet|cutlass|xmma|cublas|splitKreduce", re.I)),
    ("triton (torch.compile)", re.compile(r"^triton_")),
    ("other", re.compile(r"")),
)


def profile_step(torch, run) -> dict:
    """GPU time of one step by kernel kind, from torch.profiler: {kind: us}, with the step's wall
    time from the first kernel's start to the last one's end ("span") and the kernel count; the
    stretches where the GPU ran nothing (idle_gaps; memcpy and memset count as running) and the
    memcpy and memset events by name."""
    events = profiled(torch, run, [torch.profiler.ProfilerActivity.CUDA], lambda prof: list(prof.events()))
    kinds = {k: 0.0 for k, _ in KERNEL_KINDS}
    by_name = {}  # kernel name -> [count, us]
    starts, ends, count = [], [], 0
    spans = []  # (start, end, name) of every kernel, memcpy and memset
    copies = {}  # memcpy and memset event name -> [count, us]: busy, but not kernels
    for e in events:
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.time_range.end - e.time_range.start
        spans.append((e.time_range.start, e.time_range.end, e.name[:60]))
        if "memcpy" in e.name.lower() or "memset" in e.name.lower():
            _tally(copies, e.name[:60], us)
            continue
        kinds[next(k for k, pattern in KERNEL_KINDS if pattern.search(e.name))] += us
        _tally(by_name, e.name[:120], us)
        starts.append(e.time_range.start)
        ends.append(e.time_range.end)
        count += 1

    def top(table: dict, keep, most: int) -> list:  # [[name, count, us], ...], the most time first
        return sorted(([n, c, round(us, 1)] for n, (c, us) in table.items() if keep(n)), key=lambda x: -x[2])[:most]

    return {"kinds_us": kinds, "kernels": count, "span_us": (max(ends) - min(starts)) if starts else 0.0,
            "top_other_kernels": top(by_name, lambda n: not n.startswith("vf_"), 12),
            "top_viewfuse_kernels": top(by_name, lambda n: n.startswith("vf_"), 12), "top_gaps": idle_gaps(spans),
            "copies": top(copies, lambda n: True, 8)}


def profiled(torch, run, activities, read):
    """read(profiler) of the second of two steps under torch.profiler; the first is its warm-up. In a
    profile without one, the step's first launch took 746 us on the host (Llama, session 28; the
    other 299 launches 5 us each), after which the GPU sat idle: the 0.6-2.7 ms stretch after the
    first region that every profiled viewfuse step of sessions 25 to 28 showed."""
    from torch.profiler import profile, schedule

    got = []
    torch.cuda.synchronize()
    with profile(activities=activities, schedule=schedule(wait=0, warmup=1, active=1),
                 on_trace_ready=lambda prof: got.append(read(prof))) as prof:
        for _ in range(2):
            run()
            torch.cuda.synchronize()
            prof.step()
    return got[0]


def save_trace(torch, run, path: str) -> None:
    """One step under torch.profiler with the host's activity and the GPU's, as a gzipped Chrome trace."""
    import gzip
    import tempfile

    from torch.profiler import ProfilerActivity

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        profiled(torch, run, [ProfilerActivity.CPU, ProfilerActivity.CUDA], lambda prof: prof.export_chrome_trace(tmp.name))
        with open(tmp.name, "rb") as src, gzip.open(path, "wb") as dst:
            dst.write(src.read())
    print(f"  trace: {path}", flush=True)


def _tally(table: dict, name: str, us: float) -> None:
    entry = table.setdefault(name, [0, 0.0])
    entry[0] += 1
    entry[1] += us


def idle_gaps(spans, at_least_us: float = 5.0, top: int = 12) -> list:
    """Where the GPU ran nothing: each stretch of at least at_least_us with no kernel, memcpy or
    memset running, named by the events on either side ("before -> after"), summed over the step:
    [[before, after, count, us], ...], the longest total first."""
    by_pair, busy_until, before = {}, None, None
    for start, end, name in sorted(spans):
        if busy_until is not None and start - busy_until >= at_least_us:
            entry = by_pair.setdefault((before, name), [0, 0.0])
            entry[0] += 1
            entry[1] += start - busy_until
        if busy_until is None or end > busy_until:
            busy_until, before = end, name
    return sorted(([b, a, c, round(us, 1)] for (b, a), (c, us) in by_pair.items()), key=lambda x: -x[3])[:top]


# ---- the report ----

def _ms(x):
    return "-" if x is None else f"{x:.2f}"


def write_report(results: dict, out: str) -> None:
    lines = [f"# Model training steps through Thunder ({results['date']})", "",
             f"GPU: {results['gpu']}; commit {results['commit']}; torch {results['torch']}, Thunder {results['thunder']}; "
             f"copy ceiling {results['ceiling_gbps']:.0f} GB/s (measured in this run).", "",
             "Written by `bench/model_steps.py`: one step is forward, cross-entropy loss and backward, no optimizer. "
             "Step time: CUDA events around the whole step, the systems' steps interleaved (each round every "
             f"system once, shuffled), median of {results['steps']} rounds after {results['warmup']} warm-up steps; peak "
             "memory: the most allocated during a step above what was allocated before it. Correctness: loss, logits "
             "and every gradient against eager on small f32 configs (rtol 2e-4, atol 2e-5).", ""]
    if results.get("dropout"):
        lines += [f"The timed models train with dropout {results['dropout']} (the checks on small configs with "
                  "none: a random mask is not eager's).", ""]
    if results.get("note"):  # what a merge of runs says about them
        lines += [results["note"], ""]
    for m in results["models"]:
        lines += [f"## {m['model']}: batch {m.get('batch')} x {m.get('seq')}, {m.get('dtype')}, "
                  f"{m.get('params', 0) / 1e6:.0f}M parameters", "",
                  "| system | step ms | vs eager | peak memory MiB | first step s | check (small f32) |", "|---|---|---|---|---|---|"]
        eager = m["systems"].get("eager", {}).get("ms")
        for s, r in m["systems"].items():
            ms = r.get("ms")
            rel = f"{eager / ms:.2f}x" if ms and eager else "-"
            peak = f"{r['peak_bytes'] / 2**20:,.0f}" if r.get("peak_bytes") is not None else "-"
            first = f"{r['first_step_s']:.1f}" if r.get("first_step_s") is not None else "-"
            check = r.get("check", "-" if s != "eager" else "(reference)")
            err = f" error: {r['error']}" if r.get("error") else ""
            lines.append(f"| {s} | {_ms(ms)}{err} | {rel} | {peak} | {first} | {check} |")
        profiled = {s: r["profile"] for s, r in m["systems"].items() if r.get("profile")}
        if profiled:
            kinds = [k for k, _ in KERNEL_KINDS]
            lines += ["", "Where a step's GPU time goes (one step under torch.profiler, kernels by name; ms; the span "
                      "is from the first kernel's start to the last one's end, so span minus the kernels' sum is "
                      "time the GPU waited for the host):", "",
                      "| system | kernels | " + " | ".join(kinds) + " | sum | span |", "|---" * (len(kinds) + 4) + "|"]
            for s, p in profiled.items():
                us = p["kinds_us"]
                lines.append(f"| {s} | {p['kernels']} | " + " | ".join(f"{us.get(k, 0) / 1e3:.2f}" for k in kinds) +
                             f" | {sum(us.values()) / 1e3:.2f} | {p['span_us'] / 1e3:.2f} |")
        regions = m.get("regions") or []
        if regions:
            big = [r for r in regions if r.get("bytes", 0) > 2**20 and r.get("pct") is not None]  # kernels, no calls
            calls = sum(r.get("library", 0) for r in regions)
            total = sum(r.get("us", 0) for r in regions) / 1e3
            kernels = sum(r.get("kernels", 0) for r in regions)
            multi = sum(1 for r in regions if r.get("kernels", 0) > 1)
            at70 = sum(1 for r in big if r["pct"] >= 0.70)
            # One row per region form (the regions of a model's layers share one), worst first.
            forms = {}
            for r in regions:
                f = forms.setdefault(r["trace"], {"count": 0, "us": [], "pct": [], "first": r})
                f["count"] += 1
                if r.get("us") is not None:
                    f["us"].append(r["us"])
                if r.get("pct") is not None:
                    f["pct"].append(r["pct"])
            order = sorted(forms.items(), key=lambda kv: (not kv[1]["pct"], statistics.median(kv[1]["pct"]) if kv[1]["pct"] else 0))
            lines += ["", f"{len(regions)} viewfuse regions of {m.get('regions_system', 'thunder+viewfuse')}'s step "
                      f"({len(forms)} forms), {kernels} kernels ({multi} regions of more "
                      f"than one) and {calls} library calls (matmuls), {total:.2f} ms of GPU time when each runs alone; of "
                      f"the {len(big)} regions of more than 1 MiB without matmuls, {at70} at 70% of the copy ceiling or "
                      "more. One row per form, worst first (GPU time and % of the ceiling: the median over the form's "
                      "regions; a region with matmuls has no share of the ceiling):", "",
                      "| form (trace) | regions | GPU us | MB moved | % of ceiling | kernels | ops | kernel names |",
                      "|---|---|---|---|---|---|---|---|"]
            for trace, f in order:
                r = f["first"]
                pct = (f"{statistics.median(f['pct']):.0%}" if f["pct"] else f"{r['library']} matmul(s)" if r.get("library")
                       else "views only" if r.get("kernels") == 0 else "-")
                us = f"{statistics.median(f['us']):.1f}" if f["us"] else r.get("error", "-")[:80]
                names = " ".join(n for n in r.get("kernel_names", []) if n)
                lines.append(f"| {trace} | {f['count']} | {us} | {r.get('bytes', 0) / 1e6:.1f} | {pct} | "
                             f"{r.get('kernels', '-')} | {r['ops']} | {names} |")
        lines.append("")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines))
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1, default=str)
    try:
        plot(results, os.path.splitext(out)[0] + ".png")
    except ImportError:
        pass


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = results["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4), squeeze=False)
    for ax, m in zip(axes[0], models):
        names = [s for s, r in m["systems"].items() if r.get("ms")]
        ax.barh(names, [m["systems"][s]["ms"] for s in names], color=["#888" if "viewfuse" not in s else "#c33" for s in names])
        ax.set_xlabel("step ms (lower is better)")
        ax.set_title(f"{m['model']} ({m.get('dtype')}, batch {m.get('batch')} x {m.get('seq')})")
        ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    global DROPOUT
    args = parse_args(argv)
    DROPOUT = args.dropout
    warnings.filterwarnings("ignore")
    import torch
    import thunder

    device = torch.device(args.device)
    timer = Timer(torch, device)
    ceiling = copy_ceiling(torch, timer, device.type != "cuda" or args.small, 20) if device.type == "cuda" else {"gbps": None}
    results = {"date": datetime.date.today().isoformat(), "commit": commit_name(args.commit),
               "gpu": torch.cuda.get_device_name() if device.type == "cuda" else "none (CPU)",
               "torch": torch.__version__, "thunder": getattr(thunder, "__version__", "?"),
               "ceiling_gbps": ceiling["gbps"] or 0.0, "steps": args.steps, "warmup": args.warmup, "models": [],
               "dropout": args.dropout}
    systems = [s for s in args.systems.split(",") if s]
    for name in [m for m in args.models.split(",") if m]:
        print(f"== {name}", flush=True)
        try:
            results["models"].append(run_model(torch, args, name, systems, timer, ceiling["gbps"]))
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            results["models"].append({"model": name, "systems": {}, "error": f"{type(e).__name__}: {e}"})
        write_report(results, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
