"""The certified minimiser behind :class:`dptune.sklearn.PrivateLogisticRegression`: a point
within C·tol of the exact minimiser of the regularised logistic loss for every dataset, with
every floating-point error of the certificate bounded (the proof is in the docstring of
:mod:`dptune.sklearn`, "The certified solver"). Kept apart from the estimators because it is
numerical analysis, not scikit-learn plumbing: the estimators build an :class:`_Objective` and a
:class:`_Plan` (validated before any mechanism runs) and call :func:`_certified_minimiser`."""

from __future__ import annotations

import math

import numpy as np

from ._core import DataError

#: The fallback checks the certificate every this many steps and stops once it holds.
_CHECK_EVERY = 64

# Floating-point bounds (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.
# 2002): a sum of products computed in any order errs by at most γ_k Σ|aᵢbᵢ| when every term
# passes through at most k roundings (Lemma 3.1, Eq. 3.5), γ_k = ku/(1 − ku), u = 2⁻⁵³.
_U = 2.0**-53
#: Records whose gradient terms are summed by one small matrix product before the pairwise tree.
_BLOCK = 32
#: Every term of the blocked pairwise gradient sum passes through fewer roundings than this:
#: at most _BLOCK in its block's dot product (one product, ≤ 31 additions), then at most 64
#: levels of the pairwise tree (one addition each; 2⁶⁴ blocks exceed any array).
_SUM_DEPTH = _BLOCK + 64
#: Absolute slack for underflow (subnormal products and squares, exp() flushed to 0 below
#: 1e-308): far below 1e-100 for any array that fits in memory, and far below any tolerance.
_UNDERFLOW = 1e-100


def _up(x: float) -> float:
    """x rounded up by a relative 2⁻⁴⁰ (covers the roundings of a bound's own arithmetic)."""
    return math.nextafter(x * (1.0 + 2.0**-40), math.inf)


def _gamma(k: int) -> float:
    """γ_k = ku/(1 − ku), rounded up."""
    ku = k * _U
    return _up(ku / (1.0 - ku))


def _norm_up(v: np.ndarray) -> float:
    """An upper bound on the exact Euclidean norm of ``v`` (+∞ if it overflows): the computed
    sum of n squares errs by γ_n, the square root by u."""
    with np.errstate(all="ignore"):
        n = float(np.sqrt(np.dot(v.ravel(), v.ravel())))
    return _up(n * (1.0 + _gamma(v.size + 2)) + _UNDERFLOW)


def _gradient_error(m: int, p: int, k: int, C: float, B: float, r: float) -> float:
    """A bound on ‖ĝ − ∇F(W)‖ (Frobenius) for the computed gradient ĝ at any W with
    ‖W‖ ≤ r, on m rows of norm ≤ B with p features and K classes. Per row i, with the exact
    residual rᵢ = p(aᵢ) − yᵢ:

    Matrix products are assumed to be sums of products in some order (as in every BLAS: no
    Strassen-like algorithm), and ``exp`` to be within 4 ulp.

    * margins: each computed aᵢⱼ = zᵢ·Wⱼ (p-term dot, any order) errs by at most
      γ_p·B·r; the sigmoid is 1/4-Lipschitz, and softmax moves by at most 2·max|Δaⱼ| in
      ℓ₁ (its Jacobian diag(p) − ppᵀ has ℓ∞→ℓ₁ norm ≤ 2);
    * evaluating p from the computed margins: at most 8u
      for 1/(1 + e^{−a}); at most 16(K+1)u in ℓ₁ for the shifted softmax (the shift's
      rounding costs ≤ u/e per entry, exp 4u, the K-term sum γ_{K−1}, the division u);
    * the subtraction of yᵢ: u·‖r̂ᵢ‖₁ ≤ 3u.

    So ‖r̂ᵢ − rᵢ‖₂ ≤ ε_r, and ‖r̂ᵢ‖₂ ≤ ρ + ε_r with ρ = 1 (binary) or √2. The blocked
    pairwise sum errs by γ_{_SUM_DEPTH} Σᵢ |r̂ᵢ||zᵢ|ᵀ, whose Frobenius norm is at most
    m·B·(ρ + ε_r); the per-row errors add m·B·ε_r. W/C and the final addition add u of
    their magnitudes."""
    m = float(m)
    if k == 2:
        margin, evaluation, rho = _gamma(p) * B * r / 4.0, 8.0 * _U, 1.0
    else:
        margin, evaluation = 2.0 * _gamma(p) * B * r, 16.0 * (k + 1) * _U
        rho = math.sqrt(2.0)
    eps_r = _up(margin + evaluation + 3.0 * _U)
    row_max = _up(rho + eps_r)
    depth = _gamma(_SUM_DEPTH)
    total = m * B * (eps_r + depth * row_max) + _U * m * B * row_max * (1.0 + depth)
    return _up(total + 2.01 * _U * r / C + _UNDERFLOW)


class _Objective:
    """F(w) = Σ ℓ + ‖w‖²/(2C) with its gradient and Hessian-vector product, for the binary
    logistic loss (K = 1 weight vector, labels in {0, 1}) or the multinomial one (K ≥ 3), on
    rows of norm at most ``bound`` (public)."""

    def __init__(self, Z: np.ndarray, labels: np.ndarray, n_classes: int, C: float, bound: float):
        self.Z, self.C, self.bound, self.n_classes = Z, C, bound, n_classes
        self.m, self.p = Z.shape
        self.binary = n_classes == 2
        self.Y = labels.astype(np.float64) if self.binary else np.eye(n_classes)[labels]
        # The rows padded with zero rows to whole blocks, for the blocked pairwise sum.
        blocks = max(1, -(-self.m // _BLOCK))
        pad = np.zeros((blocks * _BLOCK - self.m, self.p))
        self._Zb = np.vstack([Z, pad]).reshape(blocks, _BLOCK, self.p)

    def _probs(self, W: np.ndarray) -> np.ndarray:
        A = self.Z @ W.T
        if self.binary:
            # 1/(1 + e^{−a}): e^{−a} overflows to +∞ only where σ(a) < 1e-308 (then 0).
            return 1.0 / (1.0 + np.exp(-A[:, 0]))
        A -= A.max(axis=1, keepdims=True)
        E = np.exp(A)
        return E / E.sum(axis=1, keepdims=True)

    def value(self, W: np.ndarray) -> float:
        A = self.Z @ W.T
        if self.binary:
            a = A[:, 0]
            loss = np.logaddexp(0.0, a) - self.Y * a
        else:
            m = A.max(axis=1)
            loss = m + np.log(np.exp(A - m[:, None]).sum(axis=1)) - (A * self.Y).sum(axis=1)
        return float(loss.sum() + (W * W).sum() / (2.0 * self.C))

    def _row_sum(self, R: np.ndarray) -> np.ndarray:
        """Σᵢ rᵢ zᵢᵀ (shape K × p), summed in blocks of _BLOCK rows (one small matrix product
        each) and then pairwise, so that every term passes through fewer than _SUM_DEPTH
        roundings whatever the number of rows."""
        blocks = self._Zb.shape[0]
        Rb = np.zeros((blocks * _BLOCK, R.shape[1]))
        Rb[: self.m] = R
        S = np.matmul(Rb.reshape(blocks, _BLOCK, -1).transpose(0, 2, 1), self._Zb)
        while len(S) > 1:
            if len(S) % 2:
                S = np.concatenate([S, np.zeros((1,) + S.shape[1:])])
            S = S[0::2] + S[1::2]
        return S[0]

    def gradient(self, W: np.ndarray) -> np.ndarray:
        P = self._probs(W)
        R = (P - self.Y)[:, None] if self.binary else P - self.Y
        return self._row_sum(R) + W / self.C

    def hessp(self, W: np.ndarray, V: np.ndarray) -> np.ndarray:
        P = self._probs(W)
        A = self.Z @ V.T
        if self.binary:
            B = (P * (1.0 - P))[:, None] * A
        else:
            B = P * (A - (P * A).sum(axis=1, keepdims=True))
        return B.T @ self.Z + V / self.C

    def gradient_error(self, r: float) -> float:
        """:func:`_gradient_error` for this problem."""
        return _gradient_error(self.m, self.p, self.n_classes, self.C, self.bound, r)

    def certified_gradient(self, W: np.ndarray) -> float:
        """An upper bound on the exact ‖∇F(W)‖ that includes the floating-point error of
        computing it (+∞ if W or the gradient is not finite)."""
        if not np.isfinite(W).all():
            return math.inf
        with np.errstate(all="ignore"):
            G = self.gradient(W)
        bound = _up(_norm_up(G) + self.gradient_error(_norm_up(W)))
        return bound if bound == bound else math.inf


class _Plan:
    """The proven fallback for one problem size: projected gradient descent on F over the ball
    ‖W‖ ≤ R₀, step η, for ``steps`` steps. Computed from m, C, τ (``tol``), the row bound B, K
    and the parameter count only, before any mechanism; its constructor raises a
    :class:`DataError` naming ``tol`` when double precision cannot reach τ at this size.

    Why it works (the argument of the Rust ``learn::certified`` module, for the sum form):

    * F is μ-strongly convex with μ = 1/C and β-smooth with β = m·B²·c + 1/C, c = 1/4 for
      the sigmoid (σ′ ≤ 1/4) and 1/2 for softmax (diag(p) − ppᵀ ⪯ I/2, Böhning 1992).
    * w* lies in the ball of radius R₀ = √(2·C·m·ln K): F(w*) ≤ F(0) = m·ln K and ℓ ≥ 0, so
      ‖w*‖²/(2C) ≤ m·ln K. Projecting onto a convex set that contains w* never moves a
      point away from w*.
    * For η ≤ 1/β the map w ↦ w − η∇F(w) is a contraction toward w* with factor
      q = 1 − η/C (its Jacobian I − η∇²F has eigenvalues in [0, q]; Nesterov 2018, §2.1.5),
      so each exact step reduces the distance to w* by q.
    * Computed iterates stay within R = R₀(1 + γ_{n+4}) (the rounded projection), so the
      gradient's error is at most g = ``gradient_error(R)`` and each computed step is within
      E = ηg + 2u(R + 2η(G + g)) + γ_{n+4}R of the exact one (G = m·B·ρ + R/C bounds ‖∇F‖
      on the ball). After K steps from a start within 2R of w*, the distance is at most
      q^K·2R + E/(1 − q). The constructor checks E/(1 − q) ≤ C·τ/2 and takes
      K ≥ ln(4R/(C·τ))/(1 − q) (−ln q ≥ 1 − q), so the result is within C·τ of w*.

    The step count grows with m·C (the condition number): the fallback has never run in our
    tests unless forced, and the run time (which depends on m anyway) is seen by the curator
    only (docs/PRIVACY.md, "Trust model and timing")."""

    def __init__(self, m: int, p: int, k: int, C: float, B: float, tol: float):
        binary = k == 2
        n = (1 if binary else k) * p
        self.radius = _up(math.sqrt(_up(2.0 * C * float(m) * math.log(k))))
        R = _up(self.radius * (1.0 + _gamma(n + 4)))
        beta = _up(m * B * B * (0.25 if binary else 0.5) + _up(1.0 / C))
        self.eta = 1.0 / beta * (1.0 - 4.0 * _U)
        one_minus_q = self.eta / C * (1.0 - 4.0 * _U)
        g = _gradient_error(m, p, k, C, B, R)
        G = _up(m * B * (1.0 if binary else math.sqrt(2.0)) + R / C)
        step = _up(self.eta * g + 2.0 * _U * (R + 2.0 * self.eta * (G + g)))
        self.floor = _up(_up(step + _gamma(n + 4) * R) / one_minus_q)
        target = C * tol / 2.0 * (1.0 - 1e-9)
        self.least_tol = self.floor * 2.0 / C * (1.0 + 1e-6)
        if not self.floor <= target:
            # The least tol that works is a function of the private number of rows m: it is not
            # printed (it would reveal m); least_tol() gives it for a public bound on m.
            raise DataError(
                f"data error: `tol` = {tol!r} is below what double precision can certify for "
                f"this number of rows at C = {C!r}; raise `tol` to at least "
                "PrivateLogisticRegression(...).least_tol(rows, n_features) for a public upper "
                "bound `rows` on the number of records (the sensitivity grows by 2·C·tol), "
                "lower `C`, or use fewer rows"
            )
        self.steps = int(math.ceil(math.log(max(2.0 * R / target, 1.0)) / one_minus_q)) + 1


def _newton(obj: _Objective, W: np.ndarray, tol: float, steps: int) -> np.ndarray:
    """Up to ``steps`` Newton–CG steps with backtracking from W, stopping once the certificate
    holds. Only speed depends on it: privacy rests on the certificate or the fallback. Never
    raises on data (a non-finite point is left to the certificate)."""
    for _ in range(steps):
        if obj.certified_gradient(W) <= tol:
            break
        G = obj.gradient(W)
        gnorm = float(np.linalg.norm(G))
        # Conjugate gradients on H d = G, to a relative residual that keeps Newton superlinear.
        D, R = np.zeros_like(W), G.copy()
        Pd, rr = R.copy(), float((R * R).sum())
        for _ in range(4 * W.size):
            Hp = obj.hessp(W, Pd)
            curvature = float((Pd * Hp).sum())
            if not curvature > 0.0:  # rounding only: H is positive definite
                break
            alpha = rr / curvature
            D += alpha * Pd
            R -= alpha * Hp
            rr_new = float((R * R).sum())
            if math.sqrt(rr_new) <= min(0.5, math.sqrt(gnorm)) * gnorm * 1e-2:
                break
            Pd, rr = R + (rr_new / rr) * Pd, rr_new
        if not np.any(D) or not np.isfinite(D).all():
            D = G
        # Backtracking (Armijo). Near the optimum F's decrease drops below its rounding, so a
        # step that shrinks the gradient norm is accepted too.
        f0, step, slope = obj.value(W), 1.0, -float((G * D).sum())
        while step > 1e-12:
            trial = W - step * D
            if obj.value(trial) <= f0 + 1e-4 * step * slope or float(
                np.linalg.norm(obj.gradient(trial))
            ) < (1.0 - 1e-4 * step) * gnorm:
                break
            step /= 2.0
        if not np.isfinite(trial).all():
            break
        W = trial
    return W


def _fallback(obj: _Objective, plan: _Plan, W: np.ndarray, tol: float, steps: int) -> np.ndarray:
    """Projected gradient descent (:class:`_Plan`) from W projected onto the ball (0 if W is not
    finite), for ``steps`` steps, stopping early once the certificate holds."""
    radius = plan.radius

    def project(V: np.ndarray) -> np.ndarray:
        n = float(np.sqrt(np.dot(V.ravel(), V.ravel())))
        return V * (radius / n) if n > radius else V

    W = project(W) if np.isfinite(W).all() else np.zeros_like(W)
    for t in range(steps):
        if t % _CHECK_EVERY == 0 and obj.certified_gradient(W) <= tol:
            break
        W = project(W - plan.eta * obj.gradient(W))
    return W


def _certified_minimiser(
    obj: _Objective, W: np.ndarray, tol: float, plan: _Plan, newton_steps: int
) -> np.ndarray:
    """A point within C·tol of the exact minimiser w*, for every dataset: Newton from W, then
    the certificate (‖∇F‖ ≤ tol with rounding, so ‖W − w*‖ ≤ C·‖∇F(W)‖ ≤ C·tol by
    (1/C)-strong convexity), and only if it fails the fallback, whose proof needs no
    certificate (:class:`_Plan`). Never raises."""
    with np.errstate(all="ignore"):
        W = _newton(obj, W, tol, newton_steps)
        if obj.certified_gradient(W) <= tol:
            return W
        return _fallback(obj, plan, W, tol, plan.steps)
