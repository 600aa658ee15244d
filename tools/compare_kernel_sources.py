#!/usr/bin/env python3
"""Compares every generated kernel of a base commit with the working tree's, for refactors that
must not change the kernels.

Both builds dump (tests/fuzz/dump_kernel_sources.cpp, built against each tree) the plan and, per
kernel segment, the CPU, CUDA and CUDA-specialized source with its argument block and launch shape,
for: the examples, golden and regression traces; the benchmark traces of bench/gpu_cases.py (full
and --quick sizes; needs a Python with torch); and random fusions (tests/fuzz/random_fusion.h). It
prints, per set, how many sections differ; with --sass, it compiles each differing CUDA source of
both builds with nvcc for sm_90 and compares their machine code (cuobjdump -sass), and each
differing CPU source with the host compiler (objdump -d).

    tools/compare_kernel_sources.py BASE [--build build] [--out /tmp/vf-compare] [--random 3340] [--sass]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DUMPER = os.path.join(ROOT, "tests/fuzz/dump_kernel_sources.cpp")
# (seed, count, rows, max ops, reductions): the random sets, 3,340 programs in all.
RANDOM_SETS = [(20261202, 300, "short", 12, 1), (777, 40, "long", 12, 1), (1, 2000, "short", 24, 1),
               (5000, 1000, "short", 12, 0)]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build_base(base: str, out: str) -> str:
    src, build = os.path.join(out, "base-src"), os.path.join(out, "base-build")
    if os.path.exists(src):
        run(["git", "-C", ROOT, "worktree", "remove", "--force", src])
    run(["git", "-C", ROOT, "worktree", "add", "--detach", src, base], capture_output=True)
    run(["cmake", "-S", src, "-B", build, "-G", "Ninja"], capture_output=True)
    run(["cmake", "--build", build, "--target", "viewfuse_core", "vf_fuzz_lib"], capture_output=True)
    exe = os.path.join(out, "dump-base")
    run(["c++", "-std=c++20", "-O1", "-DXXH_INLINE_ALL", "-I", os.path.join(src, "src"), "-I",
         os.path.join(src, "tests/fuzz"), DUMPER, os.path.join(build, "tests/fuzz/libvf_fuzz_lib.a"),
         os.path.join(build, "src/libviewfuse_core.a"), "-lpthread", "-ldl", "-o", exe])
    run(["git", "-C", ROOT, "worktree", "remove", "--force", src])
    return exe


def bench_traces(out: str) -> list[str]:
    """The traces of bench/gpu_cases.py, written to files; [] when torch does not import."""
    python = os.path.join(ROOT, ".venv/bin/python")
    python = python if os.path.exists(python) else sys.executable
    folder = os.path.join(out, "bench-traces")
    os.makedirs(folder, exist_ok=True)
    script = ("import sys; sys.path.insert(0, 'bench'); import gpu_cases\n"
              "for quick in (False, True):\n"
              "    for c in gpu_cases.all_cases(quick):\n"
              "        if c.trace: open(f'%s/{c.name}{\"_quick\" if quick else \"\"}.py', 'w').write(c.trace)\n" % folder)
    if subprocess.run([python, "-c", script], cwd=ROOT, capture_output=True).returncode != 0:
        print("bench traces: skipped (bench/gpu_cases.py needs torch)")
        return []
    return sorted(glob.glob(os.path.join(folder, "*.py")))


def sections(text: str) -> dict[str, str]:
    out, name, lines = {}, None, []
    for line in text.splitlines(keepends=True):
        if line.startswith("==== "):
            if name:
                out[name] = "".join(lines)
            name, lines = line.strip(), []
        else:
            lines.append(line)
    if name:
        out[name] = "".join(lines)
    return out


def machine_code(source: str, cuda: bool, out: str) -> str:
    source = source.split("\nabi size ")[0] + "\n"
    stem = os.path.join(out, "sass", hashlib.sha1(source.encode()).hexdigest()[:16])
    os.makedirs(os.path.dirname(stem), exist_ok=True)
    if cuda:
        cuobjdump = shutil.which("cuobjdump") or next(iter(glob.glob(
            os.path.join(ROOT, ".venv/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump"))), None)
        if not cuobjdump:
            raise SystemExit("--sass needs cuobjdump (the CUDA toolkit's, or triton's)")
        open(stem + ".cu", "w").write(source)
        run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-o", stem + ".cubin", stem + ".cu"], capture_output=True)
        text = run([cuobjdump, "-sass", stem + ".cubin"], capture_output=True, text=True).stdout
    else:
        open(stem + ".cpp", "w").write(source)
        run(["c++", "-O2", "-std=c++17", "-fPIC", "-c", "-o", stem + ".o", stem + ".cpp"], capture_output=True)
        text = run(["objdump", "-d", "--no-show-raw-insn", stem + ".o"], capture_output=True, text=True).stdout
    return "\n".join(l for l in text.splitlines() if stem not in l and "file format" not in l)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", help="the commit to compare with")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the working tree's build directory")
    ap.add_argument("--out", default="/tmp/vf-compare")
    ap.add_argument("--sass", action="store_true", help="compare the machine code of differing sources")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    run(["cmake", "--build", args.build, "--target", "vf_dump_kernel_sources"], capture_output=True)
    new = os.path.join(args.build, "tests/fuzz/vf_dump_kernel_sources")
    old = build_base(args.base, args.out)
    traces = sorted(glob.glob(os.path.join(ROOT, "examples/*.py")) + glob.glob(os.path.join(ROOT, "tests/segment/golden/*.py")) +
                    glob.glob(os.path.join(ROOT, "tests/fuzz/regressions/*.py")))
    sets = [("traces", ["traces", *traces])]
    bench = bench_traces(args.out)
    if bench:
        sets.append(("bench traces", ["traces", *bench]))
    for seed, count, rows, ops, reductions in RANDOM_SETS:
        sets.append((f"random {seed}+{count} {rows} rows, {ops} ops{'' if reductions else ', no reductions'}",
                     ["random", str(seed), str(count), rows, str(ops), str(reductions)]))
    differing = 0
    for name, argv in sets:
        a = sections(run([old, *argv], capture_output=True, text=True).stdout)
        b = sections(run([new, *argv], capture_output=True, text=True).stdout)
        changed = [k for k in a if a[k] != b.get(k)] + [k for k in b if k not in a]
        kernels = sum(1 for k in a if " segment " in k)
        line = f"{name}: {len(a)} sections ({kernels} kernel sources), {len(changed)} differ"
        if args.sass and changed:
            same = [k for k in changed if " segment " in k and k in a and k in b and
                    machine_code(a[k], " cuda" in k, args.out) == machine_code(b[k], " cuda" in k, args.out)]
            line += f"; machine code identical for {len(same)} of them"
            for k in changed:
                if k not in same:
                    line += f"\n  differs: {k}"
        print(line, flush=True)
        differing += len(changed)
    return 0 if differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
