#!/usr/bin/env bash
# Downloads, as wheels into .whl/ (git-ignored), what the Python tests need on a machine without
# network that already has torch, nanobind and scikit-build-core (the GPU machine):
# lightning-thunder and its dependencies other than torch, and pytest. Pure-Python wheels once;
# the compiled ones (optree; numpy with WITH_NUMPY=1) for CPython 3.10 to 3.13 on x86_64 Linux.
# Then builds viewfuse's own wheel from this working tree for the GPU machine's python3 (3.12
# there): with VF_WHEEL_PYTHON, else python3.12 on PATH, else pyenv's 3.12 (skipped if none).
# That wheel includes viewfuse._torch_fast, compiled against the torch of .venv (./dev py-test puts
# torch 2.11 there: the GPU machine's version; its C++ headers and libraries do not depend on the
# Python version), or of the torch package directory VF_TORCH_DIR names.
#   tools/python_wheels.sh [DEST]      then carry .whl to the GPU machine: tools/gpu_python_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.whl}
PY=${PYTHON:-python3}
PURE="lightning-thunder==0.2.6 lightning-utilities looseversion opt_einsum dill packaging typing_extensions
      pytest iniconfig pluggy pygments nanobind scikit-build-core pathspec"
BINARY="optree"
[ "${WITH_NUMPY:-0}" = 1 ] && BINARY="$BINARY numpy"
mkdir -p "$DEST"
# shellcheck disable=SC2086
"$PY" -m pip download -q --no-deps -d "$DEST" $PURE
for version in 3.10 3.11 3.12 3.13; do
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$version" --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    -d "$DEST" $BINARY
done
WHEEL_PY=""
for candidate in ${VF_WHEEL_PYTHON:-} python3.12 "$HOME"/.pyenv/versions/3.12.*/bin/python3.12; do
  if "$candidate" -c "import sys; assert sys.version_info[:2] == (3, 12)" >/dev/null 2>&1; then
    WHEEL_PY=$candidate; break
  fi
done
if [ -n "$WHEEL_PY" ]; then
  venv=build/python/venv-wheel-$("$WHEEL_PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
  [ -x "$venv/bin/python" ] || "$WHEEL_PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.10"
  rm -f "$DEST"/viewfuse-*.whl
  torch_dir=${VF_TORCH_DIR:-$(.venv/bin/python -c \
    "import importlib.util as u; print(u.find_spec('torch').submodule_search_locations[0])" 2>/dev/null || true)}
  [ -n "$torch_dir" ] || { echo "no torch for viewfuse._torch_fast: run ./dev py-test first or set VF_TORCH_DIR"; exit 1; }
  echo "== building the viewfuse wheel with $WHEEL_PY (viewfuse._torch_fast against $torch_dir)"
  VF_PYTHON_TORCH=ON VF_TORCH_DIR=$torch_dir "$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
    -w "$DEST" .
  "$venv/bin/python" -m zipfile -l "$DEST"/viewfuse-*.whl | grep -E "_viewfuse|_torch_fast"
else
  echo "== no python3.12 here: the GPU machine builds viewfuse from source (tools/gpu_python_test.sh)"
fi
ls -la "$DEST"; du -sh "$DEST"
