#!/usr/bin/env bash
# Compare dptune's accounting with dp_accounting 0.6.0 on the same inputs, in one run.
# Usage: run.sh [REPEATS_SCALE] [ONLY_CASES_STARTING_WITH]
# Creates bench/.venv (dp-accounting==0.6.0), builds the release timing example, prints a table.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/bench/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q "dp-accounting==0.6.0"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
(cd "$ROOT" && cargo build -q --release -p dptune --example account_timing)
"$VENV/bin/python" "$ROOT/bench/accounting/compare.py" "$CARGO_TARGET_DIR/release/examples/account_timing" "${1:-1}" "${2:-}"
