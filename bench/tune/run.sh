#!/usr/bin/env bash
# The default `dptune tune` against an equivalent numpy/scikit-learn DP-SGD + dp_accounting
# pipeline (same data, grid, epochs, split fractions and expected number of runs), in one run.
# Creates bench/.venv (numpy, scikit-learn, dp-accounting==0.6.0), builds the release binary,
# runs each side REPS times (default 3) with seeds 1..REPS and prints a table of wall times
# (end to end, data loading included) and test accuracies.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
REPS="${1:-3}"
VENV="$ROOT/bench/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q numpy scikit-learn "dp-accounting==0.6.0"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
(cd "$ROOT" && cargo build -q --release -p dptune-cli)
BIN="$CARGO_TARGET_DIR/release/dptune"
DATA="$ROOT/crates/dptune/data/adult.csv.gz"
printf '%-34s %5s %10s %10s %10s\n' "pipeline" "seed" "wall (s)" "cpu (s)" "test acc"
rs_total=0; py_total=0
for s in $(seq 1 "$REPS"); do
  t0=$(date +%s.%N)
  out=$(/usr/bin/time -f '%U %S' -o "$ROOT/bench/.cpu" "$BIN" --json tune --seed "$s")
  t1=$(date +%s.%N)
  cpu=$(awk '{print $1 + $2}' "$ROOT/bench/.cpu")
  acc=$(printf '%s' "$out" | "$VENV/bin/python" -c 'import json,sys; print(round(json.load(sys.stdin)["test_accuracy"],4))')
  w=$(echo "$t1 - $t0" | bc -l)
  rs_total=$(echo "$rs_total + $w" | bc -l)
  rs_cpu=$(echo "${rs_cpu:-0} + $cpu" | bc -l)
  printf '%-34s %5s %10.2f %10.2f %10s\n' "dptune tune (default)" "$s" "$w" "$cpu" "$acc"
  t0=$(date +%s.%N)
  out=$(/usr/bin/time -f '%U %S' -o "$ROOT/bench/.cpu" "$VENV/bin/python" "$ROOT/bench/tune/dpsgd_numpy.py" "$DATA" "$s")
  t1=$(date +%s.%N)
  cpu=$(awk '{print $1 + $2}' "$ROOT/bench/.cpu")
  acc=$(printf '%s' "$out" | "$VENV/bin/python" -c 'import json,sys; print(round(json.load(sys.stdin)["test_accuracy"],4))')
  w=$(echo "$t1 - $t0" | bc -l)
  py_total=$(echo "$py_total + $w" | bc -l)
  py_cpu=$(echo "${py_cpu:-0} + $cpu" | bc -l)
  printf '%-34s %5s %10.2f %10.2f %10s\n' "numpy/sklearn + dp_accounting" "$s" "$w" "$cpu" "$acc"
done
printf 'mean wall: dptune %.2f s, python %.2f s, speed-up %.1fx\n' \
  "$(echo "$rs_total / $REPS" | bc -l)" "$(echo "$py_total / $REPS" | bc -l)" \
  "$(echo "$py_total / $rs_total" | bc -l)"
printf 'mean cpu:  dptune %.2f s, python %.2f s, speed-up %.1fx\n' \
  "$(echo "$rs_cpu / $REPS" | bc -l)" "$(echo "$py_cpu / $REPS" | bc -l)" \
  "$(echo "$py_cpu / $rs_cpu" | bc -l)"
rm -f "$ROOT/bench/.cpu"
