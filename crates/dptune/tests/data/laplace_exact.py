"""Exact epsilon of T-fold Laplace compositions, in closed form at 50 significant digits.

Regenerate: python3 laplace_exact.py > laplace_exact.json  (needs mpmath; not run by the tests).

The Laplace mechanism with scale b on a query of sensitivity D, in units of b with lam = D/b:
P = Lap(0, 1), Q = Lap(lam, 1), loss L(o) = |o - lam| - |o| (the add/remove pair; the
mechanism is symmetric, so both directions have this loss). Under P: an atom at +lam of mass
1/2 (o <= 0), an atom at -lam of mass e^-lam / 2 (o >= lam), and between them
L = lam - u with u = 2o in (0, 2 lam) of density e^(-u/2) / 4.

T steps with k atoms at +lam, j at -lam and m continuous have L = lam (k - j + m) - s,
s = u_1 + ... + u_m, and delta(eps) = E_P[(1 - e^(eps - L))_+] (the hockey-stick divergence):

  delta(eps) = sum over k + j + m = T of T! / (k! j! m!) (1/2)^k (e^-lam / 2)^j 4^-m
               * [J_m(1/2, A) - e^-A J_m(-1/2, A)],    A = lam (k - j + m) - eps,

  J_m(beta, A) = integral over u in (0, 2 lam)^m with s < A of e^(-beta s) du
               = sum_i (-1)^i C(m, i) e^(-2 lam beta i) G_m(beta, A - 2 lam i)   (inclusion-exclusion
                 over the coordinates beyond 2 lam),
  G_m(beta, a) = integral_0^a s^(m-1) / (m-1)! e^(-beta s) ds  (0 if a <= 0; G_0 = 1 if a > 0),

with G_m summed as its power series. eps is the root of delta(eps) = delta, found by the
Illinois rule (delta is decreasing in eps), to 1e-35 relative.
"""
import json

import mpmath
from mpmath import mp, mpf, exp, binomial, factorial

mp.dps = 50


def g(m, beta, a):
    """G_m(beta, a) as the series sum_j (-beta a)^j a^m / ((m - 1)! j! (m + j))."""
    if a <= 0:
        return mpf(0)
    if m == 0:
        return mpf(1)
    total, j = mpf(0), 0
    power = mpf(1)
    while True:
        t = a**m * power / (factorial(m - 1) * factorial(j) * (m + j))
        total += t
        if j > 10 and abs(t) < mpf(10) ** (-mp.dps - 5) * abs(total):
            break
        j += 1
        power *= -beta * a
    return total


def j_box(m, beta, big_a, lam):
    """J_m(beta, A) by inclusion-exclusion."""
    return sum(
        (-1) ** i * binomial(m, i) * exp(-2 * lam * beta * i) * g(m, beta, big_a - 2 * lam * i)
        for i in range(m + 1)
    )


def delta(eps, lam, steps):
    """delta(eps) of `steps` compositions, lam = sensitivity / b."""
    half = mpf(1) / 2
    total = mpf(0)
    for k in range(steps + 1):
        for j in range(steps - k + 1):
            m = steps - k - j
            big_a = lam * (k - j + m) - eps
            if big_a <= 0:
                continue
            weight = factorial(steps) / (factorial(k) * factorial(j) * factorial(m))
            weight *= half**k * (exp(-lam) * half) ** j * mpf(4) ** (-m)
            total += weight * (j_box(m, half, big_a, lam) - exp(-big_a) * j_box(m, -half, big_a, lam))
    return total


def epsilon(lam, steps, target):
    """The root of delta(eps) = target in [0, lam T] by the Illinois (bracketed secant) rule."""
    lo, hi = mpf(0), lam * steps
    f_lo, f_hi = delta(lo, lam, steps) - target, -target
    if f_lo <= 0:
        return mpf(0)
    side = 0
    while hi - lo > mpf(10) ** (-35) * hi:
        mid = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        f_mid = delta(mid, lam, steps) - target
        if f_mid > 0:
            lo, f_lo = mid, f_mid
            if side == 1:
                f_hi /= 2
            side = 1
        else:
            hi, f_hi = mid, f_mid
            if side == -1:
                f_lo /= 2
            side = -1
        if f_mid == 0:
            return mid
    return hi


# (id, b, sensitivity, steps, delta): the golden case, one step, many small steps (where atoms
# at -lam and the box constraints matter), and a sensitivity other than 1.
CASES = [
    ("laplace_b1_T20", 1, 1, 20, "1e-5"),
    ("laplace_b1_T1", 1, 1, 1, "1e-5"),
    ("laplace_b10_T5", 10, 1, 5, "1e-5"),
    ("laplace_b2_T50", 2, 1, 50, "1e-6"),
    ("laplace_b4_sens2_T30", 4, 2, 30, "1e-3"),
]

if __name__ == "__main__":
    out = {
        "generator": "laplace_exact.py (mpmath %s, %d digits): the closed form in its docstring"
        % (mpmath.__version__, mp.dps),
        "cases": [],
    }
    for name, b, sens, steps, target in CASES:
        lam = mpf(sens) / mpf(b)
        eps = epsilon(lam, steps, mpf(target))
        out["cases"].append(
            {
                "id": name,
                "b": b,
                "sensitivity": sens,
                "times": steps,
                "delta": float(target),
                "eps_exact": mp.nstr(eps, 25),
            }
        )
    print(json.dumps(out, indent=1))
