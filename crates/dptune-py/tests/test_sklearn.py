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
import dptune._certified as cert
import dptune.sklearn as sk
from dptune.sklearn import Candidate, PrivateLogisticRegression, _features, _Objective


def exact_minimiser(X, y, classes, C, norm_bound=1.0, intercept_scaling=1.0, tol=1e-9):
    """The certified (noise-free) minimiser of Σ ℓ + ‖w‖²/(2C) from zero, to ‖∇F‖ ≤ tol with
    rounding included, i.e. within C·tol of the exact one: what fit() perturbs."""
    Z = _features(X, norm_bound, intercept_scaling)
    labels = np.searchsorted(np.asarray(classes), y)
    obj = _Objective(Z, labels, len(classes), C, math.hypot(norm_bound, intercept_scaling))
    k = 1 if len(classes) == 2 else len(classes)
    W = cert._newton(obj, np.zeros((k, Z.shape[1])), tol, 200)
    assert obj.certified_gradient(W) <= tol
    return W


def test_sensitivity_worked_numbers():
    # L = √(3² + 4²) = 5; binary: C·(L + 2·tol) = 2·(5 + 2e-3) at the default tol = 1e-3.
    m = PrivateLogisticRegression(classes=[0, 1], C=2.0, norm_bound=3.0, intercept_scaling=4.0)
    assert m.sensitivity() == pytest.approx(10.004, rel=1e-12)
    # Multinomial: ‖p − e_y‖ ≤ √2, so L = 5√2.
    m3 = clone(m).set_params(classes=[0, 1, 2])
    assert m3.sensitivity() == pytest.approx(2.0 * (5.0 * math.sqrt(2.0) + 2e-3), rel=1e-12)
    # No intercept: L = norm_bound.
    m.set_params(fit_intercept=False)
    assert m.sensitivity() == pytest.approx(2.0 * (3.0 + 2e-3), rel=1e-12)
    # Rounded up, never down (privacy arithmetic).
    assert m.sensitivity() >= 2.0 * (3.0 + 2e-3)
    # The default tol's price: 2·tol/L = 0.14 % of the sensitivity at the default bounds.
    d = PrivateLogisticRegression(classes=[0, 1])
    assert d.sensitivity() / math.sqrt(2.0) - 1.0 == pytest.approx(2e-3 / math.sqrt(2.0))


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
    m = PrivateLogisticRegression(classes=[0, 1], C=0.05, rho=0.5).fit(X, y)
    assert m.guarantee_.rho <= 0.5
    assert m.coef_.shape == (1, 6) and m.intercept_.shape == (1,)
    W = exact_minimiser(X, y, [0, 1], 0.05)
    noise = np.append(m.coef_[0], m.intercept_[0]) - W[0]
    # Per-coordinate σ = Δ/√(2ρ) = 0.05·(√2 + 2e-6) ≈ 0.0707; 7 coordinates within 6σ: a
    # false failure below 7·2e-9.
    assert np.all(np.abs(noise) < 6 * 0.0708)
    assert np.any(noise != 0.0)
    assert m.score(X, y) > 0.8
    # Operating-system noise: a second fit draws different noise.
    again = PrivateLogisticRegression(classes=[0, 1], C=0.05, rho=0.5).fit(X, y)
    assert not np.array_equal(again.coef_, m.coef_)


def test_multiclass_labels_are_mapped_through_declared_classes():
    X, y = make_classification(
        n_samples=3000, n_features=8, n_informative=6, n_classes=3, class_sep=2.0, random_state=5
    )
    labels = np.array(["a", "b", "c"])[y]
    # The noise is OS-keyed (no seed): at rho = 50 its sd per coefficient is 0.2 (sensitivity
    # 2); over 300 fits the accuracy was never below 0.81 (median 0.85), so the 0.6 threshold
    # leaves a wide margin. At rho = 2 (sd 1) 8 % of fits fell below 0.6.
    m = PrivateLogisticRegression(classes=["c", "a", "b"], C=1.0, rho=50.0).fit(X, labels)
    assert m.coef_.shape == (3, 8)
    assert set(m.predict(X)) <= {"a", "b", "c"}
    assert m.score(X, labels) > 0.6


@pytest.mark.parametrize(
    "params, X, y, name, error",
    [
        (dict(classes=None), [[0.0]], [0], "classes", dptune.InvalidParameter),
        (dict(classes=[1]), [[0.0]], [1], "classes", dptune.InvalidParameter),
        (dict(classes=[0, 1], C=-1.0), [[0.0]], [0], "C", dptune.InvalidParameter),
        (dict(classes=[0, 1], rho=math.nan), [[0.0]], [0], "rho", dptune.InvalidParameter),
        (dict(classes=[0, 1]), [[math.nan]], [0], "X", dptune.DataError),
        (dict(classes=[0, 1]), [0.0, 1.0], [0, 1], "X", dptune.DataError),
        (dict(classes=[0, 1]), [[0.0], [1.0]], [0, 2], "y", dptune.DataError),
        (dict(classes=[0, 1]), [[0.0], [1.0]], [0], "y", dptune.DataError),
        (dict(classes=["a", "b"]), [[0.0], [1.0]], [0, 1], "y", dptune.DataError),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_parameter(params, X, y, name, error):
    """Parameters are InvalidParameter; malformed data are DataError (never InvalidParameter,
    which the tuner would count as a data-independent unusable run)."""
    with pytest.raises(error, match=f"`{name}`"):
        PrivateLogisticRegression(**params).fit(X, y)
    if error is dptune.DataError:
        with pytest.raises(error, match=f"`{name}`"):
            Candidate(PrivateLogisticRegression(**params), X, y)


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


def test_tuning_through_a_process_pool_runs_the_same_plan():
    """A seeded tuning draws the same plan (K, configurations) sequentially or in a process
    pool; the privacy noise comes from the operating system, so only the plan is reproducible:
    the released configuration is one of the plan's and the guarantee is the same."""
    X, y = make_classification(n_samples=2000, n_features=8, random_state=2)
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=3)
    per_run = dptune.Guarantee.zcdp(0.05)
    kwargs = dict(per_run=per_run, repeats=dptune.Repeats.geometric(0.2), seed=8)
    space = {"C": ("log-uniform", 0.001, 10.0)}
    plan = dptune._core._plan_tuning(space, per_run, repeats=kwargs["repeats"], seed=8)
    configs = [c for (_, c, _) in plan.tasks()]
    seq = dptune.tune(run, space, **kwargs)
    with ProcessPoolExecutor(max_workers=2) as ex:
        par = dptune.tune(run, space, executor=ex, **kwargs)
    assert seq.config in configs and par.config in configs
    assert par.model.guarantee_.rho <= 0.05 and par.guarantee == seq.guarantee


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 1: no released object carries a key to the privacy noise.

class LeakyCandidate(Candidate):
    """The key flow of e99dd64, kept as the wrong variant the attack must break: the run's seed
    keys the fit's Gaussian noise and stays on the released model, and seed + 1 keys the score's
    noise."""

    def __call__(self, config, allowance, seed):
        rho = allowance.rho
        model = clone(self.estimator).set_params(**config, rho=rho)
        W = exact_minimiser(self.X_train, self.y_train, model.classes, model.C, tol=model.tol)
        noisy, spent = dptune.gaussian_release(W.ravel(), model.sensitivity(), rho, seed=seed)
        W = noisy.reshape(W.shape)
        model.classes_ = np.asarray(model.classes)
        model.coef_, model.intercept_ = W[:, :-1], W[:, -1]
        model.guarantee_, model.seed = spent, seed  # e99dd64: `seed` in get_params()
        correct = int((model.predict(self.X_val) == self.y_val).sum())
        score, _ = dptune.noisy_count(correct, math.sqrt(2.0 * rho), seed=(seed + 1) % 2**64)
        return model, score


def exposed_keys(model, known=()):
    """Every integer an attacker can read off the released model (its attributes and
    ``get_params()``), plus the seeds it knows (a seeded tuning's per-run seeds), each also + 1."""
    found = [v for v in list(vars(model).values()) + list(model.get_params().values())
             if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
    keys = {int(k) % 2**64 for k in list(found) + list(known)}
    return keys | {(k + 1) % 2**64 for k in keys}


def attack(model, score, run, known=()):
    """Regenerates the noise from every exposed key: (best distance of the de-noised
    coefficients to the non-private minimiser, whether some key gives the exact count). Uses
    only what e99dd64 also had, so the same attack runs against its code."""
    exact_w = exact_minimiser(run.X_train, run.y_train, list(model.classes), model.C)
    released = np.hstack([model.coef_, model.intercept_[:, None]])
    exact_count = int((model.predict(run.X_val) == run.y_val).sum())
    eps = math.sqrt(2.0 * model.rho)
    best, count_hit = math.inf, False
    for key in exposed_keys(model, known):
        noise, _ = dptune.gaussian_release(np.zeros(released.size), model.sensitivity(),
                                           model.rho, seed=key)
        best = min(best, float(np.abs(released - noise.reshape(released.shape) - exact_w).max()))
        count_hit |= score - dptune.noisy_count(0, eps, seed=key)[0] == exact_count
    return best, count_hit


@pytest.mark.parametrize("cls, leaks", [(LeakyCandidate, True), (Candidate, False)])
def test_released_model_and_score_carry_no_noise_key(cls, leaks):
    """The audit's attack on a seeded tuning, with an attacker who also knows the tuning's seed
    (hence every run's seed): on the leaky variant (e99dd64's key flow) regenerating the noise
    recovers the non-private minimiser (up to the solver tolerance, C·tol ≤ 1e-5) and the exact
    validation count; on the shipped Candidate it recovers neither. Run against e99dd64's own
    Candidate, the `Candidate` case fails (the attack recovers both). Noise per coordinate is
    σ = Δ/√(2ρ) ≥ 0.44 here; the attack 'succeeds' on an OS draw only if a regenerated vector
    lands within 1e-2 of it in all 5 coordinates (≤ 0.013 each, so < 4e-10 per key and < 2e-7
    over the few hundred keys tried), or if in all 25 runs some key's regenerated count noise
    equals the OS draw (two discrete Laplace draws at ε = √0.1 agree with probability 0.080; a
    run with K tasks offers 2K keys; the product over these seeds of min(1, 2K·0.080) is 1e-9)."""
    X, y = make_classification(n_samples=1000, n_features=4, random_state=6)
    run = cls(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=2)
    per_run = dptune.Guarantee.zcdp(0.05)
    repeats = dptune.Repeats.geometric(0.3)
    space = {"C": ("log-uniform", 0.1, 10.0)}
    dists, hits = [], []
    for tune_seed in range(25):
        plan = dptune._core._plan_tuning(space, per_run, repeats=repeats, seed=tune_seed)
        known = [s for (_, _, s) in plan.tasks()]
        best = dptune.tune(run, space, per_run=per_run, repeats=repeats, seed=tune_seed)
        d, hit = attack(best.model, best.score, run, known)
        dists.append(d)
        hits.append(hit)
    if leaks:
        assert max(dists) < 1e-4 and all(hits)
    else:
        assert min(dists) > 1e-2 and not all(hits)
        assert "seed" not in best.model.get_params()


def test_private_estimator_has_no_noise_seed():
    """e99dd64's PrivateLogisticRegression took `seed` and kept it in get_params()."""
    assert "seed" not in PrivateLogisticRegression(classes=[0, 1]).get_params()
    with pytest.raises(TypeError):
        PrivateLogisticRegression(classes=[0, 1], seed=3)


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 7: data are validated before any mechanism; a data failure in a run aborts.

def test_candidate_validates_data_before_the_split(monkeypatch):
    """A NaN feature or an undeclared label is a DataError raised before split_by_coin (the
    first randomised step) runs; at e99dd64 the NaN surfaced inside every run's fit as
    InvalidParameter, each run became a NaN score and the tuning released "no release"."""
    import dptune.sklearn as sk

    def split_by_coin(*args, **kwargs):
        raise AssertionError("split_by_coin ran before the data were validated")

    monkeypatch.setattr(sk, "split_by_coin", split_by_coin)
    X, y = make_classification(n_samples=200, random_state=0)
    X[7, 2] = math.nan
    with pytest.raises(dptune.DataError, match="`X`"):
        Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y)
    with pytest.raises(dptune.DataError, match="`y`"):
        Candidate(PrivateLogisticRegression(classes=[0, 2]), np.nan_to_num(X), y)


def test_a_data_failure_inside_a_run_aborts_the_tuning_and_releases_nothing():
    """Only InvalidParameter (a data-independent refusal of the configuration) becomes an
    unusable run; a DataError, like the grid's refusal of a non-finite value, aborts."""
    X, y = make_classification(n_samples=300, random_state=0)
    per, rep = dptune.Guarantee.zcdp(0.05), dptune.Repeats.geometric(0.3)

    def nan_release(config, allowance, seed):
        # The path noise/grid.rs refuses: a non-finite value reaching the noise.
        out, _ = dptune.gaussian_release([config["C"], math.nan], 1.0, allowance.rho)
        return out, 0.0

    with pytest.raises(dptune.DataError):
        dptune.tune(nan_release, {"C": [1.0, 2.0]}, per_run=per, repeats=rep, seed=1)

    # An unusable configuration (refused before touching data) is still an unusable run; when
    # every run is one, the tuning raises it (issue 15: no silent "no release").
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y, seed=1)
    r = dptune.tune(run, {"C": [-1.0, 1.0]}, per_run=per, method="exhaustive")
    assert r.config == {"C": 1.0}
    with pytest.raises(dptune.InvalidParameter, match="every run refused.*`C` = -1.0"):
        dptune.tune(run, {"C": [-1.0]}, per_run=per, repeats=rep, seed=1)


# ------------------------------------------------------------------------------------------------
# Issue 13, last point: the certified solver never fails after validation.

def test_gradient_error_and_fallback_plan_worked_numbers():
    """By hand. Binary, m = 1000 rows of norm ≤ B = √2, p = 3, C = 1, at ‖W‖ ≤ r = 10:
    ε_r = γ₃·B·r/4 + 8u + 3u, the pairwise sum adds γ₉₆·(1 + ε_r) per row, the final
    addition u·(1 + ε_r)(1 + γ₉₆) per row, and W/C 2.01·u·r."""
    u = 2.0**-53
    g = lambda k: k * u / (1 - k * u)  # noqa: E731
    B = math.sqrt(2.0)
    eps_r = g(3) * B * 10 / 4 + 11 * u
    by_hand = 1000 * B * (eps_r + g(96) * (1 + eps_r)) + u * 1000 * B * (1 + eps_r) * (1 + g(96))
    by_hand += 2.01 * u * 10
    assert cert._gradient_error(1000, 3, 2, 1.0, B, 10.0) == pytest.approx(by_hand, rel=1e-9)
    assert by_hand == pytest.approx(1.86e-11, rel=1e-2)
    # The fallback for m = 100, C = 1, tol = 1e-3: R₀ = √(2·100·ln 2) = 11.77, β = 100·2/4 + 1
    # = 51, η = 1/51 = 1 − q, and K = ⌈51·ln(2R/(C·tol/2))⌉ + 1 = ⌈51·ln 47 088⌉ + 1 = 550.
    plan = sk._Plan(100, 3, 2, 1.0, B, 1e-3)
    assert plan.radius == pytest.approx(math.sqrt(200 * math.log(2)), rel=1e-9)
    assert plan.eta == pytest.approx(1 / 51, rel=1e-12) and plan.steps == 550
    assert plan.floor < 1e-3 / 2 * 1e-4  # far below the half of C·tol it may use


def test_the_certificate_includes_the_gradients_rounding():
    """The certificate bounds the exact ‖∇F‖ (computed in 60-digit decimal arithmetic) at
    points near the minimiser, where the computed gradient is all rounding. The wrong variant
    (the computed norm alone, the certificate of e99dd64) falls below the exact norm at some
    of them: with tol between the two it would certify a point that is not within C·tol."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=3000) > 0).astype(int)
    Z = _features(X, 1.0, 1.0)
    C = 1e3
    obj = _Objective(Z, y, 2, C, math.sqrt(2.0))
    W = cert._newton(obj, np.zeros((1, 3)), 1e-12, 100)
    Zd = [[Decimal(float(v)) for v in row] for row in Z]

    def exact_norm(V):
        w = [Decimal(float(v)) for v in V[0]]
        g = [Decimal(0)] * 3
        for row, label in zip(Zd, y):
            r = 1 / (1 + (-sum(a * b for a, b in zip(row, w))).exp()) - int(label)
            g = [gi + r * zi for gi, zi in zip(g, row)]
        return float(sum((gi + wi / Decimal(C)) ** 2 for gi, wi in zip(g, w)).sqrt())

    wrong_under = 0
    for _ in range(8):
        V = W * (1.0 + rng.normal(size=W.shape) * 1e-15)
        exact = exact_norm(V)
        assert obj.certified_gradient(V) >= exact
        wrong_under += float(np.linalg.norm(obj.gradient(V))) < exact
    assert wrong_under >= 1


def _fallback_problem():
    X, y = make_classification(n_samples=200, n_features=4, random_state=1)
    model = PrivateLogisticRegression(classes=[0, 1], C=1.0)
    obj = _Objective(model._design(X), y, 2, 1.0, model._row_bound())
    return X, y, model, obj, model._plan(200, 4, 2)


def test_the_fallback_reaches_c_tol_and_fewer_steps_do_not():
    """The fallback from zero with the certificate's early stop disabled (tol = 0) lands within
    C·tol of the minimiser after its planned step count; the deliberately wrong variant with a
    tenth of the steps does not (deterministic: fixed data, no randomness)."""
    X, y, model, obj, plan = _fallback_problem()
    exact = exact_minimiser(X, y, [0, 1], 1.0)  # within 1e-9 of w*
    start = np.zeros_like(exact)
    W = cert._fallback(obj, plan, start, 0.0, plan.steps)
    assert np.linalg.norm(W - exact) <= 1.0 * model.tol - 1e-9
    W = cert._fallback(obj, plan, start, 0.0, plan.steps // 10)
    assert np.linalg.norm(W - exact) > 1.0 * model.tol + 1e-9


def test_fit_with_the_fallback_forced_still_releases(monkeypatch):
    """No Newton step and no warm start (the private hook `_NEWTON_STEPS`): the certificate at
    zero fails, the fallback runs, and fit releases a model whose noise-free point is within
    C·tol of the minimiser."""
    X, y, model, obj, plan = _fallback_problem()
    monkeypatch.setattr(sk, "_NEWTON_STEPS", 0)
    assert obj.certified_gradient(np.zeros((1, 5))) > model.tol
    W = model._solution(*model._validate(X, y)[:2], 2)
    exact = exact_minimiser(X, y, [0, 1], 1.0)
    assert np.linalg.norm(W - exact) <= model.tol
    fitted = clone(model).fit(X, y)
    assert np.isfinite(fitted.coef_).all() and fitted.guarantee_.rho <= model.rho
    assert "_NEWTON_STEPS" not in sk.__all__ and "_NEWTON_STEPS" not in vars(fitted)


def test_a_size_beyond_the_precision_floor_is_refused_before_any_mechanism(monkeypatch):
    """m = 2000 rows at C = 1e8 and tol = 1e-6: double precision cannot certify it. fit, the
    Candidate and dptune.tune (through check_space, for the worst C of the space) refuse it
    with a DataError naming `tol` before any noise is drawn; at the default tol it passes."""
    X, y = make_classification(n_samples=2000, n_features=5, random_state=0)

    def no_mechanism(*a, **k):
        raise AssertionError("a mechanism ran")

    monkeypatch.setattr(sk, "gaussian_release", no_mechanism)
    monkeypatch.setattr(sk, "noisy_count", no_mechanism)
    tight = PrivateLogisticRegression(classes=[0, 1], C=1e8, tol=1e-6)
    with pytest.raises(dptune.DataError, match="`tol` = 1e-06.*raise `tol` to at least"):
        tight.fit(X, y)
    with pytest.raises(dptune.DataError, match="`tol`"):
        Candidate(tight, X, y, seed=1)
    run = Candidate(clone(tight).set_params(C=1.0), X, y, seed=1)  # fine at C = 1
    with pytest.raises(dptune.DataError, match="`tol`"):
        dptune.tune(run, {"C": ("log-uniform", 0.01, 1e8)}, per_run=dptune.Guarantee.zcdp(0.05),
                    repeats=dptune.Repeats.geometric(0.5), seed=1)
    # The worst case is the largest C, whichever form the space takes; a tol in the space
    # counts at its smallest value.
    with pytest.raises(dptune.DataError, match="`tol`"):
        run.check_space({"C": [1.0, 1e8]})
    with pytest.raises(dptune.DataError, match="`tol`"):
        run.check_space({"C": [1e4], "tol": ("uniform", 1e-9, 1e-3)})
    run.check_space({"C": [1.0, 100.0]})
    run.check_space({"C": ["fast"]})  # refused by each run instead, independently of the data
    PrivateLogisticRegression(classes=[0, 1], C=1e8)._plan(2000, 5, 2)  # default tol: fine


def test_the_precision_floor_grows_with_each_parameter_check_space_maximises():
    """check_space relies on the floor growing with m, C, the row bound and the feature count
    (then every configuration of a space passes on fewer rows if the worst one passes)."""
    B = math.sqrt(2.0)
    for k in (2, 3):
        base = dict(m=5000, p=6, k=k, C=10.0, B=B, tol=1e-3)
        floor = sk._Plan(**base).floor
        for name, bigger in (("m", 50_000), ("p", 60), ("C", 1e4), ("B", 3.0)):
            assert sk._Plan(**{**base, name: bigger}).floor > floor, name


@pytest.mark.parametrize("C", [1e-4, 1.0, 1e4, 1e10])
def test_fit_after_validation_certifies_on_hard_data(C):
    """Data that passed validation do not make fit fail, nor print anything (a warning some
    data trigger would be a release): separable data at weak regularisation, one class absent,
    duplicated rows, rows far outside the norm bound. At e99dd64 the binary sigmoid overflowed
    with a RuntimeWarning on the separable data at C = 1e10."""
    import warnings

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3)) * 1e6
    y = (X[:, 0] > 0).astype(int)
    cases = [(X, y), (X, np.zeros(500, int)), (np.repeat(X[:2], 250, axis=0), np.repeat(y[:2], 250))]
    for XX, yy in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = PrivateLogisticRegression(classes=[0, 1], C=C, feature_bounds=(-1e7, 1e7))
            m.fit(XX, yy)
        assert np.isfinite(m.coef_).all() and m.guarantee_.rho <= 0.1


def test_an_empty_side_of_the_split_is_a_run_not_a_failure():
    """Issue 13, finding 13: a coin split can leave a side empty (probability p^n + (1-p)^n);
    refusing then, or failing inside the run, would depend on the private number of records.
    One record: one side is always empty. The run still releases a model (noise around the
    minimiser of the regulariser alone when the training side is empty) and a noisy count."""
    X, y = np.array([[0.3, -0.2]]), np.array([1])
    est = PrivateLogisticRegression(classes=[0, 1])
    sides = set()
    for seed in range(12):
        run = Candidate(est, X, y, seed=seed)
        sides.add((len(run.y_train), len(run.y_val)))
        model, score = run({"C": 1.0}, dptune.Guarantee.zcdp(0.5), 0)
        assert np.isfinite(model.coef_).all() and math.isfinite(score)
    # Both layouts occurred (each has probability 1/2 per seed: missing one has probability
    # 2 * 2**-12 < 5e-4, and the seeds are fixed, so this is deterministic).
    assert sides == {(1, 0), (0, 1)}



#: What a fitted PrivateLogisticRegression releases (charged), besides its parameters.
_RELEASED_ATTRIBUTES = {"coef_", "intercept_", "classes_", "guarantee_"}


def _public_fields(result):
    """What a Python tuning releases that must not depend on the data: the whole guarantee, the
    released model's class, attribute and parameter names, and the value of every attribute
    that is neither a charged release nor a hyperparameter. The chosen configuration, the
    model's coefficients and the score are charged releases."""
    g = result.guarantee
    model = result.model
    params = model.get_params()
    other = {k: v for k, v in vars(model).items()
             if k not in _RELEASED_ATTRIBUTES and k not in params}
    return (
        g.neighbours, g.epsilon(1e-6), g.rho, g.pure_epsilon,
        type(model).__name__, sorted(vars(model)), sorted(params), other,
    )


def test_python_tune_releases_the_same_public_fields_on_neighbours():
    """Issue 13's neighbour differencing for the Python tune/sklearn path: D and D minus one
    record, OS-keyed noise (no seed anywhere), three times; every public field is identical. A
    deliberately leaky model (one that keeps the number of training records, as a
    scikit-learn estimator's ``n_samples_``-style attribute would) fails the same check."""
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)

    def release(X, y):
        run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y)
        return dptune.tune(run, {"C": [0.1, 1.0, 10.0]}, per_run=dptune.Guarantee.zcdp(0.05),
                           repeats=dptune.Repeats.geometric(0.5))

    for _ in range(3):
        a, b = release(X, y), release(X[:-1], y[:-1])
        assert a.released and b.released
        assert _public_fields(a) == _public_fields(b)
    a.model.n_records_, b.model.n_records_ = len(X), len(X) - 1
    assert _public_fields(a) != _public_fields(b)


def _released_paths(result):
    """The attribute paths a Python tuning result releases, as the release schema names them."""
    tune_paths = [f"config.{k}" for k in (result.config or {})] + [
        k for k in vars(result) if k != "config"
    ]
    model_paths = sorted(set(vars(result.model)) | set(result.model.get_params()))
    return tune_paths, model_paths


def test_python_results_release_only_declared_fields():
    """Issue 13's release schema covers the Python result objects too: every field of the
    tuning result and every attribute of the fitted model is declared in
    ``dptune::release_schema`` (public input, charged release or diagnostic). A model that
    carries an undeclared attribute (a noise seed, as e99dd64's did, or a record count) fails."""
    from dptune import _core
    X, y = make_classification(n_samples=300, n_features=5, random_state=4)
    run = Candidate(PrivateLogisticRegression(classes=[0, 1]), X, y)
    best = dptune.tune(run, {"C": [0.1, 1.0]}, per_run=dptune.Guarantee.zcdp(0.05),
                       repeats=dptune.Repeats.geometric(0.5))
    tune_paths, model_paths = _released_paths(best)
    assert _core._release_violations("python tune", tune_paths) == []
    assert _core._release_violations("python PrivateLogisticRegression", model_paths) == []
    best.model.seed = 7  # the e99dd64 noise key
    best.model.n_records_ = len(X)
    _, leaky = _released_paths(best)
    found = _core._release_violations("python PrivateLogisticRegression", leaky)
    assert len(found) == 2 and any("`seed`" in v for v in found), found
