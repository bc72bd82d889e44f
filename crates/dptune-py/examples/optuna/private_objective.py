"""An existing Optuna objective, tuned privately with dptune.

The objective below is a plain Optuna objective over the bundled Adult data. The lines marked
``# private`` are the whole change from its non-private form (which trained scikit-learn's
``LogisticRegression`` and returned ``model.score(X_val, y_val)``): train with the trial's
allowance, and return a private score. The study's ``optimize`` call becomes
``dptune.optuna.optimize``. The printed epsilon is the cost of the whole tuning: every trial,
its training, its score and the selection; the number of trials is random and not printed.

    python crates/dptune-py/examples/optuna/private_objective.py
"""

import math
from pathlib import Path
from typing import Tuple

import numpy as np
import numpy.typing as npt

import dptune
import dptune.optuna
from dptune.optuna import PrivateTrial
from dptune.sklearn import PrivateLogisticRegression

Split = Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]

ROOT = Path(__file__).resolve().parents[4]
COLUMNS = ["age", "educational_num", "capital_gain", "capital_loss", "hours_per_week"]
#: Public upper bounds of the features (from the data's documentation, not from the records):
#: the model clips each feature to [0, bound] and maps it onto the unit ball.
UPPER = [100.0, 16.0, 1e5, 5e3, 100.0]


def load_adult() -> Tuple[Split, Split]:
    """The bundled Adult data as (private training rows, public test rows); the first 16,281
    rows are the UCI test split. Five raw numeric features (their public ranges are
    ``UPPER``, from 0), label income > 50K."""
    import csv
    import gzip

    with gzip.open(ROOT / "crates/dptune/data/adult.csv.gz", "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    X = np.array([[float(r[c]) for c in COLUMNS] for r in rows])
    y = np.array([int(r["income"] == ">50K") for r in rows])
    return (X[16281:], y[16281:]), (X[:16281], y[:16281])


(X, y), (X_test, y_test) = load_adult()
train, val = dptune.split_by_coin(len(y), 0.5)  # a coin per record: disjoint sides
X_train, y_train, X_val, y_val = X[train], y[train], X[val], y[val]


def objective(trial: PrivateTrial) -> int:
    C = trial.suggest_float("C", 1e-2, 1e2, log=True)
    norm_bound = trial.suggest_categorical("norm_bound", [0.5, 1.0])
    rho = trial.allowance.rho  # private
    assert rho is not None  # private (a zCDP allowance: per_run below)
    model = PrivateLogisticRegression(classes=[0, 1], C=C, norm_bound=norm_bound, rho=rho,
                                      feature_bounds=(0.0, UPPER))
    model.fit(X_train, y_train)
    trial.set_model(model)
    correct = int((model.predict(X_val) == y_val).sum())
    return dptune.noisy_count(correct, math.sqrt(2 * rho))[0]  # private


if __name__ == "__main__":
    best = dptune.optuna.optimize(
        objective,
        per_run=dptune.Guarantee.zcdp(0.02),
        method=dptune.Method.papernot_steinke(dptune.Repeats.poisson(8.0)),
        direction="maximize",
    )
    delta = 1e-6
    if best.released:
        print(f"best params: {best.best_params}")
        # The test split is public (never seen by the tuning): its accuracy is not a release.
        print(f"test accuracy: {(best.model.predict(X_test) == y_test).mean():.3f}")
    else:  # a Poisson number of trials is 0 with probability e^-8 = 0.03 %
        print("no trial released (the random number of trials was 0)")
    print(f"whole tuning: eps = {best.guarantee.epsilon(delta):.3f} at delta = {delta:g}")
