#!/usr/bin/env bash
# Time exact selection (EM, permute-and-flip) in dptune against OpenDP 0.16 make_noisy_max and
# an insecure numpy Gumbel-argmax on the same scores, in one run. Creates bench/.venv
# (opendp==0.16.0, numpy) if missing, builds the release timing example, prints a table.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/bench/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q "opendp==0.16.0" numpy
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
(cd "$ROOT" && cargo build -q --release -p dptune --example select_timing)
"$VENV/bin/python" "$ROOT/bench/selection/compare.py" "$CARGO_TARGET_DIR/release/examples/select_timing"
