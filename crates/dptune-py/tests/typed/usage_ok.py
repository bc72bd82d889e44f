"""Typed use of dptune that `mypy --strict` must accept (test_what_was_seen.py runs it)."""

from typing import Any, Dict, List, Tuple

import numpy as np
import numpy.typing as npt

import dptune
from dptune.sklearn import Candidate, PrivateLogisticRegression
from dptune.types import Mechanism, Neighbours, SelectionOptions

scores = np.array([0.81, 0.84, 0.79, 0.86])
mechanisms: List[Mechanism] = ["exponential", "permute-and-flip"]
for mech in mechanisms:
    idx, spent = dptune.select(scores, epsilon=1.0, mechanism=mech, sensitivity=0.01)
    eps: float = spent.epsilon(1e-6)
    i: int = idx
options: SelectionOptions = {"mechanism": "gem", "sensitivities": [0.01] * 4, "beta": 0.2}
picked, _ = dptune.select(scores, 1.0, seed=1, **options)
chosen = dptune.select(scores, 1.0, seed=2)
chosen_seeded: bool = chosen.seeded
chosen_index: int = chosen.selected
top = dptune.top_k(scores, 1.0, 2)
top_seeded: bool = top.seeded
order: npt.NDArray[np.int64] = top.selected
first, top_spent = top
probabilities = dptune.nonprivate_selection_probabilities(scores, 1.0, **options).value
relation: Neighbours = "replace"
count, _ = dptune.noisy_count(10, 1.0, neighbours=relation)
cost = dptune.tuning_cost(dptune.Guarantee.pure(0.5), method="repeat",
                          repeats=dptune.Repeats.geometric(0.1))


class Centroids:
    def __init__(self, means: npt.NDArray[np.float64]) -> None:
        self.means = means


def candidate(
    config: Dict[str, Any], allowance: dptune.Guarantee, seed: int
) -> Tuple[Centroids, int]:
    return Centroids(np.zeros(2)), 0


best = dptune.tune(candidate, {"clip": [1.0]}, per_run=dptune.Guarantee.zcdp(0.05),
                   repeats=dptune.Repeats.geometric(0.5))
if best.model is not None:
    means: npt.NDArray[np.float64] = best.model.means  # the model keeps its type
best_seeded: bool = best.seeded

X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
run = Candidate(PrivateLogisticRegression(classes=[0, 1], feature_bounds=(-1.0, 1.0)), X, y)
fitted = dptune.tune(run, {"C": [1.0]}, per_run=dptune.Guarantee.zcdp(0.05),
                     repeats=dptune.Repeats.geometric(0.5))
if fitted.model is not None:
    coef: npt.NDArray[np.float64] = fitted.model.predict(X)
