#!/usr/bin/env bash
# The CUDA suite, for a machine with an NVIDIA GPU: builds (unless BUILD_DIR holds a build), runs
# every test (the GPU tests no longer skip), runs every example with --device cuda --check with and
# without bookend, runs compute-sanitizer memcheck and racecheck over the examples, and prints a summary.
# The tests, the examples and memcheck run a second time with VF_SPECIALIZE=now, so that every kernel
# runs specialized to its sizes (codegen/specialize_kernel.h) against the same oracle.
# Environment: BUILD_DIR (default build), JOBS (ctest's parallel tests, 8), LOG_DIR (where the ctest
# logs go, .), VF_CACHE_DIR (default: a fresh temporary directory), VF_COMMIT (for the summary).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export VF_CACHE_DIR=${VF_CACHE_DIR:-$(mktemp -d)}
JOBS=${JOBS:-8}  # NVRTC compiles are CPU-bound; the tests share the one GPU
LOG_DIR=${LOG_DIR:-.}
mkdir -p "$LOG_DIR"

if [ ! -x "$BUILD_DIR/viewfuse" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja >/dev/null && cmake --build "$BUILD_DIR" -j "$(nproc)" || exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

summary=()
# run_ctest LABEL LOG [VAR=VALUE...]: the whole suite with that environment; its status is ctest's.
run_ctest() {
  local label=$1 log=$2; shift 2
  env "$@" ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" >"$log" 2>&1
  local code=$?
  tail -n 3 "$log"; grep -E "Failed|\*\*\*" "$log" | head -n 20
  summary+=("$label: $(grep -E 'tests passed' "$log" | tail -n 1)")
  return $code
}
run_ctest ctest "$LOG_DIR/ctest.log"; rc=$?
run_ctest "ctest, VF_SPECIALIZE=now" "$LOG_DIR/ctest_now.log" VF_SPECIALIZE=now; rc_now=$?
[ $rc -eq 0 ] && rc=$rc_now

pass=0; fail=0
for trace in examples/*.py; do
  for mode in plain bookend specialized; do
    bookend=""; specialize=background
    [ "$mode" = bookend ] && bookend=--bookend
    [ "$mode" = specialized ] && specialize=now
    if VF_SPECIALIZE=$specialize "$BUILD_DIR/viewfuse" run "$trace" --device cuda --check $bookend >example.log 2>&1; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAILED: $trace $mode"; cat example.log
    fi
  done
done
summary+=("examples --device cuda --check (plain, --bookend, VF_SPECIALIZE=now): $pass passed, $fail failed")

san_errors=0; san_runs=0
if command -v compute-sanitizer >/dev/null 2>&1; then
  for trace in examples/*.py; do
    for specialize in background now; do
      out=$(VF_SPECIALIZE=$specialize compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD_DIR/viewfuse" run \
            "$trace" --device cuda --check 2>&1)
      code=$?; san_runs=$((san_runs + 1))
      if [ $code -ne 0 ]; then
        san_errors=$((san_errors + 1)); echo "memcheck FAILED on $trace ($specialize)"; echo "$out" | tail -n 30
      fi
    done
  done
  # The reduction kernels of every shape class the reduction tests make, the gathers (indices
  # out of range among them: such an element must read nothing), uniform_philox's schedules, and
  # the scatters (out of range: the add is skipped, nothing written outside the output).
  for filter in 'Backends/ReductionKernels.*/cuda' 'Backends/Gathers.*/cuda' 'Backends/Uniform.*/cuda' 'Backends/Scatters.*/cuda'; do
    out=$(compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD_DIR/tests/codegen/vf_test_codegen" \
          --gtest_filter="$filter" 2>&1)
    code=$?; san_runs=$((san_runs + 1))
    if [ $code -ne 0 ]; then san_errors=$((san_errors + 1)); echo "memcheck FAILED on $filter"; echo "$out" | tail -n 30; fi
  done
  summary+=("compute-sanitizer memcheck: $san_runs runs, $san_errors with errors")
  race_errors=0; race_runs=0
  for trace in examples/*.py; do
    out=$(compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD_DIR/viewfuse" run "$trace" --device cuda --check 2>&1)
    code=$?; race_runs=$((race_runs + 1))
    if [ $code -ne 0 ]; then race_errors=$((race_errors + 1)); echo "racecheck FAILED on $trace"; echo "$out" | tail -n 30; fi
  done
  # The reduction tests' long rows use the block-wide (shared-memory) combine.
  out=$(compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD_DIR/tests/codegen/vf_test_codegen" \
        --gtest_filter='Backends/ReductionKernels.*/cuda' 2>&1)
  code=$?; race_runs=$((race_runs + 1))
  if [ $code -ne 0 ]; then race_errors=$((race_errors + 1)); echo "racecheck FAILED on the reduction tests"; echo "$out" | tail -n 30; fi
  summary+=("compute-sanitizer racecheck: $race_runs runs, $race_errors with errors")
  san_errors=$((san_errors + race_errors))
else
  summary+=("compute-sanitizer: not found")
fi

echo; echo "==== GPU suite summary ($(date -u +%F), ${VF_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)})"
printf '  %s\n' "${summary[@]}"
[ $rc -eq 0 ] && [ $fail -eq 0 ] && [ $san_errors -eq 0 ]
