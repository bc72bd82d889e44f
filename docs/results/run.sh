#!/usr/bin/env bash
# Reproduces docs/RESULTS.md: the utility study on every shipped table, one at a time.
# Usage (from the repository root): ./docs/results/run.sh   (CARGO_TARGET_DIR is honoured)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p dptune-cli
BIN="${CARGO_TARGET_DIR:-target}/release/dptune"
D=crates/dptune/data
OUT=docs/results
COMMON=(--n 1000 --epsilons 0.01,0.1,0.3,1,3,10 --repetitions 400 --seed 2026 --mean-runs 10)
run() { # name table extra-args...
  local name=$1 table=$2; shift 2
  echo "== $name" >&2
  local t0=$(date +%s.%N)
  "$BIN" --json study "$table" "${COMMON[@]}" "$@" --title "$name" --plot "$OUT/$name.svg" > "$OUT/$name.json"
  local t1=$(date +%s.%N)
  printf '%s %.1f s\n' "$name" "$(echo "$t1 - $t0" | bc)" >&2
}
for ds in australian blood_transfusion car credit_g; do
  run "hpobench_mlp_$ds" "$D/hpo/hpobench_mlp_$ds.csv.gz" --score val_acc
done
run fcnet_naval_propulsion "$D/hpo/fcnet_naval_propulsion.csv.gz" --score val_loss --minimize --bound 1
run papernot_steinke_lr_acc "$D/papernot_steinke_2022/lr_acc.json"
