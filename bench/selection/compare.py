"""Selection timing: dptune (exact EM and permute-and-flip) vs OpenDP 0.16 make_noisy_max vs an
insecure numpy Gumbel-argmax, on the same scores; then dptune's exact Laplace report-noisy-max
vs an insecure numpy Laplace-argmax (OpenDP 0.16 has no Laplace noisy-max). Called by run.sh."""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import opendp.prelude as dp

dp.enable_features("contrib")

EPS = 1.0
DELTA = 1e-3  # per-candidate sensitivity (one example out of 1000); not monotone: R = 2*DELTA
SCALE = 2 * DELTA / EPS


def scores(m, worst):
    """Accuracy-like scores in [0, 1], or the rejection worst case (one far above the rest)."""
    if worst:
        u = np.zeros(m)
        u[m // 2] = 1.0
        return u
    rng = np.random.default_rng(42)
    return rng.integers(0, 1 << 20, size=m) / float(1 << 20)


def per_call(f, budget_s=2.0, max_reps=200):
    f()
    reps, start = 0, time.perf_counter()
    while reps < max_reps and (reps < 3 or time.perf_counter() - start < budget_s):
        f()
        reps += 1
    return (time.perf_counter() - start) / reps * 1e6, reps


def dptune(binary, mech, u, reps):
    with tempfile.NamedTemporaryFile(suffix=".f64", delete=False) as fh:
        fh.write(u.astype("<f8").tobytes())
        path = fh.name
    try:
        out = subprocess.run(
            [binary, mech, path, str(EPS), str(DELTA), str(reps)],
            check=True, capture_output=True, text=True,
        ).stdout
    finally:
        os.unlink(path)
    return json.loads(out)["us_per_call"]


def opendp_time(u, measure):
    space = (
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=len(u)),
        dp.linf_distance(T=float),
    )
    meas = dp.m.make_noisy_max(*space, measure, scale=SCALE)
    data = u.tolist()
    return per_call(lambda: meas(data))[0]


def numpy_time(u, noise="gumbel"):
    rng = np.random.default_rng()
    draw = getattr(rng, noise)
    return per_call(lambda: int(np.argmax(u + draw(scale=SCALE, size=len(u)))))[0]


def main():
    binary = sys.argv[1]
    sizes = [1_000, 100_000, 1_000_000]
    rows, laplace_rows = [], []
    for worst in (False, True):
        for m in sizes:
            u = scores(m, worst)
            reps = max(3, min(200, 2_000_000 // m))
            em = dptune(binary, "exponential", u, reps)
            pf = dptune(binary, "permute-and-flip", u, reps)
            o_pf = opendp_time(u, dp.max_divergence())
            o_em = opendp_time(u, dp.zero_concentrated_divergence())
            npy = numpy_time(u)
            rows.append((("worst" if worst else "typical"), m, em, pf, o_em, o_pf, npy))
            lap = dptune(binary, "laplace", u, reps)
            laplace_rows.append((rows[-1][0], m, lap, numpy_time(u, "laplace")))
    hdr = ("scores", "m", "dptune EM", "dptune PF", "OpenDP EM", "OpenDP PF", "numpy",
           "OpenDP/dptune EM", "OpenDP/dptune PF", "dptune EM/numpy", "dptune PF/numpy")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for kind, m, em, pf, o_em, o_pf, npy in rows:
        ms = lambda us: f"{us / 1000:.3f} ms"
        print(f"| {kind} | {m:,} | {ms(em)} | {ms(pf)} | {ms(o_em)} | {ms(o_pf)} | {ms(npy)} | "
              f"{o_em / em:.1f}x | {o_pf / pf:.1f}x | {em / npy:.1f}x | {pf / npy:.1f}x |")
    print()
    print("| scores | m | dptune Laplace RNM | numpy Laplace argmax (insecure) | dptune/numpy |")
    print("|---|---|---|---|---|")
    for kind, m, lap, npy in laplace_rows:
        print(f"| {kind} | {m:,} | {lap / 1000:.3f} ms | {npy / 1000:.3f} ms | {lap / npy:.1f}x |")


if __name__ == "__main__":
    main()
