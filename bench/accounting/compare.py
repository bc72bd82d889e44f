"""Time dp_accounting 0.6.0 on the same inputs as dptune's account_timing example and print a
table: case, dptune eps, dp_accounting eps, time ratio (dp_accounting / dptune).

Usage: compare.py TIMING_BINARY [REPEATS_SCALE] [ONLY]
ONLY, if given, keeps the cases whose kind starts with it (e.g. "repeat" for bench/repeat).
"""
import json
import subprocess
import sys
import time

import dp_accounting
from dp_accounting import rdp

BIN = sys.argv[1]
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
ONLY = sys.argv[3] if len(sys.argv) > 3 else ""


def dptune(case, repeats, *args):
    out = subprocess.run([BIN, case, str(int(max(1, repeats * SCALE)))] + [str(a) for a in args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def timed(f, repeats):
    value = f()
    repeats = int(max(1, repeats * SCALE))
    t = time.perf_counter()
    for _ in range(repeats):
        f()
    return value, (time.perf_counter() - t) * 1e6 / repeats


def dpa_dpsgd(q, z, steps, delta):
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps))
    return acc.get_epsilon(delta)


def dpa_zcdp(rho, delta):
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(rho))
    return acc.get_epsilon(delta)


ORDERS = dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS


def dpa_table(rho, delta):
    return rdp.compute_epsilon(ORDERS, [rho * a for a in ORDERS], delta)[0]


def dpa_sigma(eps, delta):
    return dp_accounting.get_sigma_gaussian(eps, delta)


def dpa_repeat(event, eta, mean, delta):
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(event, mean, eta))
    return acc.get_epsilon(delta)


def dpa_repeat_gaussian(z, eta, mean, delta):
    return dpa_repeat(dp_accounting.GaussianDpEvent(z), eta, mean, delta)


def dpa_repeat_dpsgd(q, z, steps, eta, mean, delta):
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
    return dpa_repeat(event, eta, mean, delta)


CASES = [
    ("DP-SGD q=0.01 z=1 T=1000 d=1e-5 (continuous orders)", "dpsgd", (0.01, 1.0, 1000, 1e-5), dpa_dpsgd, 20),
    ("DP-SGD q=0.01 z=1 T=1000 d=1e-5 (default grid)", "dpsgd_grid", (0.01, 1.0, 1000, 1e-5), dpa_dpsgd, 20),
    ("DP-SGD q=0.1 z=0.8 T=1000 d=1e-5 (continuous orders)", "dpsgd", (0.1, 0.8, 1000, 1e-5), dpa_dpsgd, 20),
    ("zCDP rho=0.125 d=1e-5 -> eps", "zcdp", (0.125, 1e-5), dpa_zcdp, 2000),
    ("RDP table (rho=0.5 on default grid) d=1e-5 -> eps", "rdp_table", (0.5, 1e-5), dpa_table, 2000),
    ("analytic Gaussian sigma eps=1 d=1e-5", "sigma", (1.0, 1e-5), dpa_sigma, 200),
    ("repeat: Gaussian z=3, logarithmic mean 10", "repeat_gaussian", (3.0, 0.0, 10.0, 1e-5), dpa_repeat_gaussian, 200),
    ("repeat: Gaussian z=3, geometric mean 10", "repeat_gaussian", (3.0, 1.0, 10.0, 1e-5), dpa_repeat_gaussian, 200),
    ("repeat: Gaussian z=1.5, Poisson mean 10", "repeat_gaussian", (1.5, float("inf"), 10.0, 1e-5), dpa_repeat_gaussian, 50),
    ("repeat: DP-SGD q=.01 z=1 T=1000, logarithmic 10", "repeat_dpsgd", (0.01, 1.0, 1000, 0.0, 10.0, 1e-5), dpa_repeat_dpsgd, 10),
    ("repeat: DP-SGD q=.01 z=1 T=1000, Poisson 10", "repeat_dpsgd", (0.01, 1.0, 1000, float("inf"), 10.0, 1e-5), dpa_repeat_dpsgd, 10),
]
CASES = [c for c in CASES if c[1].startswith(ONLY)]

rows = []
for name, case, args, dpa, reps in CASES:
    ours = dptune(case, reps * 50, *args)
    theirs, us_theirs = timed(lambda: dpa(*args), reps)
    rows.append((name, ours["value"], theirs, ours["us_per_call"], us_theirs))

print(f"{'case':55s} {'dptune':>14s} {'dp_accounting':>14s} {'dptune us':>10s} {'dp_acc us':>10s} {'speedup':>8s}")
for name, a, b, ta, tb in rows:
    print(f"{name:55s} {a:14.9f} {b:14.9f} {ta:10.2f} {tb:10.1f} {tb / ta:7.0f}x")
