#!/bin/sh
# Runs one fuzz target under libFuzzer: run.sh TARGET SECONDS [LIBFUZZER FLAGS...]
# (see docs/FUZZING.md). The CLI targets take -keep_seed=1.
set -eu
t=$1
secs=$2
shift 2
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/$t
mkdir -p corpus/$t artifacts/$t
exec nice -n 19 "$bin" corpus/$t seeds/$t -max_total_time="$secs" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix=artifacts/$t/ -print_final_stats=1 "$@"
