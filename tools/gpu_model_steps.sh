#!/usr/bin/env bash
# The model-step benchmark (bench/model_steps.py) on a machine with an NVIDIA GPU and no network
# that has torch (the GPU machine): installs lightning-thunder and its missing dependencies and the
# viewfuse wheel from .whl/ (tools/python_wheels.sh fetched and built them), runs the benchmark,
# and packs the region traces it saved into OUT_DIR/model_regions.tar.gz (the CPU suite plans them:
# tests/segment/model_regions). Extra arguments go to model_steps.py.
#   OUT_DIR=out tools/gpu_model_steps.sh --models nanogpt,llama2
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT_DIR=${OUT_DIR:-.}
mkdir -p "$OUT_DIR"
export VF_CACHE_DIR=${VF_CACHE_DIR:-$(mktemp -d)} PYTHONUNBUFFERED=1
"$PY" -m pip install -q --no-index --find-links .whl lightning-thunder || exit 1
tag=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
"$PY" -m pip install -q --no-index --no-deps --force-reinstall .whl/viewfuse-*-"$tag"-*.whl || exit 1
regions=$(mktemp -d)
"$PY" bench/model_steps.py --regions-dir "$regions" --out "$OUT_DIR/model_steps.md" "$@"
rc=$?
tar -czf "$OUT_DIR/model_regions.tar.gz" -C "$regions" . && echo "regions: $(ls "$regions" | wc -l) traces"
exit "$rc"
