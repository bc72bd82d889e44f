"""Python API overhead (called by run.sh). Times, on one process:

1. per selection call: `dptune.select` from Python vs the same construct-and-select loop run
   inside the extension (`_core._time_select_rust`, no Python between calls);
2. per candidate run: `dptune.tune` with a trivial Python callable, sequentially, vs the Rust
   core's own Tuner on a trivial Rust learner (`_core._time_tune_rust`), same plan (capped at T);
3. selection over 10^5 candidates: `dptune.select` vs OpenDP 0.16 `make_noisy_max` (zCDP = EM,
   pure = permute-and-flip), same scores, ε = 1, Δ = 1e-3 (R = 2Δ).
"""

import sys
import time

import numpy as np

import dptune
from dptune import _core

if not hasattr(_core, "_time_tune_rust"):
    sys.exit("bench.py needs the timing hooks: build with the cargo feature bench-hooks (run.sh)")

EPS, DELTA = 1.0, 1e-3


def per_call(f, budget_s=1.0, min_reps=5, max_reps=200_000):
    f()
    reps, start = 0, time.perf_counter()
    while reps < max_reps and (reps < min_reps or time.perf_counter() - start < budget_s):
        f()
        reps += 1
    return (time.perf_counter() - start) / reps


def best_of(n, f):
    return min(f() for _ in range(n))


def scores(m):
    rng = np.random.default_rng(42)
    return rng.integers(0, 1 << 20, size=m) / float(1 << 20)


def selection_overhead(trials=9):
    """Alternating trials of N Python calls and of the same N calls looped inside the extension
    (same scores, same seeds 0..N−1); the minimum of each over the trials (the machine is
    shared, so minima are the least disturbed)."""
    rows = []
    for mech in ("exponential", "permute-and-flip"):
        for m in (10, 1000):
            u = scores(m)
            n = 20_000 if m == 10 else 2_000
            sel = dptune.select
            py_t, rs_t = [], []
            for _ in range(trials):
                t = time.perf_counter()
                for i in range(n):
                    sel(u, EPS, mechanism=mech, sensitivity=DELTA, seed=i)
                py_t.append((time.perf_counter() - t) / n * 1e6)
                rs_t.append(_core._time_select_rust(u, EPS, n, mechanism=mech, sensitivity=DELTA, seed=0) / 1e3)
            py, rs = min(py_t), min(rs_t)
            rows.append((mech, m, py, rs, py - rs))
    return rows


def run_overhead(T=2000):
    space = {"x": ("uniform", 0.0, 1.0)}
    per = dptune.Guarantee.pure(0.01)
    method = dptune.Method.papernot_steinke(dptune.Repeats.geometric(0.5))

    def trivial(config, allowance, seed):
        return None, 0.0

    def py():
        t = time.perf_counter()
        dptune.tune(trivial, space, per_run=per, method=method, cap=T, cap_delta=1e-6, seed=1)
        return time.perf_counter() - t

    def rs():
        t = time.perf_counter()
        _core._time_tune_rust(space, per, method, cap=T, cap_delta=1e-6, seed=1)
        return time.perf_counter() - t

    p = best_of(5, py) / T * 1e6
    r = best_of(5, rs) / T * 1e6
    return T, p, r


def opendp_vs_dptune(m=100_000):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    u = scores(m)
    data = u.tolist()
    space = (
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=m),
        dp.linf_distance(T=float),
    )
    out = []
    for mech, measure in (("exponential", dp.zero_concentrated_divergence()),
                          ("permute-and-flip", dp.max_divergence())):
        meas = dp.m.make_noisy_max(*space, measure, scale=2 * DELTA / EPS)
        o = best_of(3, lambda: per_call(lambda: meas(data), budget_s=2.0, min_reps=3))
        # OpenDP receives a Python list (its API); dptune a numpy array (ours). Also time dptune
        # from the same list, to show the conversion cost.
        d = best_of(3, lambda: per_call(
            lambda: dptune.select(u, EPS, mechanism=mech, sensitivity=DELTA), budget_s=1.0))
        dl = best_of(3, lambda: per_call(
            lambda: dptune.select(data, EPS, mechanism=mech, sensitivity=DELTA), budget_s=1.0))
        out.append((mech, m, o * 1e3, d * 1e3, dl * 1e3, o / d))
    return out


def main():
    print("| selection call | m | Python `dptune.select` | Rust loop | overhead per call |")
    print("|---|---|---|---|---|")
    for mech, m, py, rs, ov in selection_overhead():
        print(f"| {mech} | {m:,} | {py:.2f} µs | {rs:.2f} µs | {ov:.2f} µs |")
    T, p, r = run_overhead()
    print()
    print("| candidate runs (trivial candidate, capped T) | T | Python `dptune.tune` per run | "
          "Rust core `Tuner` per run | overhead per run |")
    print("|---|---|---|---|---|")
    print(f"| sequential, no executor | {T:,} | {p:.2f} µs | {r:.2f} µs | {p - r:.2f} µs |")
    if "--no-opendp" not in sys.argv:
        print()
        print("| selection, m = 10^5 | OpenDP 0.16 make_noisy_max | dptune.select (numpy) | "
              "dptune.select (list) | OpenDP / dptune |")
        print("|---|---|---|---|---|")
        for mech, m, o, d, dl, ratio in opendp_vs_dptune():
            print(f"| {mech} | {o:.1f} ms | {d:.2f} ms | {dl:.2f} ms | {ratio:.1f}x |")


if __name__ == "__main__":
    main()
