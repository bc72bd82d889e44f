#!/usr/bin/env bash
# One DP-SGD epoch (logistic regression, batch 256, 8 features, noise multiplier 1) on in-memory
# synthetic data of 180k, 1.8M and 18M rows, RUNS times each (default 3): issue 17 §2, the
# Poisson batches are drawn by exact geometric gaps so that an epoch is linear in the rows.
# Prints one JSON line per run, then per size the median, min and max of the whole fit (wall and
# CPU seconds: on a shared machine the CPU time is the steadier figure) and of the batch
# sampling alone (CPU), next to the old per-record sampling (CPU) extrapolated from 5 steps.
# Usage: bench/dpsgd/run.sh [ROWS...]   (RUNS=5 bench/dpsgd/run.sh 180000 for other settings)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
(cd "$ROOT" && cargo build -q --release -p dptune --example dpsgd_timing)
BIN="$CARGO_TARGET_DIR/release/examples/dpsgd_timing"
RUNS="${RUNS:-3}"
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(180000 1800000 18000000)
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
for rows in "${SIZES[@]}"; do
  for run in $(seq 1 "$RUNS"); do
    "$BIN" "$rows" 8 256 "$run" | tee -a "$OUT"
  done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'rows':>10} {'steps':>7} {'fit wall s':>24} {'fit CPU s':>24} "
      f"{'gap sampling CPU s':>22} {'old per-record CPU s':>24}")
print(f"{'':>10} {'':>7} {'median [min, max]':>24}")
for rows in sorted({r['rows'] for r in runs}):
    rs = [r for r in runs if r['rows'] == rows]
    def cell(key, fmt):
        v = sorted(r[key] for r in rs)
        return f"{statistics.median(v):{fmt}} [{v[0]:{fmt}}, {v[-1]:{fmt}}]"
    print(f"{rows:>10} {rs[0]['steps']:>7} {cell('fit_wall_seconds', '.2f'):>24} "
          f"{cell('fit_cpu_seconds', '.2f'):>24} {cell('gap_sampling_cpu_seconds', '.2f'):>22} "
          f"{cell('per_record_sampling_cpu_seconds_extrapolated', '.0f'):>24}")
PY
