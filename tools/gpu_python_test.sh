#!/usr/bin/env bash
# The Python tests on CUDA, for a machine with an NVIDIA GPU and no network that has torch
# (the GPU machine: python3 3.12, torch 2.11, numpy, pytest, nanobind, scikit-build-core): installs
# lightning-thunder and its missing dependencies from .whl/ (tools/python_wheels.sh fetched them),
# installs viewfuse from the wheel built there for this python3 (or, without one, builds it from
# source, which needs g++, CMake, Ninja and the nlohmann-json, CLI11 and xxHash headers), then runs
# python/tests. Extra arguments go to pytest (e.g. -k cuda: only the CUDA parametrizations).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export VF_CACHE_DIR=${VF_CACHE_DIR:-$(mktemp -d)}
"$PY" -c "import torch, sys; assert torch.cuda.is_available(), 'torch sees no CUDA device'; \
print('python', sys.version.split()[0], 'torch', torch.__version__, torch.cuda.get_device_name())" || exit 1
"$PY" -m pip install -q --no-index --find-links .whl lightning-thunder pytest || exit 1
tag=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
if ls .whl/viewfuse-*-"$tag"-*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --force-reinstall .whl/viewfuse-*-"$tag"-*.whl || exit 1
  echo "viewfuse installed from $(ls .whl/viewfuse-*-"$tag"-*.whl)"
else
  need=""
  "$PY" -c "import nanobind" 2>/dev/null || need="$need nanobind"
  "$PY" -c "import scikit_build_core" 2>/dev/null || need="$need scikit-build-core"
  # shellcheck disable=SC2086
  [ -z "$need" ] || "$PY" -m pip install -q --no-index --find-links .whl $need || exit 1
  start=$(date +%s)
  "$PY" -m pip install -q --no-index --no-build-isolation . || exit 1
  echo "viewfuse built from source and installed in $(( $(date +%s) - start )) s"
fi
(cd /tmp && "$PY" -c "import viewfuse, viewfuse.thunder; print('viewfuse at', viewfuse.__file__); \
print('torch tensors:', viewfuse.torch_fast_path()[1])") || exit 1
"$PY" -m pytest -q -p no:cacheprovider -rs python/tests "$@" 2>&1 | tee python_gpu.log | tail -n 40
rc=${PIPESTATUS[0]}
echo; echo "==== Python suite on CUDA ($(date -u +%F), ${VF_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)})"
grep -E "passed|failed" python_gpu.log | tail -n 1
exit "$rc"
