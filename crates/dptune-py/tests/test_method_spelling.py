"""The older method spelling (a name with loose ``repeats``/``gamma``/``threshold`` keywords)
still works, gives what the :class:`dptune.Method` spelling gives, and says it is deprecated;
the new spelling warns about nothing (issue 16, point 6)."""

import warnings

import pytest

import dptune
import dptune.optuna
from dptune import Guarantee, Method, Repeats


def test_old_spelling_warns_and_agrees_with_method():
    per = Guarantee.zcdp(0.01)
    new = dptune.tuning_cost(per, method=Method.papernot_steinke(Repeats.with_mean(5)))
    with pytest.warns(DeprecationWarning, match=r"Method\.papernot_steinke"):
        old = dptune.tuning_cost(per, method="repeat", repeats=Repeats.with_mean(5))
    assert old == new
    with pytest.warns(DeprecationWarning, match=r"Method\.liu_talwar"):
        dptune.tuning_cost(per, method="threshold", threshold=0.5, gamma=0.1)
    with pytest.warns(DeprecationWarning, match=r"Method\.exhaustive"):
        dptune.tuning_cost(per, method="exhaustive", runs=4)


def test_a_misspelt_loose_keyword_is_refused_not_ignored():
    """The loose keywords are read from one ``**loose`` set (declared once in the core): any
    other keyword is the usual TypeError."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'repeat'"):
        dptune.tuning_cost(Guarantee.pure(1.0), repeat=Repeats.poisson(3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'gama'"):
        dptune.calibrate(Guarantee.pure(1.0), method="threshold", gama=0.1, threshold=0.5)


def test_method_spelling_warns_about_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptune.tuning_cost(Guarantee.zcdp(0.01), method=Method.liu_talwar(0.5, 0.1))
        dptune.tune(lambda c, a, s: (None, float(c["x"])), {"x": [1, 2]},
                    per_run=Guarantee.zcdp(0.01),
                    method=Method.papernot_steinke(Repeats.with_mean(3)), seed=1)


def test_optuna_takes_a_method_and_negates_its_threshold_when_minimising():
    """A trial whose value reaches a minimising threshold (value <= threshold) is released
    at once: with every value 1.0 and threshold 2.0 the first trial wins; with threshold 0.5
    none ever does (⊥)."""

    def objective(trial):
        trial.suggest_float("x", 0.0, 1.0)
        return 1.0

    def run(threshold):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return dptune.optuna.optimize(
                objective, per_run=Guarantee.zcdp(0.01), direction="minimize",
                method=Method.liu_talwar(threshold, 0.5), seed=3)

    assert run(2.0).best_value == 1.0
    assert not run(0.5).released
    with pytest.raises(dptune.InvalidParameter, match="exhaustive"):
        dptune.optuna.optimize(objective, per_run=Guarantee.zcdp(0.01),
                               method=Method.exhaustive(4))
