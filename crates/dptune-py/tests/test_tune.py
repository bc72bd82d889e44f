"""The Python-callable tuner: equality with the Rust core's Tuner, executors, bad callables."""

import math
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import dptune
from dptune import _core

SPACE = {"x": ("uniform", 0.0, 1.0), "n": ("int", 0, 3), "opt": ["sgd", "adam"]}


def reference_candidate(config, allowance, seed):
    """Same score as the Rust reference learner: −Σ (x − 0.3)² + (seed mod 1000)·1e-6."""
    assert isinstance(allowance, dptune.Guarantee)
    return (config, seed), _core._reference_score(config, seed)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(repeats=dptune.Repeats.geometric(0.1)),
        dict(repeats=dptune.Repeats.poisson(6.0)),
        dict(repeats=dptune.Repeats.tnb(1.0, 0.2)),
        dict(repeats=dptune.Repeats.geometric(0.3), cap=60, cap_delta=1e-6),
        dict(method="threshold", gamma=0.2, threshold=-0.5),
    ],
)
def test_tuner_equals_the_rust_core_for_the_same_seed(kwargs):
    per_run = dptune.Guarantee.pure(0.2)
    for seed in range(8):
        got = dptune.tune(reference_candidate, SPACE, per_run=per_run, seed=seed, **kwargs)
        want_config, want_score, want_cost = _core._reference_tune(
            SPACE, per_run, seed=seed, **kwargs
        )
        assert got.config == want_config
        assert got.score == want_score
        assert got.guarantee == want_cost


def test_exhaustive_equals_the_rust_core():
    space = {"a": [0.1, 0.3, 0.9], "b": [0, 1]}
    per_run = dptune.Guarantee.zcdp(0.01)
    got = dptune.tune(reference_candidate, space, per_run=per_run, method="exhaustive", seed=1)
    cfg, score, cost = _core._reference_tune(space, per_run, method="exhaustive", seed=1)
    assert got.config == cfg and got.score == score and got.guarantee == cost
    assert abs(got.guarantee.rho - 0.06) < 1e-12


def test_result_does_not_expose_the_number_of_runs():
    r = dptune.tune(reference_candidate, SPACE, per_run=dptune.Guarantee.pure(0.1),
                    repeats=dptune.Repeats.geometric(0.1), seed=3)
    # Released (charged): config, model, score. Public inputs and what follows from them alone:
    # the rest. Nothing counts runs.
    assert set(vars(r)) == {"config", "model", "score", "guarantee", "per_run", "target",
                            "method", "direction", "cap", "noise_multiplier"}


def test_bad_callables_raise_python_exceptions():
    per = dptune.Guarantee.pure(0.1)
    rep = dptune.Repeats.geometric(0.5)

    def boom(c, a, s):
        raise RuntimeError("user code failed")

    with pytest.raises(RuntimeError, match="user code failed"):
        dptune.tune(boom, SPACE, per_run=per, repeats=rep, seed=1)
    with pytest.raises(dptune.InvalidParameter, match="pair"):
        dptune.tune(lambda c, a, s: 1.0, SPACE, per_run=per, repeats=rep, seed=1)
    with pytest.raises(dptune.InvalidParameter, match="real number"):
        dptune.tune(lambda c, a, s: (None, "high"), SPACE, per_run=per, repeats=rep, seed=1)
    with pytest.raises(dptune.DptuneError, match="non-finite"):
        dptune.tune(lambda c, a, s: (None, math.nan), SPACE, per_run=per, repeats=rep, seed=1)
    with pytest.raises(TypeError):
        dptune.tune(42, SPACE, per_run=per, repeats=rep, seed=1)
    with pytest.raises(dptune.InvalidParameter, match="search_space|space"):
        dptune.tune(reference_candidate, {"x": ("uniform", 1.0, 0.0)}, per_run=per, repeats=rep)
    with pytest.raises(dptune.DptuneError, match="RDP|conver"):
        dptune.tune(reference_candidate, SPACE, per_run=dptune.Guarantee.approx(1.0, 1e-6),
                    repeats=rep)

    # A configuration refused with InvalidParameter is an unusable run (worst score), not an abort.
    def picky(c, a, s):
        if c["opt"] == "adam":
            raise dptune.InvalidParameter("invalid parameter `opt` = adam: unsupported")
        return None, -c["x"]

    r = dptune.tune(picky, SPACE, per_run=per, repeats=dptune.Repeats.geometric(0.05), seed=2)
    assert r.config is None or r.config["opt"] == "sgd"


# ------------------------------------------------------------------------------------------------
# A small scikit-learn model tuned through executors.

def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    w = np.array([1.0, -2.0, 0.5, 0.0, 1.5])
    y = (X @ w + 0.3 * rng.normal(size=400) > 0).astype(int)
    return X, y


def sklearn_candidate(config, allowance, seed):
    """Trains a scikit-learn logistic regression on one half and scores the other half with a
    Gaussian-noised accuracy whose σ spends the zCDP allowance (Δ = 1/n_val, ρ = Δ²/(2σ²)).
    The fit itself is non-private here (test fixture only); a real candidate must spend its
    allowance on the fit too (e.g. DP-SGD with Opacus)."""
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    Xt, yt, Xv, yv = X[:200], y[:200], X[200:], y[200:]
    model = LogisticRegression(C=config["C"], max_iter=200).fit(Xt, yt)
    acc = float((model.predict(Xv) == yv).mean())
    sigma = (1.0 / len(yv)) / math.sqrt(2 * allowance.rho)
    noisy = acc + np.random.default_rng(seed).normal(0.0, sigma)  # test fixture noise
    return model, noisy


SK_SPACE = {"C": ("log-uniform", 1e-4, 10.0)}


def test_sklearn_tuning_through_a_process_pool_matches_sequential():
    per = dptune.Guarantee.zcdp(0.05)
    rep = dptune.Repeats.geometric(0.2)
    seq = dptune.tune(sklearn_candidate, SK_SPACE, per_run=per, repeats=rep, seed=11)
    with ProcessPoolExecutor(max_workers=2) as ex:
        par = dptune.tune(sklearn_candidate, SK_SPACE, per_run=per, repeats=rep, seed=11,
                          executor=ex)
    assert par.config == seq.config and par.score == seq.score
    assert par.guarantee == seq.guarantee
    assert par.model.predict(_data()[0][:5]).shape == (5,)
    with ThreadPoolExecutor(2) as ex:
        thr = dptune.tune(sklearn_candidate, SK_SPACE, per_run=per, repeats=rep, seed=11,
                          executor=ex)
    assert thr.config == seq.config


def test_sklearn_tuning_on_a_local_dask_cluster():
    distributed = pytest.importorskip("distributed")
    per = dptune.Guarantee.zcdp(0.05)
    rep = dptune.Repeats.geometric(0.2)
    seq = dptune.tune(sklearn_candidate, SK_SPACE, per_run=per, repeats=rep, seed=5, cap=80,
                      cap_delta=1e-6)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            ex = client.get_executor()
            par = dptune.tune(sklearn_candidate, SK_SPACE, per_run=per, repeats=rep, seed=5,
                              cap=80, cap_delta=1e-6, executor=ex)
    assert par.config == seq.config and par.score == seq.score
    assert par.guarantee == seq.guarantee and par.guarantee.epsilon(0.01) > 0


def failing_candidate(config, allowance, seed):
    raise ValueError(f"training diverged for {sorted(config)}")


def test_a_callable_that_raises_in_a_worker_process_aborts_with_its_exception():
    with ProcessPoolExecutor(max_workers=2) as ex:
        with pytest.raises(ValueError, match="training diverged"):
            dptune.tune(failing_candidate, SK_SPACE, per_run=dptune.Guarantee.zcdp(0.05),
                        repeats=dptune.Repeats.geometric(0.2), cap=50, cap_delta=1e-3,
                        seed=1, executor=ex)


class CountingExecutor(ThreadPoolExecutor):
    def __init__(self):
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return super().submit(*args, **kwargs)


def test_cap_mode_always_submits_exactly_cap_tasks():
    per = dptune.Guarantee.pure(0.1)
    rep = dptune.Repeats.geometric(0.3)
    for seed in range(6):
        with CountingExecutor() as ex:
            r = dptune.tune(reference_candidate, SPACE, per_run=per, repeats=rep, cap=45,
                            cap_delta=1e-6, seed=seed, executor=ex)
        assert ex.submitted == 45
        assert r.guarantee.pure_epsilon is None  # converted to (ε, δ) with the truncation term
