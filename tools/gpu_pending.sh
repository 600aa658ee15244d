#!/usr/bin/env bash
# The checks that wait for a GPU, in the order their answers are worth: for a machine with an
# NVIDIA GPU and no network (the GPU machine), a Release build in BUILD_DIR and the wheels in .whl
# (tools/python_wheels.sh). Each stage writes its log to OUT_DIR and prints a few lines; a stage
# that runs past its share of CALL_CAP seconds is cut off, so a short call still returns the first
# answers. STAGES picks them (comma-separated, in this order):
#   attention  the CUDA tests of the attention claim (python/tests/test_thunder_attention.py)
#   steps      the model steps (bench/model_steps.py, MODELS, default nanogpt) with and without the
#              attention claim, the matmul claim (vf_matmul, off by default: issue 25) and the
#              reduction schedules that can be switched off, profiled (the kernels each system
#              runs) and checked against eager; docs/model_steps.md's format, in OUT_DIR; the regions
#              of REGIONS_SYSTEM's step (default thunder+viewfuse) timed alone
#   schedules  the CUDA reduction tests with those schedules switched off (VF_DISABLE_SCHEDULES)
#   ncu        Nsight Compute on NCU_REGIONS (default the layer-norm backward regions, saved traces
#              of tests/segment/model_regions) under each of NCU_VARIANTS (a ';'-separated list of
#              VF_DISABLE_SCHEDULES values; default: none, and every switchable one)
#   ctest      the CUDA tests CTEST_REGEX names (default the reductions', scatters' and regions')
#   OUT_DIR=out STAGES=attention,steps CALL_CAP=500 VF_COMMIT=abc1234 tools/gpu_pending.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD_DIR=${BUILD_DIR:-build}
OUT_DIR=${OUT_DIR:-.}
STAGES=${STAGES:-attention,steps,schedules,ncu}
NCU_REGIONS=${NCU_REGIONS:-nanogpt_017,llama2_013}
CALL_CAP=${CALL_CAP:-560}
MODELS=${MODELS:-nanogpt}
SCHEDULES=sliced,preload,prefetch,deep
NCU_VARIANTS=${NCU_VARIANTS:-;$SCHEDULES}
mkdir -p "$OUT_DIR"
export VF_CACHE_DIR=${VF_CACHE_DIR:-$(mktemp -d)} VF_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
start=$SECONDS
left() { local l=$((CALL_CAP - (SECONDS - start))); echo $((l > 1 ? l : 1)); }  # timeout 0 would mean none
wants() { [[ ",$STAGES," == *",$1,"* ]]; }

if wants attention; then
  timeout "$(left)" tools/gpu_python_test.sh -k "Attention_" -p no:cacheprovider >"$OUT_DIR/attention.log" 2>&1
  echo "attention: rc=$? $(tail -n 1 "$OUT_DIR/attention.log")"
  grep -E "^(FAILED|ERROR)" "$OUT_DIR/attention.log" | head -n 8
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
  echo "  at $((SECONDS - start)) s"
fi

if wants steps; then
  systems=${SYSTEMS:-eager,torch.compile,thunder+viewfuse,thunder+viewfuse+plain,thunder+viewfuse-attention,thunder+viewfuse+matmul}
  checks=${CHECKS:-thunder+viewfuse,thunder+viewfuse+matmul}
  OUT_DIR=$OUT_DIR timeout "$(left)" tools/gpu_model_steps.sh --models "$MODELS" --steps 6 --warmup 2 --region-runs 5 \
    --profile --systems "$systems" --check-systems "$checks" --regions-system "${REGIONS_SYSTEM:-thunder+viewfuse}" \
    --commit "${VF_COMMIT:-}" >"$OUT_DIR/model_steps.log" 2>&1
  echo "steps: rc=$?"
  grep -E "check |Error|Traceback" "$OUT_DIR/model_steps.log" | head -n 12
  grep -E "profile " "$OUT_DIR/model_steps.log" | grep -iE "attn|attention|fmha|flash|cudnn|sdpa" | head -n 24
  grep -E "profile .*matmul \(viewfuse\)" "$OUT_DIR/model_steps.log" | head -n 12  # issue 25: where its time goes
  grep -E "profile .*GPU idle" "$OUT_DIR/model_steps.log" | awk '{c[$2 $5]++} c[$2 $5] <= 5' | cut -c1-150
  grep -E "^\| (thunder|eager|torch)|^## " "$OUT_DIR/model_steps.md" 2>/dev/null | cut -c1-160 | head -n 16
  echo "  at $((SECONDS - start)) s"
fi

if wants schedules; then
  tests="Reduc|Column|Norm|Softmax|CudaBackend|CodegenGpu"
  VF_DISABLE_SCHEDULES=$SCHEDULES timeout "$(left)" ctest --test-dir "$BUILD_DIR" -R "$tests" -j 14 \
    --output-on-failure >"$OUT_DIR/ctest_schedules.log" 2>&1
  echo "schedules switched off: rc=$? $(grep -E 'tests passed' "$OUT_DIR/ctest_schedules.log")"
  grep -E "\(Failed\)|\*\*\*Exception|\(Timeout\)" "$OUT_DIR/ctest_schedules.log" | head -n 10
  echo "  at $((SECONDS - start)) s"
fi

if wants ncu; then
  IFS=';' read -r -a variants <<<"$NCU_VARIANTS"
  [[ "$NCU_VARIANTS" == *";" ]] && variants+=("")
  for region in ${NCU_REGIONS//,/ }; do
    for disabled in "${variants[@]}"; do
      log="$OUT_DIR/ncu_${region}${disabled:+_without_${disabled//,/_}}.txt"
      VF_DISABLE_SCHEDULES=$disabled timeout 40 ncu --clock-control none --kernel-name regex:vf_ \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        "$BUILD_DIR/viewfuse" run "tests/segment/model_regions/$region.py" --device cuda >"$log" 2>&1
      echo "ncu $region [${disabled:+without }${disabled:-default}]"
      awk 'function out() { if (n != "") print "  " n, t, "dram%", d, "regs", r, "occupancy%", o; t = d = r = o = "" }
           /^  vf_/{out(); n=$1} /DRAM Throughput/{d=$NF} /^ +Duration/{t=$NF " " $(NF-1)}
           /Registers Per Thread/{r=$NF} /Achieved Occupancy/{o=$NF} END{out()}' "$log" | head -n 10
    done
  done
  echo "  at $((SECONDS - start)) s"
fi

if wants ctest; then
  timeout "$(left)" ctest --test-dir "$BUILD_DIR" -R "${CTEST_REGEX:-Scatter|Column|Reduc|Norm|ModelRegions|Merge}" -j 14 \
    --output-on-failure >"$OUT_DIR/ctest.log" 2>&1
  echo "ctest: rc=$? $(grep -E 'tests passed' "$OUT_DIR/ctest.log")"
  grep -E "\(Failed\)|\*\*\*Exception|\(Timeout\)" "$OUT_DIR/ctest.log" | head -n 10
  echo "  at $((SECONDS - start)) s"
fi
