"""dptune.sklearn: output-perturbed logistic regression and the ready-made tuning candidate."""

import math
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

import dptune
from dptune.sklearn import Candidate, PrivateLogisticRegression, _features, _Objective, _refine


def exact_minimiser(X, y, classes, C, norm_bound=1.0, intercept_scaling=1.0, tol=1e-9):
    """The refined (noise-free) minimiser of Σ ℓ + ‖w‖²/(2C) from zero: what fit() perturbs."""
    Z = _features(X, norm_bound, intercept_scaling)
    labels = np.searchsorted(np.asarray(classes), y)
    obj = _Objective(Z, labels, len(classes), C)
    k = 1 if len(classes) == 2 else len(classes)
    W = _refine(obj, np.zeros((k, Z.shape[1])), tol)
    assert np.linalg.norm(obj.gradient(W)) <= tol / 2
    return W


def test_sensitivity_worked_numbers():
    # L = √(3² + 4²) = 5; binary: C·(L + 2·tol) = 2·(5 + 2e-6).
    m = PrivateLogisticRegression(classes=[0, 1], C=2.0, norm_bound=3.0, intercept_scaling=4.0)
    assert m.sensitivity() == pytest.approx(10.000004, rel=1e-15)
    # Multinomial: ‖p − e_y‖ ≤ √2, so L = 5√2.
    m3 = clone(m).set_params(classes=[0, 1, 2])
    assert m3.sensitivity() == pytest.approx(2.0 * (5.0 * math.sqrt(2.0) + 2e-6), rel=1e-15)
    # No intercept: L = norm_bound.
    m.set_params(fit_intercept=False)
    assert m.sensitivity() == pytest.approx(2.0 * (3.0 + 2e-6), rel=1e-15)


def test_refined_minimiser_is_scikit_learns_optimum():
    # scikit-learn minimises C·F; our F's exact minimiser must match its answer at tight tol.
    X, y = make_classification(n_samples=400, n_features=5, random_state=1)
    for classes, yy in (([0, 1], y), ([0, 1, 2], (np.arange(400) * 7 + y) % 3)):
        W = exact_minimiser(X, yy, classes, C=0.7)
        Z = _features(X, 1.0, 1.0)
        sk = LogisticRegression(C=0.7, fit_intercept=False, tol=1e-12, max_iter=10_000)
        coef = sk.fit(Z, yy).coef_
        np.testing.assert_allclose(W, coef, atol=1e-5)


@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2]])
def test_neighbouring_minimisers_move_at_most_the_charged_sensitivity(classes):
    """Brute force over adversarial neighbours D' = D + z (z on the norm bound, every label):
    ‖w*(D) − w*(D')‖ ≤ C·L. The check has teeth: a plausible mistake — the mean-form bound
    2/(nλ) with scikit-learn's C read as 1/λ, i.e. 2C/n — is violated."""
    rng = np.random.default_rng(7)
    k = len(classes)
    worst_ratio, wrong_violated = 0.0, False
    for trial in range(12):
        n = int(rng.integers(2, 40))
        X = rng.normal(size=(n, 3)) * rng.uniform(0.1, 3.0)
        y = rng.integers(0, k, size=n)
        C = float(10 ** rng.uniform(-2, 2))
        model = PrivateLogisticRegression(classes=classes, C=C)
        W = exact_minimiser(X, y, classes, C)
        for _ in range(4):
            z = rng.normal(size=3)
            z *= 5.0 / np.linalg.norm(z)  # clipped to norm 1 by the feature map
            for label in range(k):
                W2 = exact_minimiser(np.vstack([X, z]), np.append(y, label), classes, C)
                moved = float(np.linalg.norm(W2 - W))
                assert moved <= model.sensitivity()
                worst_ratio = max(worst_ratio, moved / model.sensitivity())
                wrong_violated |= moved > 2.0 * C / n
    assert wrong_violated
    # The bound is not vacuous either: some neighbour moves the minimiser by a good part of it.
    assert worst_ratio > 0.2


def test_fit_releases_noisy_coefficients_with_the_guarantee():
    X, y = make_classification(n_samples=2000, n_features=6, random_state=3)
    m = PrivateLogisticRegression(classes=[0, 1], C=0.05, rho=0.5, seed=11).fit(X, y)
    assert m.guarantee_.rho <= 0.5
    assert m.coef_.shape == (1, 6) and m.intercept_.shape == (1,)
    W = exact_minimiser(X, y, [0, 1], 0.05)
    noise = np.append(m.coef_[0], m.intercept_[0]) - W[0]
    # Per-coordinate σ = Δ/√(2ρ) = 0.05·(√2 + 2e-6) ≈ 0.0707; 7 coordinates within 6σ: a
    # false failure below 7·2e-9.
    assert np.all(np.abs(noise) < 6 * 0.0708)
    assert np.any(noise != 0.0)
    assert m.score(X, y) > 0.8
    again = PrivateLogisticRegression(classes=[0, 1], C=0.05, rho=0.5, seed=11).fit(X, y)
    np.testing.assert_array_equal(again.coef_, m.coef_)


def test_multiclass_labels_are_mapped_through_declared_classes():
    X, y = make_classification(
        n_samples=3000, n_features=8, n_informative=6, n_classes=3, class_sep=2.0, random_state=5
    )
    labels = np.array(["a", "b", "c"])[y]
    m = PrivateLogisticRegression(classes=["c", "a", "b"], C=1.0, rho=2.0, seed=1).fit(X, labels)
    assert m.coef_.shape == (3, 8)
    assert set(m.predict(X)) <= {"a", "b", "c"}
    assert m.score(X, labels) > 0.6


@pytest.mark.parametrize(
    "params, X, y, name",
    [
        (dict(classes=None), [[0.0]], [0], "classes"),
        (dict(classes=[1]), [[0.0]], [1], "classes"),
        (dict(classes=[0, 1], C=-1.0), [[0.0]], [0], "C"),
        (dict(classes=[0, 1], rho=math.nan), [[0.0]], [0], "rho"),
        (dict(classes=[0, 1]), [[math.nan]], [0], "X"),
        (dict(classes=[0, 1]), [0.0, 1.0], [0, 1], "X"),
        (dict(classes=[0, 1]), [[0.0], [1.0]], [0, 2], "y"),
        (dict(classes=[0, 1]), [[0.0], [1.0]], [0], "y"),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_parameter(params, X, y, name):
    with pytest.raises(dptune.InvalidParameter, match=f"`{name}`"):
        PrivateLogisticRegression(**params).fit(X, y)


def test_candidate_refuses_plain_estimators_and_non_zcdp_allowances():
    X, y = make_classification(n_samples=200, random_state=0)
    with pytest.raises(dptune.InvalidParameter, match="`estimator`"):
        Candidate(LogisticRegression(), X, y)
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=1)
    for allowance in (dptune.Guarantee.pure(1.0), dptune.Guarantee.approx(1.0, 1e-6)):
        with pytest.raises(dptune.InvalidParameter, match="`per_run`"):
            run({"C": 1.0}, allowance, 5)


def test_candidate_splits_by_coin_and_spends_the_allowance_once():
    X, y = make_classification(n_samples=1000, random_state=0)
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=4)
    assert len(run.y_train) + len(run.y_val) == 1000
    # Binomial(1000, 1/2): sd 15.8; 5 sd gives a false failure below 6e-7.
    assert abs(len(run.y_train) - 500) < 5 * 15.82
    model, score = run({"C": 0.5}, dptune.Guarantee.zcdp(0.1), 9)
    assert model.guarantee_.rho <= 0.1
    assert isinstance(score, int) and abs(score - len(run.y_val) * 0.8) < len(run.y_val)
    assert pickle.loads(pickle.dumps(run)).y_val.tolist() == run.y_val.tolist()


def test_tuning_through_a_process_pool_equals_the_sequential_tuning():
    X, y = make_classification(n_samples=2000, n_features=8, random_state=2)
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=3)
    kwargs = dict(
        per_run=dptune.Guarantee.zcdp(0.05), repeats=dptune.Repeats.geometric(0.2), seed=8
    )
    space = {"C": ("log-uniform", 0.001, 10.0)}
    seq = dptune.tune(run, space, **kwargs)
    with ProcessPoolExecutor(max_workers=2) as ex:
        par = dptune.tune(run, space, executor=ex, **kwargs)
    assert par.config == seq.config and par.score == seq.score
    np.testing.assert_array_equal(par.model.coef_, seq.model.coef_)
    assert par.guarantee == seq.guarantee
