"""Differentially private scikit-learn models and a ready-made tuning candidate.

A plain scikit-learn estimator is not differentially private: its fitted coefficients can reveal
single training records. :class:`PrivateLogisticRegression` is a scikit-learn classifier (it
works with ``clone``, ``get_params``/``set_params``, pipelines and ``score``) whose ``fit``
releases only **output-perturbed** coefficients with a ρ-zCDP guarantee, and :class:`Candidate`
turns it into a candidate for :func:`dptune.tune` (private fit on one side of a coin-flip split,
private score on the other), so that

.. code-block:: python

    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y)
    best = dptune.tune(run, {"C": ("log-uniform", 0.01, 100.0)},
                       per_run=dptune.Guarantee.zcdp(0.05), repeats=dptune.Repeats.geometric(0.1))

is a private tuning whose guarantee covers training, scoring and selection.

Why output perturbation is private here (Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Thm 6 and
its proof; stated here for add/remove-one neighbours and the sum form of the objective):
``F_D(w) = Σ_{i∈D} ℓ(w; z_i, y_i) + ‖w‖²/(2C)`` is (1/C)-strongly convex, and adding one record
adds a convex term whose gradient has norm at most L (L = ‖z‖ for the binary logistic loss,
√2·‖z‖ for the multinomial one, since ‖p − e_y‖ ≤ √2). Strong convexity then gives
‖w*_D − w*_{D'}‖ ≤ C·L for the exact minimisers. The solver's point ŵ is not exact: a
(1/C)-strongly convex F has ‖ŵ − w*‖ ≤ C·‖∇F(ŵ)‖, so after verifying ‖∇F(ŵ)‖ ≤ ``tol`` the
released point has L2 sensitivity at most C·(L + 2·tol), which is what is charged (the
solver's residual is paid for, not argued away). The coefficients then get dptune's exact
grid-Gaussian noise at that sensitivity (``dptune.gaussian_release``, rounding charged): ρ-zCDP.

Preconditions the code enforces: every row is clipped to ‖x‖ ≤ ``norm_bound`` and the intercept
is a constant feature ``intercept_scaling`` (so ‖z‖² ≤ norm_bound² + intercept_scaling²); the
set of labels is declared (``classes``) rather than read from the data, because the labels
present in a dataset are themselves private.

Failures. The data are validated before any mechanism runs: a non-finite feature, a label outside
``classes`` or a shape mismatch is a :class:`dptune.DataError` raised by :class:`Candidate` (at
construction, before the split) or by ``fit`` (before any noise), so nothing is released. After
validation the only possible failure is numerical (the solver not certifying its residual within
its fixed, public number of steps); it raises :class:`dptune.DptuneError`, which aborts a whole
tuning instead of becoming a score.

Noise. Every privacy noise draw (the coefficients' and the score's) comes from the operating
system. Nothing here takes a noise seed: a seed kept in ``get_params()`` of a released model, or
known to whoever sees the release, would let anyone regenerate the noise and subtract it.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Sequence, Union

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression

from ._core import (
    DataError,
    DptuneError,
    Guarantee,
    InvalidParameter,
    SeededRun,
    gaussian_release,
    noisy_count,
    split_by_coin,
)

__all__ = ["Candidate", "PrivateLogisticRegression"]

_MAX_NEWTON_STEPS = 200


def _checked_X(X: Any) -> np.ndarray:
    """The feature matrix as float64, or a :class:`DataError` (2-D, every value finite)."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("data error in `X`: not convertible to a float64 matrix") from None
    if X.ndim != 2:
        raise DataError(f"data error in `X`: array of shape {X.shape}: must be 2-D")
    if not np.isfinite(X).all():
        raise DataError("data error in `X`: array with NaN or infinity: must be finite")
    return X


def _features(X: Any, norm_bound: float, intercept_scaling: Optional[float]) -> np.ndarray:
    """Rows clipped to L2 norm ``norm_bound``, with the constant intercept feature appended.
    A per-row map fixed in advance: it uses no statistic of the data."""
    X = _checked_X(X)
    norms = np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, norm_bound / np.maximum(norms, np.finfo(np.float64).tiny))
    Z = X * scale[:, None]
    if intercept_scaling is not None:
        Z = np.hstack([Z, np.full((len(Z), 1), intercept_scaling)])
    return Z


class _Objective:
    """F(w) = Σ ℓ + ‖w‖²/(2C) with its gradient and Hessian-vector product, for the binary
    logistic loss (K = 1 weight vector, labels in {0, 1}) or the multinomial one (K ≥ 3)."""

    def __init__(self, Z: np.ndarray, labels: np.ndarray, n_classes: int, C: float):
        self.Z, self.C = Z, C
        self.binary = n_classes == 2
        self.Y = labels.astype(np.float64) if self.binary else np.eye(n_classes)[labels]

    def _probs(self, W: np.ndarray) -> np.ndarray:
        A = self.Z @ W.T
        if self.binary:
            return expit(A[:, 0])  # the sigmoid, accurate on both tails and without overflow
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

    def gradient(self, W: np.ndarray) -> np.ndarray:
        P = self._probs(W)
        R = (P - self.Y)[:, None] if self.binary else P - self.Y
        return R.T @ self.Z + W / self.C

    def hessp(self, W: np.ndarray, V: np.ndarray) -> np.ndarray:
        P = self._probs(W)
        A = self.Z @ V.T
        if self.binary:
            B = (P * (1.0 - P))[:, None] * A
        else:
            B = P * (A - (P * A).sum(axis=1, keepdims=True))
        return B.T @ self.Z + V / self.C


def _refine(obj: _Objective, W: np.ndarray, tol: float) -> np.ndarray:
    """Newton–CG with backtracking from the solver's point until ‖∇F‖ ≤ tol/2 (half the charged
    tolerance, leaving room for rounding in the gradient itself), for at most the public number
    ``_MAX_NEWTON_STEPS`` of steps. F is strongly convex and smooth, so in exact arithmetic this
    converges; if rounding stops it first, the residual is not certified and nothing is
    released: a :class:`DptuneError` (numerical), which aborts a tuning rather than becoming a
    score. No public bound on the number of steps exists (it grows with the private n), so this
    abort cannot be ruled out by a proof, only made unreachable in practice."""
    for _ in range(_MAX_NEWTON_STEPS):
        G = obj.gradient(W)
        gnorm = float(np.linalg.norm(G))
        if gnorm <= tol / 2.0:
            return W
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
        if not np.any(D):
            D = G
        # Backtracking (Armijo). Near the optimum F's decrease drops below its rounding, so a
        # step that shrinks the gradient norm is accepted too: either way F is strongly convex
        # and the loop only stops on the verified gradient bound.
        f0, step, slope = obj.value(W), 1.0, -float((G * D).sum())
        while step > 1e-12:
            trial = W - step * D
            if obj.value(trial) <= f0 + 1e-4 * step * slope or float(
                np.linalg.norm(obj.gradient(trial))
            ) < (1.0 - 1e-4 * step) * gnorm:
                break
            step /= 2.0
        W = trial
    raise DptuneError(
        "numerical error in the solver: the gradient tolerance `tol` was not certified within "
        f"{_MAX_NEWTON_STEPS} Newton steps; nothing was released (raise `tol`: the sensitivity "
        "charged grows by 2·C·tol)"
    )


class PrivateLogisticRegression(ClassifierMixin, BaseEstimator):
    """L2-regularised logistic regression (binary or multinomial) with output perturbation.

    ``fit`` solves ``min Σ ℓ + ‖w‖²/(2C)`` with scikit-learn's ``LogisticRegression`` (lbfgs),
    verifies and if needed refines the solution to ``‖∇F‖ ≤ tol``, and releases the
    coefficients plus exact Gaussian noise at L2 sensitivity ``C·(L + 2·tol)``, where
    ``L = √(norm_bound² + intercept_scaling²)`` for two classes and ``√2`` times that for more
    (module docstring: Chaudhuri–Monteleoni–Sarwate 2011, Thm 6). The fit is ``rho``-zCDP under
    add/remove-one neighbours; ``guarantee_`` holds what it spent (``dptune.Guarantee``). The
    noise always comes from the operating system: there is no noise seed, so a fitted model
    (``get_params()`` included) carries no key to its noise.

    Parameters
    ----------
    classes : the labels, declared in advance (public); y may contain only these.
    C : inverse regularisation strength (> 0), as in scikit-learn.
    rho : the zCDP allowance of one fit (> 0); :class:`Candidate` sets it from the tuner.
    norm_bound : rows are clipped to this L2 norm before fitting and predicting.
    fit_intercept, intercept_scaling : the intercept is a constant feature of this value.
    tol : the verified bound on the gradient norm of the solver's point (charged).
    """

    #: Marks a dptune private estimator (:class:`Candidate` refuses anything else).
    _dptune_private = True

    def __init__(
        self,
        classes: Optional[Sequence[Any]] = None,
        C: float = 1.0,
        *,
        rho: float = 0.1,
        norm_bound: float = 1.0,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
        tol: float = 1e-6,
    ):
        self.classes = classes
        self.C = C
        self.rho = rho
        self.norm_bound = norm_bound
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol

    def _check_params(self) -> np.ndarray:
        """The declared classes, after checking every parameter (InvalidParameter: public)."""
        for name in ("C", "rho", "norm_bound", "tol") + (
            ("intercept_scaling",) if self.fit_intercept else ()
        ):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.floating, np.integer)) and 0 < v < math.inf):
                raise InvalidParameter(
                    f"invalid parameter `{name}` = {v!r}: must be a finite positive number"
                )
        if self.classes is None:
            raise InvalidParameter(
                "invalid parameter `classes` = None: declare the labels in advance; "
                "the labels present in the data are private"
            )
        classes = np.asarray(self.classes)
        if classes.ndim != 1 or len(classes) < 2 or len(np.unique(classes)) != len(classes):
            raise InvalidParameter(
                f"invalid parameter `classes` = {self.classes!r}: "
                "must list at least two distinct labels"
            )
        return classes

    def _validate(self, X: Any, y: Any) -> tuple:
        """(X as float64, label indices into ``classes``, classes): the parameters checked
        (:class:`InvalidParameter`), then the data (:class:`DataError`: X 2-D and finite, one
        label per row, every label declared). Runs before any mechanism."""
        classes = self._check_params()
        X = _checked_X(X)
        y = np.asarray(y)
        if y.shape != (len(X),):
            raise DataError(
                f"data error in `y`: array of shape {y.shape}: must be 1-D with one label per "
                f"row of X ({len(X)})"
            )
        order = np.argsort(classes)
        try:
            pos = np.minimum(np.searchsorted(classes[order], y), len(classes) - 1)
            declared = bool((classes[order][pos] == y).all())
        except (TypeError, ValueError):  # labels not comparable with the declared classes
            declared = False
        if not declared:
            raise DataError("data error in `y`: labels outside `classes`: declare every label")
        return X, order[pos], classes

    def _design(self, X: Any) -> np.ndarray:
        s = float(self.intercept_scaling) if self.fit_intercept else None
        return _features(X, float(self.norm_bound), s)

    def sensitivity(self) -> float:
        """The L2 sensitivity of the released coefficients, C·(L + 2·tol)."""
        classes = self._check_params()
        z = math.hypot(self.norm_bound, self.intercept_scaling if self.fit_intercept else 0.0)
        lipschitz = z if len(classes) == 2 else math.sqrt(2.0) * z
        return float(self.C) * (lipschitz + 2.0 * float(self.tol))

    def _solution(self, X: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
        """The certified noise-free point (‖∇F‖ ≤ tol/2) on validated data; never released."""
        Z = self._design(X)
        obj = _Objective(Z, labels, n_classes, float(self.C))
        k = 1 if n_classes == 2 else n_classes
        W = np.zeros((k, Z.shape[1]))
        # Nothing here may print: a warning that some data trigger and others do not would be
        # a release. scikit-learn's warnings (convergence) say nothing the refinement does not
        # check, and a floating-point exception shows up in the certified residual.
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if len(np.unique(labels)) == n_classes:
                # scikit-learn does the bulk of the optimisation (its objective is C·F); the
                # refinement below only has to verify it, or finish it.
                solver = LogisticRegression(C=float(self.C), fit_intercept=False, max_iter=1000)
                W = solver.fit(Z, labels).coef_.reshape(k, -1).astype(np.float64)
            return _refine(obj, W, float(self.tol))

    def fit(self, X: Any, y: Any) -> "PrivateLogisticRegression":
        X, labels, classes = self._validate(X, y)
        W = self._solution(X, labels, len(classes))
        noisy, spent = gaussian_release(W.ravel(), self.sensitivity(), float(self.rho))
        W = noisy.reshape(W.shape)
        self.classes_ = classes
        self.coef_ = W[:, :-1] if self.fit_intercept else W
        self.intercept_ = (
            W[:, -1] * float(self.intercept_scaling) if self.fit_intercept else np.zeros(len(W))
        )
        self.guarantee_: Guarantee = spent
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        Z = _features(X, float(self.norm_bound), None)
        scores = Z @ self.coef_.T + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X: Any) -> np.ndarray:
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if s.ndim == 1 else s.argmax(axis=1)
        return self.classes_[idx]


class Candidate:
    """A candidate for :func:`dptune.tune`: fits a clone of a dptune private estimator with the
    sampled configuration on one side of a split and releases its noisy count of correct
    predictions on the other.

    The data are validated here, before the split and before any mechanism
    (:class:`dptune.DataError`). The split flips one exact coin per record
    (``dptune.split_by_coin``, probability ``train_fraction`` of training), so the sides are
    disjoint and the fit (ρ-zCDP) and the score (discrete-Laplace count at ε = √(2ρ), which is
    ρ-zCDP) compose in parallel: each run spends the tuner's per-run allowance ρ once, under
    add/remove-one neighbours. The score is a count (sensitivity 1), so every candidate is scored
    on the same validation side. Picklable: it can run in a ``ProcessPoolExecutor`` or on a
    Dask/Ray cluster.

    ``seed`` drives the split only (``None``: the operating system; a :class:`dptune.SeededRun`
    shared with the tuning keeps the split's stream apart from the tuning's). The tuner's per-run
    seed is not used at all: the fit's and the score's noise come from the operating system, so neither
    the returned model nor the seeds of a (seeded) tuning are a key to them.
    """

    def __init__(
        self,
        estimator: BaseEstimator,
        X: Any,
        y: Any,
        *,
        train_fraction: float = 0.5,
        seed: Union[None, int, SeededRun] = None,
    ):
        if not getattr(estimator, "_dptune_private", False):
            raise InvalidParameter(
                f"invalid parameter `estimator` = {type(estimator).__name__}: must be a dptune "
                "private estimator such as PrivateLogisticRegression (a plain scikit-learn "
                "estimator is not differentially private)"
            )
        X, _, _ = estimator._validate(X, y)
        y = np.asarray(y)
        train, val = split_by_coin(len(y), train_fraction, seed=seed)
        self.estimator = estimator
        self.X_train, self.y_train = X[train], y[train]
        self.X_val, self.y_val = X[val], y[val]

    def __call__(self, config: dict, allowance: Guarantee, seed: int):
        rho = allowance.rho
        if rho is None or allowance.pure_epsilon is not None:
            # Gaussian output perturbation is zCDP, never pure DP: a pure allowance (which the
            # tuner accounts as pure) cannot be honoured, nor one without a zCDP bound.
            raise InvalidParameter(
                "invalid parameter `per_run` = a guarantee other than zCDP: this candidate "
                "spends zCDP; give the tuner dptune.Guarantee.zcdp(rho)"
            )
        if allowance.neighbours != "add/remove-one":
            raise InvalidParameter(
                f"invalid parameter `per_run` = a guarantee under {allowance.neighbours} "
                "neighbours: this candidate's sensitivities are for add/remove-one"
            )
        # The configuration is checked before the data are touched (a refusal here is
        # data-independent: the tuner counts it as an unusable run).
        try:
            model = clone(self.estimator).set_params(**config, rho=rho)
        except ValueError as e:
            raise InvalidParameter(f"invalid parameter `config` = {config!r}: {e}") from None
        model._check_params()
        # Data were validated in __init__: from here on only a numerical abort can occur.
        model.fit(self.X_train, self.y_train)
        correct = int((model.predict(self.X_val) == self.y_val).sum())
        score, _ = noisy_count(correct, math.sqrt(2.0 * rho))
        return model, score
