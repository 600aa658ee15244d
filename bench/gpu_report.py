"""docs/benchmarks.md and its plot from the results of bench/gpu_bench.py (a dict, also its JSON)."""

from __future__ import annotations

import os

SYSTEMS = ("eager", "compile", "viewfuse")


def _us(x) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def _system(case: dict, name: str) -> dict:
    return case.get("systems", {}).get(name, {})


def _cell(case: dict, name: str) -> str:
    s = _system(case, name)
    if s.get("us") is None:
        if (s.get("error") or "").startswith("skipped"):
            return "skipped"
        return "error" if s.get("error") else "-"
    mark = "" if s.get("check") in ("ok", None) else " (wrong)"
    return _us(s["us"]) + mark


def _speedup(case: dict, peer: str) -> str:
    vf, other = _system(case, "viewfuse").get("us"), _system(case, peer).get("us")
    return f"{other / vf:.2f}x" if vf and other else "-"


def _pct(case: dict, name: str, ceiling: float):
    """Fraction of the copy ceiling (the one measured in the case's own run, when recorded)."""
    us = _system(case, name).get("us")
    ceiling = case.get("ceiling_gbps") or ceiling
    return case["bytes"] / us / 1e3 / ceiling if us and case.get("bytes") else None


def _memory_table(results: dict) -> list[str]:
    ceiling = results["ceiling"]["gbps"]
    out = ["| case | MB moved | eager us | compile us | viewfuse us | viewfuse GB/s | % of ceiling: eager / compile / "
           "**viewfuse** | viewfuse vs eager | vs compile | target | viewfuse check |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in results["cases"]:
        if c.get("group") != "memory" or "bytes" not in c:
            continue
        pcts = [_pct(c, s, ceiling) for s in SYSTEMS]
        pct_text = " / ".join("-" if p is None else (f"**{p:.0%}**" if s == "viewfuse" else f"{p:.0%}")
                              for s, p in zip(SYSTEMS, pcts))
        vf = _system(c, "viewfuse")
        gbps = f"{c['bytes'] / vf['us'] / 1e3:.0f}" if vf.get("us") else "-"
        comp = _system(c, "compile").get("us")
        held = "-"
        bound = _bound(c)
        if bound is not None and bound[0] is not None:
            held = ("holds" if bound[0] else "missed") + f" ({bound[1]})"
        elif bound is None and pcts[2] is not None:
            ok = pcts[2] >= c["target"] and (comp is None or vf["us"] <= comp)
            held = ("holds" if ok else "missed") + f" ({c['target']:.0%}" + (", <= compile)" if comp else ")")
        mb = c["bytes"] / 1e6
        mb_text = f"{mb:,.0f}" if mb >= 10 else f"{mb:.2f}"
        out.append(f"| {c['name']} | {mb_text} | {_cell(c, 'eager')} | {_cell(c, 'compile')} | "
                   f"{_cell(c, 'viewfuse')} | {gbps} | {pct_text} | {_speedup(c, 'eager')} | "
                   f"{_speedup(c, 'compile')} | {held} | {vf.get('check') or '-'} |")
    return out


def _einsum_table(results: dict) -> list[str]:
    out = ["| case | eager us | compile us | viewfuse us | viewfuse vs eager | vs compile | REFERENCE eager / compile |",
           "|---|---|---|---|---|---|---|"]
    for c in results["cases"]:
        if c.get("group") != "einsum":
            continue
        ref = c.get("reference_us")
        out.append(f"| {c['name']} | {_cell(c, 'eager')} | {_cell(c, 'compile')} | {_cell(c, 'viewfuse')} | "
                   f"{_speedup(c, 'eager')} | {_speedup(c, 'compile')} | "
                   f"{f'{ref[0]} / {ref[1]}' if ref else '-'} |")
    return out


def _cpp_times(results: dict) -> dict:
    """Google Benchmark's real time per iteration in us, by benchmark name: the median of the
    repetitions when the run has repetitions, else the one measurement."""
    host = results.get("cpp", {}).get("host_latency", {})
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    rows = host.get("benchmarks", [])
    if any(b.get("aggregate_name") for b in rows):
        rows = [dict(b, name=b["run_name"]) for b in rows if b.get("aggregate_name") == "median"]
    return {b["name"]: b["real_time"] * scale.get(b.get("time_unit", "ns"), 1e-3) for b in rows}


def _launch_floor(results: dict):
    """(us, what): the bare cuLaunchKernel from C++ when it ran, else a torch fill_ launch from Python."""
    bare = [us for name, us in _cpp_times(results).items() if name.startswith("BM_CudaBareLaunch4Args")]
    if bare:
        return min(bare), "bare cuLaunchKernel from C++"
    fills = [c["fill_us"] for c in results["cases"] if c.get("fill_us") is not None]
    return (min(fills), "torch fill_ from Python") if fills else (None, "")


def _host_table(results: dict) -> list[str]:
    floor, floor_what = _launch_floor(results)
    out = ["| case | eager us | compile us | viewfuse us | viewfuse above the floor us | REFERENCE eager / compile |",
           "|---|---|---|---|---|---|"]
    for c in results["cases"]:
        if c.get("group") != "host":
            continue
        vf = _system(c, "viewfuse").get("us")
        above = f"{vf - floor:+.1f}" if vf is not None and floor is not None else "-"
        ref = c.get("reference_us")
        out.append(f"| {c['name']} | {_cell(c, 'eager')} | {_cell(c, 'compile')} | {_cell(c, 'viewfuse')} | "
                   f"{above} | {f'{ref[0]} / {ref[1]}' if ref else '-'} |")
    fills = [c["fill_us"] for c in results["cases"] if c.get("fill_us") is not None]
    out.append("")
    if floor is not None:
        out.append(f"The floor: {floor_what}, {floor:.1f} us per call.")
    if fills:
        out.append(f"One `Tensor.fill_` launch from Python: {min(fills):.1f} us per call (median of batches).")
    return out


def _cpp_sections(results: dict) -> list[str]:
    cpp = results.get("cpp")
    if not cpp:
        return ["Not run in this run (pass `--cpp-build DIR` with a build made with `-DVF_BUILD_BENCH=ON`)."]
    out = []
    host = cpp.get("host_latency", {})
    if "benchmarks" in host:
        times = _cpp_times(results)
        bare = [times[k] for k in times if k.startswith("BM_CudaBareLaunch4Args")]
        floor = min(bare) if bare else None
        out += ["| benchmark | real time us | above bare cuLaunchKernel us |", "|---|---|---|"]
        for name, us in times.items():
            above = f"{us - floor:+.2f}" if floor is not None and name.startswith("BM_CudaRun") else "-"
            out.append(f"| {name} | {us:.2f} | {above} |")
        note = cpp.get("host_latency_stderr", "").strip()
        if "skipped" in note:
            out += ["", "Note: " + note]
        out += ["", "Each time is the median of the benchmark's repetitions, run in random interleaved order "
                "(Google Benchmark). "
                "BM_CpuRun_* include the tiny CPU kernel itself; BM_CudaRun_* take outputs from a reusing "
                "allocator hook, as the Python package does through PyTorch's caching allocator "
                "(*_DriverAlloc: cuMemAlloc/cuMemFree per call)."]
    else:
        out.append(f"host latency benchmark failed: {host.get('error', 'no output')}")
    out.append("")
    first = cpp.get("first_call", {})
    if "error" in first:
        out.append(f"first-call benchmark failed: {first['error']}")
    else:
        out += ["| first call | ms |", "|---|---|"]
        for k, v in first.items():
            out.append(f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |")
    return out


def _bound(c: dict):
    """Issue 25's bound of a case against eager (Case.bound), if it has one: (holds, text), holds None
    when unmeasured."""
    if not c.get("bound"):
        return None
    factor, slack = c["bound"]
    text = (f"<= {factor:.2f}x eager" if factor >= 1 else f">= {1 / factor:.2f}x faster than eager") + \
        (f" + {slack:g} us" if slack else "")
    vf, eager = _system(c, "viewfuse"), _system(c, "eager")
    if vf.get("us") is None or eager.get("us") is None:
        return None, text
    return vf["us"] <= eager["us"] * factor + slack and vf.get("check") == "ok", text


def _targets(results: dict) -> list[str]:
    """Issue 7's and issue 25's targets, one line each, from what this run measured."""
    out = ["| target | measured | holds |", "|---|---|---|"]
    ceiling = results["ceiling"]["gbps"]
    for c in results["cases"]:
        bound = _bound(c)
        if bound is not None:
            vf, eager = _system(c, "viewfuse").get("us"), _system(c, "eager").get("us")
            measured = f"{vf:,.1f} us, eager {eager:,.1f} us" if vf is not None and eager is not None else "not measured"
            out.append(f"| {c['name']}: {bound[1]} | {measured} | {'yes' if bound[0] else 'no'} |")
            continue
        if c.get("group") != "memory" or "bytes" not in c:
            continue
        p = _pct(c, "viewfuse", ceiling)
        comp = _system(c, "compile").get("us")
        vf = _system(c, "viewfuse").get("us")
        if p is None:
            out.append(f"| {c['name']}: >= {c['target']:.0%} of ceiling, not slower than compile | not measured | no |")
            continue
        ok = p >= c["target"] and (comp is None or vf <= comp) and _system(c, "viewfuse").get("check") == "ok"
        vs = f", {comp / vf:.2f}x compile" if comp else ""
        out.append(f"| {c['name']}: >= {c['target']:.0%} of ceiling, not slower than compile | {p:.0%}{vs} | "
                   f"{'yes' if ok else 'no'} |")
    times = _cpp_times(results)
    bare = [us for name, us in times.items() if name.startswith("BM_CudaBareLaunch4Args")]
    if bare and "BM_CudaRun_Pointwise3" in times:
        above = times["BM_CudaRun_Pointwise3"] - min(bare)
        out.append(f"| one-kernel fusion from C++ <= bare cuLaunchKernel ({min(bare):.2f} us) + 1 us | "
                   f"{times['BM_CudaRun_Pointwise3']:.2f} us ({above:+.2f}) | {'yes' if above <= 1 else 'no'} |")
    host = {c["name"]: c for c in results["cases"] if c.get("group") == "host"}
    alias = _system(host.get("host_alias_only", {}), "viewfuse").get("us")
    out.append(f"| alias-only fusion from Python <= 2 us | {_us(alias)} us | "
               f"{'-' if alias is None else ('yes' if alias <= 2 else 'no')} |")
    vf = _system(host.get("host_pointwise3", {}), "viewfuse").get("us")
    floor, floor_what = _launch_floor(results)
    if vf is not None and floor is not None:
        out.append(f"| one-kernel fusion from Python <= floor + 3 us (floor: {floor_what}, {floor:.1f} us) | "
                   f"{vf:.1f} us ({vf - floor:+.1f}) | {'yes' if vf - floor <= 3 else 'no'} |")
    first = results.get("cpp", {}).get("first_call", {})
    colds = [v for k, v in first.items() if k.startswith("nvrtc_cold_compile_ms/")]
    if colds:
        out.append(f"| cold compile of a typical kernel <= 150 ms (NVRTC loaded) | {max(colds):.0f} ms (slowest) | "
                   f"{'yes' if max(colds) <= 150 else 'no'} |")
    hits = [v for k, v in first.items() if k.startswith("first_run_disk_cache_ms/")]
    if hits:
        out.append(f"| fusion found in the disk cache <= 5 ms | {max(hits):.2f} ms (slowest) | "
                   f"{'yes' if max(hits) <= 5 else 'no'} |")
    return out


def _errors(results: dict) -> list[str]:
    out = []
    for c in results["cases"]:
        if c.get("error"):
            out.append(f"- {c['name']}: {c['error']}")
        if c.get("skipped"):
            out.append(f"- {c['name']}: not run ({c['skipped']})")
        for name, s in c.get("systems", {}).items():
            if s.get("error") and not s["error"].startswith("skipped"):
                out.append(f"- {c['name']} / {name}: {s['error'][:400]}")
            elif s.get("check") not in (None, "ok"):
                out.append(f"- {c['name']} / {name}: output differs from eager: {s['check'][:400]}")
    return out or ["None."]


def markdown(results: dict, png_name: str = "benchmarks.png") -> str:
    ceil = results["ceiling"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `bench/gpu_bench.py` (do not edit by hand; README \"Reproducing the benchmarks\" says how to "
        "run it).",
        "",
        f"- date: {results['date']}; device: {results['device']}; torch {results['torch']}, CUDA {results['cuda']}; "
        f"commit: {results['commit']}",
        f"- command: `{results['command']}`" + (" (quick: small sizes, not for comparison)" if results.get("quick")
                                                 else ""),
        f"- copy ceiling, measured in this run: {ceil['gbps']:,.0f} GB/s (a {ceil['bytes'] // 2 >> 20} MiB "
        f"device-to-device copy, bytes read + written, {ceil['us']:.0f} us)",
        f"- method: GPU time from CUDA events, median of up to {results['reps']} runs per system, each on fresh random "
        "data with the L2 cache flushed (a 256 MiB buffer written) before it"
        + ("; a case's systems are timed interleaved (each round runs every system once, in a shuffled order)"
           if results.get("interleaved") else "; one system after the other")
        + "; every system's outputs are checked against eager first. GB/s counts each input and output byte once. "
        "'compile' is `torch.compile(dynamic=False)`.",
    ]
    if results.get("viewfuse_import_error"):
        lines.append(f"- viewfuse could not be imported: {results['viewfuse_import_error']}")
    lines += ["", "## Targets (issues 7 and 25)", ""] + _targets(results)
    lines += ["", "## Memory-bound cases (GPU time)", "", f"![% of the copy ceiling]({png_name})", ""]
    lines += _memory_table(results)
    lines += ["", "## The einsum concern (wall time per call, host and GPU)", "",
              "viewfuse runs the view ops around torch matmuls (`bij,jk->bik`: reshape, matmul, reshape; "
              "`bijk,bklj->bli`: reshape of x, permute + reshape copy of y, bmm, transpose); eager and compile run "
              "`torch.einsum`.", ""] + _einsum_table(results)
    lines += ["", "## Host latency from Python (host time per call, tiny tensors)", ""] + _host_table(results)
    lines += ["", "## Host latency and first-call latency from C++", ""] + _cpp_sections(results)
    lines += ["", "## Errors and mismatches", ""] + _errors(results)
    return "\n".join(lines) + "\n"


def plot(results: dict, path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ceiling = results["ceiling"]["gbps"]
    cases = [c for c in results["cases"] if c.get("group") == "memory" and "bytes" in c]
    if not cases:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(cases)), 5))
    width = 0.27
    for k, name in enumerate(SYSTEMS):
        vals = [100 * (_pct(c, name, ceiling) or 0) for c in cases]
        ax.bar([i + (k - 1) * width for i in range(len(cases))], vals, width, label=name)
    ax.axhline(90, color="gray", linestyle="--", linewidth=1)
    ax.axhline(85, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c["name"] for c in cases], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"% of copy ceiling ({ceiling:,.0f} GB/s)")
    ax.set_title(f"{results['device']}, {results['date']}, commit {results['commit']}", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write(results: dict, md_path: str, png_path: str | None) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(md_path)), exist_ok=True)
    with open(md_path, "w") as f:
        f.write(markdown(results, os.path.splitext(os.path.basename(md_path))[0] + ".png"))
    if png_path:
        plot(results, png_path)
