#!/usr/bin/env bash
# All of dptune's tests: the Rust workspace (unit, golden, property, statistical and CLI tests,
# in release mode because the statistical tests draw millions of samples).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
