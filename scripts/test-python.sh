#!/usr/bin/env bash
# Builds the dptune Python package and runs its tests (pytest), on a machine with only Rust and
# Python >= 3.10 + pip. Idempotent: reuses .venv-py (gitignored) and pip's cache; reinstalls the
# package each time so the tests see the current sources (cargo's incremental build keeps that
# fast). Exit code: pytest's, except that "no tests collected" (5) is a failure too.
#
#   scripts/test-python.sh                 # everything, including the real Flower loopback run
#   scripts/test-python.sh -k 'not flower_loopback'   # extra arguments go to pytest
#
# Environment: PYTHON (default python3), DPTUNE_VENV (default .venv-py), CARGO_TARGET_DIR
# (respected), DPTUNE_PYTEST_TIMEOUT (seconds for the whole pytest run, default 900).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
VENV=${DPTUNE_VENV:-$ROOT/.venv-py}
LIMIT=${DPTUNE_PYTEST_TIMEOUT:-900}

command -v cargo >/dev/null || { echo "test-python: cargo not found (install Rust)" >&2; exit 2; }
"$PY" - <<'PYEOF' || { echo "test-python: need Python >= 3.10" >&2; exit 2; }
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
PYEOF

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
export PATH="$VENV/bin:$PATH"
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q \
    "maturin==1.16.0" "numpy>=1.24" pytest scikit-learn "dask[distributed]" "flwr==1.42.0" "optuna>=3.0" \
    "torch>=2.0" "opacus>=1.5" "mypy>=1.10"
# The package, built by maturin from crates/dptune-py (release, abi3).
python -m pip install -q --no-build-isolation --force-reinstall --no-deps ./crates/dptune-py

set +e
timeout --signal=TERM --kill-after=30 "$LIMIT" \
    python -m pytest -q -p no:cacheprovider crates/dptune-py/tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "test-python: pytest collected no tests" >&2
    exit 1
fi
if [ "$rc" -eq 124 ]; then
    echo "test-python: pytest exceeded ${LIMIT}s" >&2
fi
exit "$rc"
