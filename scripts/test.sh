#!/usr/bin/env bash
# All of dptune's tests: the Rust workspace (unit, golden, property, statistical and CLI tests,
# in release mode because the statistical tests draw millions of samples), then the Python
# package's tests (builds it into .venv-py; includes a real Flower deployment on 127.0.0.1),
# then its wheel as a user without Rust installs it (a temporary venv, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
bash scripts/test-python.sh
bash scripts/test-wheel.sh
