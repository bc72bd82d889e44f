"""dptune.optuna: an unchanged define-by-run objective under private selection."""

import math
import runpy
from pathlib import Path

import numpy as np
import optuna
import pytest

import dptune
import dptune.optuna
from dptune.optuna import PrivateTrial, TrialMisuse

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "optuna" / "private_objective.py"


def conditional_objective(trial):
    """A typical Optuna objective with a conditional space; its value is a deterministic
    function of the parameters (no data: these tests check the mechanics, not privacy)."""
    kind = trial.suggest_categorical("kind", ["linear", "tree"])
    if kind == "linear":
        c = trial.suggest_float("C", 1e-3, 1e3, log=True)
        return -abs(math.log10(c) - 1.0)
    depth = trial.suggest_int("depth", 1, 8)
    return -abs(depth - 3) - 0.5


def test_the_objective_runs_unchanged_under_optuna_and_dptune():
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(0))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(conditional_objective, n_trials=5)
    best = dptune.optuna.optimize(
        conditional_objective,
        per_run=dptune.Guarantee.pure(0.1),
        repeats=dptune.Repeats.poisson(6.0),
        seed=1,
    )
    assert best.released
    assert best.best_params["kind"] in ("linear", "tree")
    # Only the parameters the winning branch asked for.
    assert set(best.best_params) in ({"kind", "C"}, {"kind", "depth"})
    assert best.best_value == conditional_objective(_Replay(best.best_params))


class _Replay:
    """A trial that answers from fixed parameters (to recompute a winner's value)."""

    def __init__(self, params):
        self.params = params

    def suggest_categorical(self, name, choices):
        return self.params[name]

    suggest_float = suggest_int = lambda self, name, *a, **k: self.params[name]


def test_the_winner_is_the_best_trial_in_either_direction():
    for direction, better in (("maximize", max), ("minimize", min)):
        for seed in range(5):
            seen = []

            def objective(trial):
                x = trial.suggest_float("x", -2.0, 2.0)
                seen.append(x * x)
                return x * x

            best = dptune.optuna.optimize(
                objective,
                per_run=dptune.Guarantee.pure(0.1),
                repeats=dptune.Repeats.geometric(0.2),
                direction=direction,
                seed=seed,
            )
            assert best.best_value == better(seen)
            assert best.best_params["x"] ** 2 == best.best_value


def test_threshold_in_the_objectives_units_for_minimize():
    seen = []

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        seen.append(x)
        return x

    best = dptune.optuna.optimize(
        objective,
        per_run=dptune.Guarantee.pure(0.1),
        method="threshold",
        gamma=0.05,
        threshold=0.1,
        direction="minimize",
        seed=3,
    )
    # Liu-Talwar: the first trial at or below the threshold wins.
    assert best.released and best.best_value <= 0.1
    assert best.best_value == next(x for x in seen if x <= 0.1)


def test_the_guarantee_is_the_whole_tunings_cost():
    per_run = dptune.Guarantee.zcdp(0.01)
    repeats = dptune.Repeats.poisson(5.0)
    best = dptune.optuna.optimize(
        lambda t: t.suggest_float("x", 0, 1), per_run=per_run, repeats=repeats
    )
    assert best.guarantee == dptune.tuning_cost(per_run, repeats=repeats)


@pytest.mark.parametrize(
    "misuse",
    [
        lambda t: t.report(0.5, 1),
        lambda t: t.should_prune(),
        lambda t: t.number,
        lambda t: t.set_user_attr("acc", 0.9),
        lambda t: t.set_system_attr("acc", 0.9),
        lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("x", 0, 2)),
        lambda t: t.suggest_float("x", 1, 0),
        lambda t: t.suggest_float("x", 0, 1, log=True),
        lambda t: t.suggest_int("n", 0.5, 3),
        lambda t: t.suggest_categorical("c", []),
        lambda t: "not a number",
    ],
)
def test_misuse_aborts_the_tuning_with_a_clear_error(misuse):
    def objective(trial):
        x = trial.suggest_float("y", 0, 1)
        out = misuse(trial)
        return out if isinstance(out, str) else x

    # Seeded so that at least one trial runs (a Poisson number of runs can be 0).
    with pytest.raises(TrialMisuse):
        dptune.optuna.optimize(
            objective,
            per_run=dptune.Guarantee.pure(0.1),
            repeats=dptune.Repeats.poisson(3.0),
            seed=0,
        )


def test_bad_arguments_are_refused_before_any_trial():
    calls = []

    def objective(trial):
        calls.append(1)
        return 0.0

    for kwargs in (
        dict(direction="max"),
        dict(method="exhaustive"),
    ):
        with pytest.raises(dptune.InvalidParameter):
            dptune.optuna.optimize(
                objective,
                per_run=dptune.Guarantee.pure(0.1),
                repeats=dptune.Repeats.poisson(3.0),
                **kwargs,
            )
    assert calls == []


def test_a_trials_parameters_depend_only_on_its_seed():
    """The configuration of a run is a function of the run's seed: the same seed gives the same
    parameters whatever the objective computes on data (here: two different 'datasets')."""
    for seed in (0, 1, 2**63 + 5):
        draws = []
        for data in (np.zeros(10), np.ones(11)):
            t = PrivateTrial(dptune.Guarantee.pure(1.0), seed)
            draws.append(
                (
                    t.suggest_float("lr", 1e-4, 1.0, log=True),
                    t.suggest_int("layers", 1, 4),
                    t.suggest_categorical("opt", ["sgd", "adam", None, True]),
                    float(data.sum()),
                )
            )
        assert draws[0][:3] == draws[1][:3]


def _log_uniform_ks(sample_log: bool) -> float:
    """Kolmogorov-Smirnov distance between 4000 suggest_float(..., log=True) draws (or, for
    the deliberately wrong variant, plain uniform draws) and the log-uniform CDF on [1e-3, 1]."""
    xs = []
    for seed in range(4000):
        t = PrivateTrial(dptune.Guarantee.pure(1.0), seed)
        xs.append(t.suggest_float("x", 1e-3, 1.0, log=sample_log))
    xs = np.sort(np.array(xs))
    cdf = np.log(np.clip(xs, 1e-3, 1.0) / 1e-3) / np.log(1e3)
    ecdf_hi = np.arange(1, len(xs) + 1) / len(xs)
    ecdf_lo = np.arange(0, len(xs)) / len(xs)
    return float(max((ecdf_hi - cdf).max(), (cdf - ecdf_lo).max()))


def test_log_uniform_draws_follow_the_declared_prior():
    # KS critical value at n = 4000 for a false-failure probability of 1e-6 (fixed seeds make
    # the test deterministic; this is the probability over the choice of seeds): sqrt(ln(2/1e-6)
    # / (2n)) = 0.0427 (Dvoretzky-Kiefer-Wolfowitz-Massart).
    crit = math.sqrt(math.log(2 / 1e-6) / (2 * 4000))
    assert _log_uniform_ks(True) < crit
    # The check has teeth: uniform draws (the wrong prior) are far from log-uniform.
    assert _log_uniform_ks(False) > crit


def test_int_and_step_domains_stay_on_their_grids():
    for seed in range(300):
        t = PrivateTrial(dptune.Guarantee.pure(1.0), seed)
        assert t.suggest_int("a", 3, 11, step=4) in (3, 7, 11)
        assert 1 <= t.suggest_int("b", 1, 1000, log=True) <= 1000
        assert t.suggest_float("c", 0.0, 1.0, step=0.25) in (0.0, 0.25, 0.5, 0.75, 1.0)


def test_the_example_prints_the_whole_tunings_epsilon(capsys):
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    eps = float(out.split("eps = ")[1].split()[0])
    want = dptune.tuning_cost(
        dptune.Guarantee.zcdp(0.02), repeats=dptune.Repeats.poisson(8.0)
    ).epsilon(1e-6)
    assert eps == pytest.approx(want, abs=5e-4)
    assert "best params: {'C':" in out or "no trial released" in out


def test_the_result_releases_only_declared_fields():
    """Issue 13's release schema: every field of the result is declared (a public input or a
    release charged to the guarantee); an extra field, such as the winning trial's number
    (which says how many trials ran), is caught."""
    import dataclasses

    from dptune import _core

    best = dptune.optuna.optimize(
        conditional_objective,
        per_run=dptune.Guarantee.pure(0.1),
        repeats=dptune.Repeats.poisson(3.0),
        seed=0,
    )
    assert best.released
    paths = [
        p
        for f in dataclasses.fields(best)
        for p in (
            [f"{f.name}.{k}" for k in best.best_params]
            if f.name == "best_params"
            else [f.name]
        )
    ]
    assert _core._release_violations("python optuna", paths) == []
    found = _core._release_violations("python optuna", paths + ["best_trial_number"])
    assert len(found) == 1 and "best_trial_number" in found[0], found
