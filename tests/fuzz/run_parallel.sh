#!/usr/bin/env bash
# Runs many random fusions in parallel processes and sums the verdicts.
#   tests/fuzz/run_parallel.sh BUILD_DIR DEVICE PROCESSES COUNT_EACH [FIRST_SEED]
# e.g. on the H200: tests/fuzz/run_parallel.sh build cuda 8 400     (3,200 fusions, seeds 1000000..)
# Each process checks COUNT_EACH programs from its own seed range; failures are shrunk and saved
# under $VF_REPRO_DIR (default <tmp>/viewfuse-repro). Logs go to BUILD_DIR/fuzz-logs/.
set -uo pipefail
build=${1:?build dir}; device=${2:?cpu or cuda}; procs=${3:?processes}; count=${4:?count per process}
first=${5:-1000000}
mkdir -p "$build/fuzz-logs"
pids=()
for ((p = 0; p < procs; ++p)); do
  VF_FUZZ_DEVICE=$device VF_FUZZ_SEED=$((first + p * count)) VF_FUZZ_COUNT=$count \
    "$build/tests/fuzz/vf_test_fuzz" --gtest_filter='RandomFusions.*' >"$build/fuzz-logs/fuzz-$p.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((p = 0; p < procs; ++p)); do wait "${pids[$p]}" || failed=$((failed + 1)); done
grep -h "^random fusions: [0-9]" "$build"/fuzz-logs/fuzz-*.log |
  awk '{ok += $3; inv += $5; mis += $7; err += $9} END {printf "random fusions (%s): %d ok, %d invalid, %d mismatch, %d error\n", "'"$device"'", ok, inv, mis, err}'
if [ "$failed" -ne 0 ]; then
  echo "$failed process(es) failed; shrunk traces:"; grep -h "saved at" "$build"/fuzz-logs/fuzz-*.log
  exit 1
fi
