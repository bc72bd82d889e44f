#!/usr/bin/env bash
# DP-HYPE on Adult, 100 clients, eps = 1, delta = 1e-5, k = 5, t = 80, no dropouts: 20 repetitions
# (run seeds 1..20) on the partition of data seed 1001 (the authors' data_seed), iid and
# Dirichlet(0.5). The protocol (local vote, FedAvg reference accuracy, OPT, RANDGUESS) is stated
# in docs/FEDERATED.md. Writes bench/dphype_adult_<partition>.json (all runs + summary) and
# prints the summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p dptune-cli
B=${CARGO_TARGET_DIR:-target}/release/dptune
for part in iid dirichlet; do
  if [ $part = iid ]; then flag=--iid; else flag="--dirichlet 0.5"; fi
  out=bench/dphype_adult_$part.json
  /usr/bin/time -f "$part: %e s wall" $B --json federated simulate --dataset adult --clients 100 $flag \
    --k 5 --epsilon 1 --delta 1e-5 --data-seed 1001 --seed 1 --repetitions 20 --diagnostics > "$out"
  python3 -c "
import json
v = json.load(open('$out'))['summary']
s = v['diagnostics']  # the NOT PRIVATE evaluation
print('$part', v['runs'], 'runs: selected %.4f OPT %.4f RANDGUESS %.4f fraction %.3f' % (
    s['selected_accuracy_mean'], s['opt_accuracy'], s['randguess_accuracy'], s['fraction_of_the_way']))"
done
