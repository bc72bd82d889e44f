#!/usr/bin/env bash
# `dptune account repeat` against dp_accounting 0.6.0's RepeatAndSelectDpEvent on the same bases
# (Gaussian, DP-SGD) and repeat distributions, in one run: the repeat cases of bench/accounting.
set -euo pipefail
exec "$(dirname "$0")/../accounting/run.sh" "${1:-1}" repeat
