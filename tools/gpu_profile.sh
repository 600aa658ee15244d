#!/usr/bin/env bash
# Profiles the kernels of bench/gpu_bench.py's memory-bound cases with Nsight Compute, for a
# machine with an NVIDIA GPU and ncu: writes each case's full-size trace, runs it once under ncu
# (`viewfuse run`, the clocks left alone) and prints the throughput, occupancy and stall sections.
#   tools/gpu_profile.sh BUILD_DIR OUT_DIR [CASE...]     (default: every memory-bound case)
# With VF_PROFILE_SOURCE=1, also the warp-stall samples per SASS instruction of each case's first
# kernel (OUT_DIR/CASE.sass.csv: ncu's source page) and the report itself (OUT_DIR/CASE.ncu-rep).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?build dir}; OUT_DIR=${2:?output dir}; shift 2
mkdir -p "$OUT_DIR"
python3 - "$OUT_DIR" "$@" <<'PY'
import sys
sys.path.insert(0, "bench")
import gpu_cases
out, wanted = sys.argv[1], set(sys.argv[2:])
for case in gpu_cases.all_cases(False):
    if case.group == "memory" and case.trace and (not wanted or case.name in wanted):
        open(f"{out}/{case.name}.py", "w").write(case.trace)
PY
for trace in "$OUT_DIR"/*.py; do
  name=$(basename "$trace" .py)
  echo "== $name"
  ncu --clock-control none --kernel-name regex:vf_ --launch-count 3 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      "$BUILD_DIR/viewfuse" run "$trace" --device cuda >"$OUT_DIR/$name.ncu.txt" 2>&1
  if [ "${VF_PROFILE_SOURCE:-0}" = 1 ]; then
    ncu --clock-control none --kernel-name regex:vf_ --launch-count 1 --section SourceCounters \
        --section WarpStateStats --import-source no -f -o "$OUT_DIR/$name" \
        "$BUILD_DIR/viewfuse" run "$trace" --device cuda >/dev/null 2>&1
    ncu --import "$OUT_DIR/$name.ncu-rep" --page source --print-source sass --csv >"$OUT_DIR/$name.sass.csv" 2>&1
  fi
  grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Stall|Issued Warp|Theoretical Occ" \
    "$OUT_DIR/$name.ncu.txt" | head -n 40
done
