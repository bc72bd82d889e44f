#!/usr/bin/env bash
# Time dptune's PLD accountant against dp_accounting 0.6.0's on the golden PLD cases, in one run.
# Usage: run.sh [REPEATS] [INTERVAL]
# Creates bench/.venv (dp-accounting==0.6.0) if needed, builds the release timing example and
# prints a table: case, both epsilons, both median times, the ratio, dptune's grid points.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/bench/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q "dp-accounting==0.6.0"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
(cd "$ROOT" && cargo build -q --release -p dptune --example pld_timing)
"$VENV/bin/python" "$ROOT/bench/pld/compare.py" "$CARGO_TARGET_DIR/release/examples/pld_timing" \
  "$ROOT/crates/dptune/tests/data/pld.json" "${1:-5}" "${2:-1e-4}"
