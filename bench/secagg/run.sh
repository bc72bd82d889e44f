#!/usr/bin/env bash
# One secure-aggregation round (p = 100, no dropouts) for n = 100 and n = 1000 clients: dptune
# (release build, crates/dptune/examples/secagg_round.rs) and Flower 1.42.0's SecAgg+
# (bench/secagg/flower_round.py, in-process, Flower's own client stage functions) in the same run,
# on the same three configurations:
#   n = 100, complete graph (num_shares = 100, threshold 80)
#   n = 100, SecAgg+ (num_shares = 15, threshold 8)
#   n = 1000, SecAgg+ (num_shares = 21, threshold 11)
# Prints every JSON line and two tables with Flower/dptune ratios: CPU time per round (dptune:
# the process's CPU time over the round, mean of several rounds; Flower: time.process_time summed
# over the timed calls), which does not grow with the load of a shared machine and is the
# measure for the 50x goal; and the wall-clock sums per call, which do.
# Flower is installed with pip into bench/.venv (created if missing). Set SKIP_FLOWER=1 to time
# dptune only. Flower's complete-graph round (SecAggWorkflow, n = 100) runs only with
# FLOWER_COMPLETE=1: its Shamir sharing in pure Python grows like n·num_shares·threshold and it
# had not finished after 4 min of CPU on the shared 2-core machine. The two SecAgg+ rounds take
# several minutes (mostly n = 1000).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cargo run --release -q -p dptune --example secagg_round | tee -a "$out"
if [ "${SKIP_FLOWER:-0}" != 1 ]; then
  if [ ! -x bench/.venv/bin/python ]; then python3 -m venv bench/.venv; fi
  bench/.venv/bin/python -c 'import flwr, sys; sys.exit(flwr.__version__ != "1.42.0")' 2>/dev/null \
    || bench/.venv/bin/pip install -q flwr==1.42.0
  cfgs=("100 100 15 8" "1000 100 21 11")
  if [ "${FLOWER_COMPLETE:-0}" = 1 ]; then cfgs=("100 100 100 80" "${cfgs[@]}"); fi
  for cfg in "${cfgs[@]}"; do
    # shellcheck disable=SC2086
    bench/.venv/bin/python bench/secagg/flower_round.py $cfg | tee -a "$out"
  done
fi
python3 bench/secagg/table.py < "$out"
