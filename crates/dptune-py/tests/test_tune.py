"""The Python-callable tuner: seeded results, executors, bad callables."""

import math
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import dptune

SPACE = {"x": ("uniform", 0.0, 1.0), "n": ("int", 0, 3), "opt": ["sgd", "adam"]}


def reference_score(config, seed):
    """A public score of the configuration and the run's seed: −Σ (x − 0.3)² over the values
    (a string counts as its length) plus (seed mod 1000)·1e-6."""
    s = 0.0
    for k in sorted(config):
        v = config[k]
        x = float(len(v)) if isinstance(v, str) else float(v)
        s -= (x - 0.3) ** 2
    return s + (seed % 1000) * 1e-6


def reference_candidate(config, allowance, seed):
    assert isinstance(allowance, dptune.Guarantee)
    return (config, seed), reference_score(config, seed)


#: The winners (x, n, opt, the winning run's seed; None for ⊥) of seeds 0..7, recorded from the
#: bindings' own copy of the tuner before it was replaced by the library's schedule and release
#: rule (that copy was checked equal to the library's `Tuner::run` on a Rust learner with the
#: same score, seed by seed): the Python tuner's seeded results are unchanged.
RECORDED = [
    (
        dict(repeats=dptune.Repeats.geometric(0.1)),
        [(0.5239626705272191, 0, "sgd", 3036244423678546253),
         (0.8478321072531675, 1, "sgd", 4696696349603471768),
         (0.015010037625518335, 1, "sgd", 7070469691755660450),
         (0.49543401288116484, 0, "sgd", 14016478008547616732),
         (0.6587879223859102, 0, "sgd", 5417744480440104616),
         (0.14267218681867555, 3, "adam", 13439320504821995305),
         (0.4239053280062891, 2, "sgd", 6583108998700425120),
         (0.12793500378962708, 0, "sgd", 1380229115568172325)],
    ),
    (
        dict(repeats=dptune.Repeats.poisson(6.0)),
        [(0.40092809368987226, 2, "sgd", 10292628556241478926),
         (0.8478321072531675, 1, "sgd", 4696696349603471768),
         (0.005374865386936878, 0, "sgd", 15016283784943642641),
         (0.6326007033402068, 3, "adam", 1239048389106587429),
         (0.8678620271606782, 1, "sgd", 13601256824666971371),
         (0.05792802652824858, 2, "adam", 10703117722574805607),
         (0.4239053280062891, 2, "sgd", 6583108998700425120),
         (0.5484127695009985, 1, "sgd", 9366722803246756458)],
    ),
    (
        dict(repeats=dptune.Repeats.tnb(1.0, 0.2)),
        [(0.40092809368987226, 2, "sgd", 10292628556241478926),
         (0.8478321072531675, 1, "sgd", 4696696349603471768),
         (0.015010037625518335, 1, "sgd", 7070469691755660450),
         (0.9405392030434712, 1, "sgd", 12761461904252775703),
         (0.8678620271606782, 1, "sgd", 13601256824666971371),
         (0.14267218681867555, 3, "adam", 13439320504821995305),
         (0.4239053280062891, 2, "sgd", 6583108998700425120),
         (0.12793500378962708, 0, "sgd", 1380229115568172325)],
    ),
    (
        dict(repeats=dptune.Repeats.geometric(0.3), cap=60, cap_delta=1e-6),
        [(0.40092809368987226, 2, "sgd", 10292628556241478926),
         (0.8478321072531675, 1, "sgd", 4696696349603471768),
         (0.015010037625518335, 1, "sgd", 7070469691755660450),
         (0.8409087718872242, 0, "adam", 11157886758213495761),
         (0.8678620271606782, 1, "sgd", 13601256824666971371),
         (0.14267218681867555, 3, "adam", 13439320504821995305),
         (0.4239053280062891, 2, "sgd", 6583108998700425120),
         (0.2363775506589023, 1, "sgd", 10076721530571423598)],
    ),
    (
        dict(method="threshold", gamma=0.05, threshold=-7.45),
        [(0.5239626705272191, 0, "sgd", 3036244423678546253), None, None,
         (0.49543401288116484, 0, "sgd", 14016478008547616732), None, None,
         (0.18150522053675677, 0, "sgd", 12919445527316465923),
         (0.12793500378962708, 0, "sgd", 1380229115568172325)],
    ),
    (
        dict(repeats=dptune.Repeats.geometric(0.2), direction="minimize"),
        [(0.7789420563797014, 2, "adam", 16051047098148290682),
         (0.8478321072531675, 1, "sgd", 4696696349603471768),
         (0.8625323304510414, 3, "adam", 8938595488437242832),
         (0.840174185712698, 3, "adam", 11256966284329307760),
         (0.9992714262563211, 3, "sgd", 7708157055399573464),
         (0.14267218681867555, 3, "adam", 13439320504821995305),
         (0.8921759923012296, 3, "sgd", 17337212719329021150),
         (0.8568783138552929, 3, "adam", 8494322213603847853)],
    ),
]


@pytest.mark.parametrize("kwargs,winners", RECORDED)
def test_seeded_tunings_release_what_they_released_before(kwargs, winners):
    per_run = dptune.Guarantee.pure(0.2)
    for seed, want in enumerate(winners):
        got = dptune.tune(reference_candidate, SPACE, per_run=per_run, seed=seed, **kwargs)
        if want is None:
            assert got.config is None and got.score is None
            continue
        x, n, opt, run_seed = want
        assert got.config == {"x": x, "n": n, "opt": opt}
        assert got.model == (got.config, run_seed)
        assert got.score == reference_score(got.config, run_seed)
        if "cap" not in kwargs:
            method = {k: v for k, v in kwargs.items() if k != "direction"}
            assert got.guarantee == dptune.tuning_cost(per_run, **method)


def test_exhaustive_runs_every_grid_point_and_composes():
    space = {"a": [0.1, 0.3, 0.9], "b": [0, 1]}
    per_run = dptune.Guarantee.zcdp(0.01)
    got = dptune.tune(reference_candidate, space, per_run=per_run, method="exhaustive", seed=1)
    assert got.config == {"a": 0.3, "b": 0} and got.score == -0.089367
    assert abs(got.guarantee.rho - 0.06) < 1e-12


def test_result_does_not_expose_the_number_of_runs():
    r = dptune.tune(reference_candidate, SPACE, per_run=dptune.Guarantee.pure(0.1),
                    repeats=dptune.Repeats.geometric(0.1), seed=3)
    # Released (charged): config, model, score. Public inputs and what follows from them alone:
    # the rest (`seeded`: whether `seed` was given). Nothing counts runs.
    assert set(vars(r)) == {"config", "model", "score", "guarantee", "per_run", "target",
                            "method", "direction", "cap", "noise_multiplier", "seeded"}


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


def test_a_method_object_tunes_as_its_older_keywords():
    per_run = dptune.Guarantee.pure(0.2)
    grid = {"a": [0.1, 0.3, 0.9], "b": [0, 1]}
    M = dptune.Method
    cases = [
        (SPACE, M.papernot_steinke(dptune.Repeats.geometric(0.1)),
         dict(repeats=dptune.Repeats.geometric(0.1))),
        (SPACE, M.liu_talwar(-7.45, 0.05), dict(method="threshold", threshold=-7.45, gamma=0.05)),
        (grid, M.exhaustive(), dict(method="exhaustive")),
    ]
    for space, method, old in cases:
        for direction in ("maximize", "minimize"):
            for seed in range(4):
                a = dptune.tune(reference_candidate, space, per_run=per_run, seed=seed,
                                method=method, direction=direction)
                b = dptune.tune(reference_candidate, space, per_run=per_run, seed=seed,
                                direction=direction, **old)
                assert (a.config, a.score, a.guarantee, a.method) == (
                    b.config, b.score, b.guarantee, b.method)
    # The cost and the calibration take it too; a grid size is needed where no space gives it.
    rep = dptune.Repeats.with_mean(10)
    assert dptune.tuning_cost(per_run, method=M.papernot_steinke(rep)) == dptune.tuning_cost(
        per_run, repeats=rep)
    assert dptune.tuning_cost(per_run, method=M.exhaustive(6)) == dptune.tuning_cost(
        per_run, method="exhaustive", runs=6)
    target = dptune.Guarantee.approx(2.0, 1e-5)
    assert dptune.calibrate(target, method=M.papernot_steinke(rep)) == dptune.calibrate(
        target, repeats=rep)
    with pytest.raises(dptune.InvalidParameter, match="runs"):
        dptune.tuning_cost(per_run, method=M.exhaustive())
    # A Method and a loose keyword of the older spelling together are refused, naming it.
    with pytest.raises(dptune.InvalidParameter, match="repeats"):
        dptune.tuning_cost(per_run, method=M.papernot_steinke(rep), repeats=rep)
    with pytest.raises(dptune.InvalidParameter, match="gamma|stop"):
        M.liu_talwar(0.5, 1.5)
    with pytest.raises(dptune.InvalidParameter, match="method"):
        dptune.tuning_cost(per_run, method=3)
    assert M.liu_talwar(0.5, 0.1) == M.liu_talwar(0.5, 0.1) != M.exhaustive()
    assert M.papernot_steinke(rep).repeats == rep and M.papernot_steinke(rep).name == "repeat"
    assert "liu_talwar" in repr(M.liu_talwar(0.5, 0.1))


def test_a_seeded_tuning_says_it_is_not_private():
    """Review item: a callable ``tune`` with ``seed=`` returned a result that did not say it was
    seeded. ``TuneResult.seeded`` says whether a seed (an int or a SeededRun) drew the plan, and
    a seeded result's summary carries the NOT PRIVATE note; an unseeded one has neither."""
    from dptune._results import SEEDED_NOTE

    args = dict(per_run=dptune.Guarantee.zcdp(0.05), repeats=dptune.Repeats.geometric(0.5))
    for seed in (4, dptune.SeededRun(4)):
        seeded = dptune.tune(reference_candidate, SPACE, seed=seed, **args)
        assert seeded.seeded is True
        assert seeded.summary().splitlines().count(SEEDED_NOTE) == 1
        assert str(seeded) == seeded.summary()
    private = dptune.tune(reference_candidate, SPACE, **args)
    assert private.seeded is False
    assert "NOT PRIVATE" not in str(private) and "seeded" not in str(private)
