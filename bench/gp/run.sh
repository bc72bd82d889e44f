#!/usr/bin/env bash
# Side-by-side timing of the full private lengthscale selection: dptune (Rust) vs numpy/scipy.
# Creates bench/.venv with numpy and scipy on first use. Usage: bench/gp/run.sh [N ...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/bench/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numpy scipy
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --quiet -p dptune --example gp_select_timing --manifest-path "$root/Cargo.toml"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(200 1000)
printf "%8s %12s %12s %8s\n" n rust_s numpy_s ratio
for n in "${sizes[@]}"; do
  rust=$("$CARGO_TARGET_DIR/release/examples/gp_select_timing" "$n")
  py=$("$venv/bin/python" "$here/gp_select.py" "$n")
  "$venv/bin/python" - "$rust" "$py" <<'PY'
import json, sys
r, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{r['n']:8d} {r['seconds']:12.3f} {p['seconds']:12.3f} {p['seconds'] / r['seconds']:8.2f}")
PY
done
