#!/usr/bin/env bash
# DP-HYPE on Adult, 100 clients, eps = 1, delta = 1e-5, k = 5, seeds 1..20, iid and Dirichlet(0.5).
# Writes one JSON object per run to dphype_adult_<partition>.jsonl and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p dptune-cli
B=${CARGO_TARGET_DIR:-target}/release/dptune
for part in iid dirichlet; do
  out=bench/dphype_adult_$part.jsonl; : > "$out"
  for seed in $(seq 1 20); do
    if [ $part = iid ]; then flag=--iid; else flag="--dirichlet 0.5"; fi
    $B federated simulate --dataset adult --clients 100 $flag --k 5 --epsilon 1 --delta 1e-5 --seed $seed --json >> "$out"
  done
  python3 -c "
import json,sys
rs=[json.loads(l) for l in open('$out')]
s=sum(r['selected_accuracy'] for r in rs)/len(rs); o=sum(r['opt_accuracy'] for r in rs)/len(rs); g=sum(r['randguess_accuracy'] for r in rs)/len(rs)
print('$part', len(rs), 'runs: selected %.4f OPT %.4f RANDGUESS %.4f fraction %.3f' % (s,o,g,(s-g)/(o-g)))"
done
