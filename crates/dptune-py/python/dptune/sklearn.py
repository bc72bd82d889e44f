"""Differentially private scikit-learn models and a ready-made tuning candidate.

A plain scikit-learn estimator is not differentially private: its fitted coefficients can reveal
single training records. :class:`PrivateLogisticRegression` is a scikit-learn classifier (it
works with ``clone``, ``get_params``/``set_params``, pipelines and ``score``) whose ``fit``
releases only **output-perturbed** coefficients with a ρ-zCDP guarantee, and :class:`Candidate`
turns it into a candidate for :func:`dptune.tune` (private fit on one side of a coin-flip split,
private score on the other), so that

.. code-block:: python

    model = PrivateLogisticRegression(classes=[0, 1], feature_bounds=(lower, upper))
    run = Candidate(model, X, y)
    best = dptune.tune(run, {"C": ("log-uniform", 0.01, 100.0)},
                       per_run=dptune.Guarantee.zcdp(0.05),
                       method=dptune.Method.papernot_steinke(dptune.Repeats.geometric(0.1)))

is a private tuning whose guarantee covers training, scoring and selection.

Why output perturbation is private here (Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Thm 6 and
its proof; stated here for add/remove-one neighbours and the sum form of the objective):
``F_D(w) = Σ_{i∈D} ℓ(w; z_i, y_i) + ‖w‖²/(2C)`` is (1/C)-strongly convex, and adding one record
adds a convex term whose gradient has norm at most L (L = ‖z‖ for the binary logistic loss,
√2·‖z‖ for the multinomial one, since ‖p − e_y‖ ≤ √2). Strong convexity then gives
‖w*_D − w*_{D'}‖ ≤ C·L for the exact minimisers. The solver's point ŵ is not exact: a
(1/C)-strongly convex F has ‖ŵ − w*‖ ≤ C·‖∇F(ŵ)‖, so a point with ‖∇F(ŵ)‖ ≤ ``tol`` is within
C·tol of w*, and the released point has L2 sensitivity at most C·(L + 2·tol), which is what
is charged (the solver's residual is paid for, not argued away). The coefficients then get
dptune's exact grid-Gaussian noise at that sensitivity (``dptune.gaussian_release``, rounding
charged): ρ-zCDP.

The certified solver (never fails after validation). Newton from scikit-learn's solution, then
a certificate: an upper bound on the exact ‖∇F(ŵ)‖ that includes every floating-point error of
computing the gradient (Higham 2002, Lemma 3.1 and Eq. 3.5: margins, exp, the softmax, a
blocked pairwise sum over rows whose depth does not depend on the number of rows; see
``_gradient_error`` in ``dptune._certified``, where the solver lives). If it is at most
``tol``, ŵ is within C·tol of w*. If not, a fallback
whose result is within C·tol of w* by proof (no certificate needed): projected gradient descent
for a step count computed before it starts (``_Plan``: a contraction toward w* with factor
1 − η/C, and a public bound on each step's rounding). Its proof needs the rounding floor to be
below C·tol/2, a condition on the number of rows m, C, ``tol``, the norm bounds and the number
of classes that is checked during validation, before any mechanism: when it fails, ``fit``
(and :class:`Candidate`, for the worst configuration of the search space) raise a
:class:`dptune.DataError` naming ``tol`` and the least value that works. The floor grows like
√C·m^1.5: with the default ``tol`` = 1e-3 it admits, for example, 10⁶ rows at C = 10⁴
(11 features, binary). That default costs 2·C·tol on top of C·L in sensitivity: 0.14 % more
noise with the default bounds (L = √2), 0.1 % for several classes (L = 2).

Preconditions the code enforces: every row is clipped to ‖x‖ ≤ ``norm_bound`` and the intercept
is a constant feature ``intercept_scaling`` (so ‖z‖² ≤ norm_bound² + intercept_scaling²); the
set of labels is declared (``classes``) rather than read from the data, because the labels
present in a dataset are themselves private.

Failures. The data are validated before any mechanism runs: a non-finite feature, a label outside
``classes``, a shape mismatch or a size beyond the precision floor is a :class:`dptune.DataError`
raised by :class:`Candidate` (at construction, before the split, and in ``check_space``, which
:func:`dptune.tune` calls before anything runs) or by ``fit`` (before any noise), so nothing is
released. After validation nothing fails: the certificate or the fallback always gives a point
within C·tol of the minimiser. The run time depends on the data (the fallback's step count
grows with the number of rows), and is seen by the curator only (docs/PRIVACY.md, "Trust
model and timing").

Noise. Every privacy noise draw (the coefficients' and the score's) comes from the operating
system. Nothing here takes a noise seed: a seed kept in ``get_params()`` of a released model, or
known to whoever sees the release, would let anyone regenerate the noise and subtract it.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from ._certified import _Objective, _Plan, _certified_minimiser, _up
from ._core import (
    DataError,
    Guarantee,
    InvalidParameter,
    DptuneError,
    SeededRun,
    gaussian_release,
    largest_pure_within,
    noisy_count,
    split_by_coin,
)

__all__ = [
    "Candidate",
    "PrivateLogisticRegression",
    "PublicBoundsScaler",
    "UndeclaredBoundsWarning",
]

#: Newton steps before the certificate (a private test hook: 0 forces the fallback).
_NEWTON_STEPS = 100
#: Rows are clipped to this fraction of ``norm_bound``, so that the computed rows' exact norms
#: stay below it whatever the rounding of the norm and the scaling (< 2⁻⁴⁰ relative for fewer
#: than 2²⁰ features).
_CLIP = 1.0 - 2.0**-30


def _checked_X(X: Any) -> np.ndarray:
    """The feature matrix as float64, or a :class:`DataError` (2-D, every value finite)."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("data error in `X`: not convertible to a float64 matrix") from None
    if X.ndim != 2:
        # The shape is not printed: its first entry is the private number of records.
        raise DataError(f"data error in `X`: array with {X.ndim} dimension(s): must be 2-D")
    if not np.isfinite(X).all():
        raise DataError("data error in `X`: array with NaN or infinity: must be finite")
    return X


def _checked_bounds(name: str, lower: Any, upper: Any, d: int) -> Tuple[np.ndarray, np.ndarray]:
    """The declared public ranges as two float64 arrays of length ``d`` (scalars broadcast), or
    an :class:`InvalidParameter` naming ``name``: finite, lower < upper, one entry per feature
    (the number of features is the public schema, not a statistic of the records)."""
    try:
        lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (d,))
        hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (d,))
    except (TypeError, ValueError):
        raise InvalidParameter(
            f"invalid parameter `{name}` = ({lower!r}, {upper!r}): must be two numbers or two "
            f"sequences of one number per feature ({d})"
        ) from None
    with np.errstate(all="ignore"):
        ok = np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()
        ok = ok and bool(np.isfinite((hi - lo) / 2.0).all() and ((hi - lo) / 2.0 > 0).all())
    if not ok:
        raise InvalidParameter(
            f"invalid parameter `{name}` = ({lower!r}, {upper!r}): declare every feature's "
            "public range, finite with lower < upper"
        )
    return lo, hi


def _public_scale(X: np.ndarray, name: str, lower: Any, upper: Any) -> np.ndarray:
    """Each feature clipped to its declared public range [lowerⱼ, upperⱼ] and mapped affinely
    onto [−1/√d, 1/√d] (d features), so that every row lies in the unit ball. A map fixed in
    advance by public ranges: it uses no statistic of the data (design rule 6). ``X`` must be
    finite (validated before)."""
    d = X.shape[1]
    lo, hi = _checked_bounds(name, lower, upper, d)
    center, half = lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0
    return (np.clip(X, lo, hi) - center) / (half * math.sqrt(max(d, 1)))


class UndeclaredBoundsWarning(UserWarning):
    """A :class:`PrivateLogisticRegression` is fitted on features with no declared public
    ranges: each row is clipped to ``norm_bound`` as given. Emitted by ``fit`` (and by
    :class:`Candidate`) from the parameters alone, before the data are read: it never depends
    on the data."""


def _is_public(step: Any) -> bool:
    """True for a pipeline step that fits nothing on the data: ``None``, ``"passthrough"``, a
    dptune public transformer (:class:`PublicBoundsScaler`) or a Pipeline of such steps."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return True
    if isinstance(step, Pipeline):
        return all(_is_public(s) for _, s in step.steps)
    return bool(getattr(step, "_dptune_public", False))


def _contains(step: Any, estimator: Any) -> bool:
    """True when ``estimator`` is ``step`` or the final step of a (nested) Pipeline ``step``."""
    if step is estimator:
        return True
    return isinstance(step, Pipeline) and _contains(step.steps[-1][1], estimator)


def _fix_hint() -> str:
    return (
        "declare public ranges instead: make_pipeline(PublicBoundsScaler(lower=..., "
        "upper=...), PrivateLogisticRegression(...)) or PrivateLogisticRegression("
        "feature_bounds=(lower, upper))"
    )


def _preprocessing_check(estimator: Any) -> bool:
    """Refuses (:class:`InvalidParameter`, before the data are read) a ``fit`` called by a
    scikit-learn Pipeline (directly, or inside ``cross_val_score``, ``GridSearchCV``, ...)
    whose earlier steps fit on the data: a ``StandardScaler`` fitted on private records keeps
    their means and scales, unpaid, in the released pipeline and in every prediction, and
    reshapes the private fit. Found by walking the call stack for a Pipeline whose final step
    is ``estimator``. Returns True when such a Pipeline declares public ranges (a
    :class:`PublicBoundsScaler` before the estimator)."""
    declared = False
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_argcount > 0 and code.co_varnames[0] == "self":
            pipe = frame.f_locals.get("self")
            if isinstance(pipe, Pipeline) and _contains(pipe.steps[-1][1], estimator):
                for name, step in pipe.steps[:-1]:
                    if not _is_public(step):
                        raise InvalidParameter(
                            f"invalid parameter `pipeline` = a Pipeline whose step {name!r} "
                            f"({type(step).__name__}) fits on the private data: its fitted "
                            "statistics would be released unpaid with the model; "
                            + _fix_hint()
                        )
                    declared = declared or step not in (None, "passthrough")
        frame = frame.f_back
    return declared


def _features(X: Any, norm_bound: float, intercept_scaling: Optional[float]) -> np.ndarray:
    """Rows clipped to L2 norm ``norm_bound`` (to ``_CLIP·norm_bound`` as computed, so that the
    exact norm of every computed row is below ``norm_bound``), with the constant intercept
    feature appended. A per-row map fixed in advance: it uses no statistic of the data."""
    X = _checked_X(X)
    with np.errstate(all="ignore"):
        norms = np.linalg.norm(X, axis=1)
        scale = np.minimum(1.0, norm_bound * _CLIP / np.maximum(norms, np.finfo(np.float64).tiny))
    Z = X * scale[:, None]
    if intercept_scaling is not None:
        Z = np.hstack([Z, np.full((len(Z), 1), intercept_scaling)])
    return Z


class PrivateLogisticRegression(ClassifierMixin, BaseEstimator):
    """L2-regularised logistic regression (binary or multinomial) with output perturbation.

    ``fit`` solves ``min Σ ℓ + ‖w‖²/(2C)`` with scikit-learn's ``LogisticRegression`` (lbfgs),
    certifies (rounding included) and if needed refines the solution to ``‖∇F‖ ≤ tol``, or
    runs the proven fallback (module docstring), and releases the
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
    tol : the certified bound on the gradient norm of the solver's point (charged: the
        sensitivity grows by 2·C·tol). It must lie above double precision's floor for the
        number of rows and C (checked by validation: a DataError names ``tol``;
        :meth:`least_tol` gives the least value for a public bound on the number of rows).
    feature_bounds : ``(lower, upper)``, the declared public range of every feature (two
        numbers, or two sequences of one number per feature). Each feature is clipped to its
        range and mapped onto [−1/√d, 1/√d], so every row lies in the unit ball, before the
        ``norm_bound`` clipping (the same map as :class:`PublicBoundsScaler`). Fixed in
        advance: no statistic of the data is used.

    Feature scale. The rows are clipped to ``norm_bound`` (the sensitivity needs it). Raw
    features on a larger scale than the unit ball lose most of their information to that
    clipping (the raw wine data reached 0.27 accuracy). So the scale must be declared: with
    ``feature_bounds``, or a :class:`PublicBoundsScaler` before this estimator in a Pipeline.
    Without either, ``fit`` emits an :class:`UndeclaredBoundsWarning` (decided from the
    parameters alone, before the data are read; silence it with ``warnings.filterwarnings`` if
    the rows are already scaled by public bounds). In a Pipeline, every step before this
    estimator must be a :class:`PublicBoundsScaler` or ``"passthrough"``: any other (a
    ``StandardScaler``, which fits means and scales on the private records) is refused by
    ``fit`` with an :class:`dptune.InvalidParameter` naming the step, before the data are read.

    Errors. Parameters (and the Pipeline around the estimator) are checked first and raise
    :class:`dptune.InvalidParameter` (no ``classes``, a non-positive ``C``, ...); then the data
    are validated and raise :class:`dptune.DataError` (NaN or infinity in X, a label outside
    ``classes``, a shape mismatch). Both come before any mechanism runs, and their messages
    state no statistic of the records (no count, no value).
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
        tol: float = 1e-3,
        feature_bounds: Optional[Tuple[Any, Any]] = None,
    ):
        self.classes = classes
        self.C = C
        self.rho = rho
        self.norm_bound = norm_bound
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.feature_bounds = feature_bounds

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
        self._scaled(X)  # the declared ranges match the features (InvalidParameter)
        y = np.asarray(y)
        if y.shape != (len(X),):
            # Neither length is printed: the number of records is private.
            raise DataError(
                "data error in `y`: must be 1-D with exactly one label per row of X"
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

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        """``X`` (finite) mapped by the declared public ranges, if any."""
        if self.feature_bounds is None:
            return X
        try:
            lower, upper = self.feature_bounds
        except (TypeError, ValueError):
            raise InvalidParameter(
                f"invalid parameter `feature_bounds` = {self.feature_bounds!r}: must be a "
                "(lower, upper) pair"
            ) from None
        return _public_scale(X, "feature_bounds", lower, upper)

    def _design(self, X: Any) -> np.ndarray:
        s = float(self.intercept_scaling) if self.fit_intercept else None
        return _features(self._scaled(_checked_X(X)), float(self.norm_bound), s)

    def _row_bound(self) -> float:
        """B = √(norm_bound² + intercept_scaling²): every computed row has exact norm below
        it (rows are clipped to _CLIP·norm_bound)."""
        return math.hypot(self.norm_bound, self.intercept_scaling if self.fit_intercept else 0.0)

    def sensitivity(self) -> float:
        """The L2 sensitivity of the released coefficients, C·(L + 2·tol), rounded up (by a
        relative 2⁻⁴⁰, which covers the roundings of the formula and of L)."""
        classes = self._check_params()
        z = self._row_bound()
        lipschitz = z if len(classes) == 2 else math.sqrt(2.0) * z
        return _up(float(self.C) * (lipschitz + 2.0 * float(self.tol)))

    def least_tol(self, rows: int, n_features: int) -> float:
        """The least ``tol`` that double precision can certify for ``rows`` records of
        ``n_features`` features at this ``C``, norm bound and number of classes. Give a public
        upper bound on your number of records (the floor grows with it): validation does not
        print the value for the actual count, which would reveal it."""
        classes = self._check_params()
        p = n_features + (1 if self.fit_intercept else 0)
        plan = _Plan(int(rows), p, len(classes), float(self.C), self._row_bound(), math.inf)
        return plan.least_tol

    def _plan(self, m: int, n_features: int, n_classes: int) -> _Plan:
        """The proven fallback for m rows (:class:`_Plan`), or the :class:`DataError` naming
        ``tol`` when double precision cannot certify it at this size: part of validation."""
        p = n_features + (1 if self.fit_intercept else 0)
        return _Plan(m, p, n_classes, float(self.C), self._row_bound(), float(self.tol))

    def _solution(self, X: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
        """The noise-free point, within C·tol of the exact minimiser, on validated data whose
        size passed :meth:`_plan`; never released, never raises."""
        Z = self._design(X)
        obj = _Objective(Z, labels, n_classes, float(self.C), self._row_bound())
        plan = self._plan(len(X), X.shape[1], n_classes)
        k = 1 if n_classes == 2 else n_classes
        W = np.zeros((k, Z.shape[1]))
        # Nothing here may print: a warning that some data trigger and others do not would be
        # a release. scikit-learn's warnings (convergence) say nothing the certificate does
        # not check, and a floating-point exception shows up in the certified residual.
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if _NEWTON_STEPS > 0 and len(np.unique(labels)) == n_classes:
                # scikit-learn does the bulk of the optimisation (its objective is C·F); it is
                # only a starting point, which the certificate verifies or Newton finishes.
                solver = LogisticRegression(C=float(self.C), fit_intercept=False, max_iter=1000)
                try:
                    W = solver.fit(Z, labels).coef_.reshape(k, -1).astype(np.float64)
                except (ValueError, ArithmeticError, np.linalg.LinAlgError):
                    W = np.zeros((k, Z.shape[1]))
            return _certified_minimiser(obj, W, float(self.tol), plan, _NEWTON_STEPS)

    def _warn_undeclared(self, declared: bool) -> None:
        """The :class:`UndeclaredBoundsWarning`, from the parameters alone (never the data)."""
        if self.feature_bounds is None and not declared:
            warnings.warn(
                f"no public feature ranges declared: rows are clipped to norm {self.norm_bound!r}"
                " as given (features on a larger scale lose most of their information); pass "
                "feature_bounds=(lower, upper) or put a PublicBoundsScaler first (rows already "
                "scaled by public bounds: ignore UndeclaredBoundsWarning)",
                UndeclaredBoundsWarning,
                stacklevel=3,
            )

    def fit(self, X: Any, y: Any) -> "PrivateLogisticRegression":
        """Validates (parameters and Pipeline: :class:`dptune.InvalidParameter`; data:
        :class:`dptune.DataError`), then fits and releases the noisy coefficients."""
        self._warn_undeclared(_preprocessing_check(self))
        return self._fit(X, y)

    def _fit(self, X: Any, y: Any) -> "PrivateLogisticRegression":
        X, labels, classes = self._validate(X, y)
        self._plan(len(X), X.shape[1], len(classes))  # validation: before any mechanism
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
        Z = _features(self._scaled(_checked_X(X)), float(self.norm_bound), None)
        scores = Z @ self.coef_.T + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X: Any) -> np.ndarray:
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if s.ndim == 1 else s.argmax(axis=1)
        return self.classes_[idx]


class PublicBoundsScaler(TransformerMixin, BaseEstimator):
    """Maps declared public feature ranges onto the unit ball: each feature is clipped to
    [``lower``ⱼ, ``upper``ⱼ] and mapped affinely onto [−1/√d, 1/√d] (d features), so every row
    has norm at most 1. ``lower``/``upper`` are numbers or one number per feature, known
    without looking at the private data (a schema, a codebook, domain knowledge); both must be
    given (no default range is assumed).

    ``fit`` learns nothing from the data (it checks them and the ranges): unlike
    ``StandardScaler`` it keeps no statistic of the private records, so a Pipeline
    ``make_pipeline(PublicBoundsScaler(lower, upper), PrivateLogisticRegression(...))`` is
    accepted by the estimator's Pipeline check and declares its feature scale.
    """

    #: Marks a transformer that fits nothing on the data (the Pipeline check accepts it).
    _dptune_public = True

    def __init__(self, lower: Any = None, upper: Any = None):
        self.lower = lower
        self.upper = upper

    def fit(self, X: Any, y: Any = None) -> "PublicBoundsScaler":
        X = _checked_X(X)
        _checked_bounds("lower/upper", self.lower, self.upper, X.shape[1])
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: Any) -> np.ndarray:
        return _public_scale(_checked_X(X), "lower/upper", self.lower, self.upper)


def _domain_values(domain: Any) -> list:
    """The extreme values of one search-space domain: both ends of a ``(kind, low, high)``
    range, every choice of a list, nothing for an absent name."""
    if domain is None:
        return []
    if isinstance(domain, tuple) and len(domain) == 3 and isinstance(domain[0], str):
        return [domain[1], domain[2]]
    return list(domain)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v)


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
        if isinstance(estimator, Pipeline):
            fitted = [
                f"{n!r} ({type(s).__name__})" for n, s in estimator.steps[:-1] if not _is_public(s)
            ]
            why = f" (and {', '.join(fitted)} would fit on the private data)" if fitted else ""
            raise InvalidParameter(
                "invalid parameter `estimator` = Pipeline: a Candidate takes the private "
                f"estimator itself{why}; give the public ranges to the estimator: "
                "PrivateLogisticRegression(feature_bounds=(lower, upper))"
            )
        if not getattr(estimator, "_dptune_private", False):
            raise InvalidParameter(
                f"invalid parameter `estimator` = {type(estimator).__name__}: must be a dptune "
                "private estimator such as PrivateLogisticRegression (a plain scikit-learn "
                "estimator is not differentially private)"
            )
        estimator._warn_undeclared(False)
        X, _, classes = estimator._validate(X, y)
        estimator._plan(len(X), X.shape[1], len(classes))
        y = np.asarray(y)
        train, val = split_by_coin(len(y), train_fraction, seed=seed)
        self.estimator = estimator
        self._rows, self._features, self._classes = len(X), X.shape[1], len(classes)
        self.X_train, self.y_train = X[train], y[train]
        self.X_val, self.y_val = X[val], y[val]

    #: Parameters whose worst case :meth:`check_space` checks: the precision floor of the
    #: fallback (:class:`_Plan`) grows with each of them (True above False), and falls with tol.
    _GROWING = ("C", "norm_bound", "intercept_scaling", "fit_intercept")

    def check_space(self, space: dict) -> None:
        """Validation of the data against a search space, before anything runs
        (:func:`dptune.tune` calls it first): the size precondition of :class:`_Plan` for the
        worst configuration of ``space`` (largest C, norm bound, intercept scale, intercept on,
        smallest tol) on all the rows. Every configuration of the space then passes it on its
        training side (fewer rows, a smaller floor), so no run can fail on it. Raises the
        :class:`dptune.DataError` naming ``tol``; non-numeric values are left to the runs
        (refused there as invalid configurations, independently of the data)."""
        worst = {}
        for name in self._GROWING + ("tol",):
            values = [
                v
                for v in _domain_values(space.get(name))
                if _is_number(v) and (name == "fit_intercept" or v > 0)
            ]
            if values:
                worst[name] = max(values) if name != "tol" else min(values)
        try:
            model = clone(self.estimator).set_params(**worst)
            model._check_params()
        except (ValueError, InvalidParameter):
            return  # invalid values are refused by each run, before its data are touched
        model._plan(self._rows, self._features, self._classes)

    def check_allowance(self, allowance: Guarantee) -> None:
        """The per-run allowance's kind, checked by :func:`dptune.tune` before anything runs
        (public): a zCDP bound without a pure one, under add/remove-one neighbours; else an
        :class:`dptune.InvalidParameter` naming ``per_run``."""
        rho = allowance.rho
        if rho is None or allowance.pure_epsilon is not None:
            # Gaussian output perturbation is zCDP, never pure DP: a pure allowance (which the
            # tuner accounts as pure) cannot be honoured, nor one without a zCDP bound.
            raise InvalidParameter(
                "invalid parameter `per_run` = a guarantee other than zCDP: this candidate "
                "spends zCDP; give the tuner dptune.Guarantee.zcdp(rho)"
            )
        if allowance.neighbours != "add_remove":
            raise InvalidParameter(
                f"invalid parameter `per_run` = a guarantee under {allowance.neighbours} "
                "neighbours: this candidate's sensitivities are for add/remove-one"
            )

    def __call__(
        self, config: Dict[str, Any], allowance: Guarantee, seed: int
    ) -> Tuple[PrivateLogisticRegression, float]:
        self.check_allowance(allowance)
        rho = allowance.rho
        # The configuration is checked before the data are touched (a refusal here is
        # data-independent: the tuner counts it as an unusable run).
        try:
            model = clone(self.estimator).set_params(**config, rho=rho)
        except ValueError as e:
            raise InvalidParameter(f"invalid parameter `config` = {config!r}: {e}") from None
        model._check_params()
        # Data were validated in __init__ (and against the space in check_space): from here
        # on nothing fails.
        model._fit(self.X_train, self.y_train)
        correct = int((model.predict(self.X_val) == self.y_val).sum())
        # The score's ε is the library's conversion of the allowance (the largest pure ε that
        # fits it, ε = √(2ρ) rounded down); what the fit and the score report spending is
        # checked against the allowance (their sides are disjoint: parallel composition).
        score, spent = noisy_count(correct, largest_pure_within(allowance))
        for part, g in (("fit", model.guarantee_), ("score", spent)):
            if not g.fits_within(allowance):
                raise DptuneError(
                    f"the {part} spent {g}, more than the per-run allowance {allowance}"
                )
        return model, score
