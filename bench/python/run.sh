#!/usr/bin/env bash
# Python API overhead of dptune: per selection call and per candidate run, against the Rust core
# (timing loops inside the extension / the core's own Tuner) and against OpenDP 0.16's Python
# API for the same selection over 10^5 candidates. Reuses the venv of scripts/test-python.sh
# (.venv-py, or DPTUNE_VENV), installs opendp==0.16.0 and a release build of dptune into it,
# and prints a Markdown table.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV=${DPTUNE_VENV:-$ROOT/.venv-py}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
export PATH="$VENV/bin:$PATH" PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q "maturin==1.16.0" "numpy>=1.24" "opendp==0.16.0"
# The timing hooks (`_time_select_rust`, `_time_tune_rust`) are behind the feature bench-hooks.
(cd "$ROOT" && MATURIN_PEP517_ARGS="--features bench-hooks" python -m pip install -q \
  --no-build-isolation --force-reinstall --no-deps ./crates/dptune-py)
python "$ROOT/bench/python/bench.py" "$@"
