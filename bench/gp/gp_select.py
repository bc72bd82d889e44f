"""numpy/scipy version of dptune's private lengthscale selection, for a side-by-side timing.

Same procedure as `dptune::gp::select_lengthscale` (see docs/GP.md): the same synthetic data
recipe (not the same random numbers), 20 lengthscales log-spaced over 2^-3..2^5, 5 folds; per
lengthscale the full inverse A = (K + s_n^2 I)^-1, per fold C = -(A_II)^-1 A_IJ and the residual
-(A_II)^-1 (A y)_I, column-norm influences, the MVEE by the multiplicative algorithm in the
numerical range of C (tolerance 0.05 inside the score), the noise-aware score
-sum_k sqrt(||r_k||^2 + t_k) and the sensitivity d*max_i(1 + sum_k a_i^(k)); then the
exponential-mechanism probabilities. Written for timing, not for privacy: the final draw uses
numpy's float generator, which dptune never does.

Usage: python gp_select.py N
"""
import json
import sys
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh
from scipy.optimize import brentq
from scipy.stats import norm


def agm_sigma(eps, delta, sens):
    def excess(s):
        a, b = sens / (2 * s), eps * s / sens
        return norm.cdf(a - b) - np.exp(eps) * norm.cdf(-a - b) - delta
    hi = sens
    while excess(hi) > 0:
        hi *= 2
    return brentq(excess, 1e-12 * sens, hi, xtol=1e-14 * hi)


def mvee_trace(c, tol=0.05, rank_tol=1e-7, max_iter=1000):
    g = c @ c.T
    w, u = eigh(g)
    keep = w > rank_tol**2 * w.max()
    ct = (u[:, keep] / np.sqrt(w[keep])).T @ c  # rows orthonormal: V_r^T
    r, n = ct.shape
    lam = np.full(n, r / n)
    for _ in range(max_iter):
        m = (ct * lam) @ ct.T
        l = np.linalg.cholesky(m)
        y = np.linalg.solve(l, ct)
        q = np.einsum("ij,ij->j", y, y)
        if q.max() <= 1 + tol:
            break
        lam *= q
    return float((lam * np.einsum("ij,ij->j", c, c)).sum() * max(q.max(), 1.0))


def rbf(a, b, l, sf2):
    d = (a[:, None] - b[None, :]) ** 2
    return sf2 * np.exp(-0.5 * d / l**2)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = np.random.default_rng(n)
    x = rng.uniform(-2.5, 2.5, n)
    y = 150 + 60 * np.sin(x) + rng.uniform(-25, 25, n)
    lo, hi = 20.0, 350.0
    d = hi - lo
    yt = np.clip(y, lo, hi) - (lo + hi) / 2
    sf2, sn2 = 6400.0, 3200.0
    grid = 2.0 ** (-3 + 8 * np.arange(20) / 19)
    k_folds = 5
    t0 = time.perf_counter()
    folds = rng.permutation(n) % k_folds
    s = agm_sigma(1.0, 1e-5, d)
    scores, sens = [], []
    for l in grid:
        kk = rbf(x, x, l, sf2) + sn2 * np.eye(n)
        a = cho_solve(cho_factor(kk), np.eye(n))
        alpha = a @ yt
        infl = np.zeros(n)
        u = 0.0
        for f in range(k_folds):
            te = np.where(folds == f)[0]
            tr = np.where(folds != f)[0]
            cf = cho_factor(a[np.ix_(te, te)])
            c = -cho_solve(cf, a[np.ix_(te, tr)])
            r = -cho_solve(cf, alpha[te])
            infl[tr] += np.linalg.norm(c, axis=0)
            t = s * s * mvee_trace(c)
            u -= np.sqrt(r @ r + t)
        scores.append(u)
        sens.append(d * (1 + infl.max()))
    scores = np.array(scores)
    du = max(sens)
    logits = 1.0 * (scores - scores.max()) / (2 * du)
    p = np.exp(logits) / np.exp(logits).sum()
    choice = rng.choice(len(grid), p=p)
    secs = time.perf_counter() - t0
    print(json.dumps({"n": n, "seconds": secs, "lengthscale": float(grid[choice])}))


if __name__ == "__main__":
    main()
