#!/usr/bin/env bash
# One DP-HYPE secure-aggregation round (p = 100) for n = 100 and n = 1000 clients, timing the
# clients' and the server's compute separately (dptune, release build).
# The Flower 1.42 SecAgg+ comparison harness is not written yet (see docs/FEDERATED.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --release -q -p dptune --example secagg_round -- "$@"
