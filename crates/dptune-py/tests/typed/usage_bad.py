"""Misuse that `mypy --strict` must reject: each line with an error comment is reported."""

from typing import Any, Dict, Tuple

import numpy as np

import dptune

scores = np.array([0.81, 0.84])
dptune.select(scores, epsilon=1.0, mechanism="exponentail")  # error: misspelt mechanism
dptune.noisy_count(1, 1.0, neighbours="add-or-remove")  # error: unknown neighbour relation
dptune.tuning_cost(dptune.Guarantee.pure(0.5), method="repeats")  # error: unknown tuner
dptune.top_k(scores, 1.0, 1, goal="maximise")  # error: unknown direction


class Net:
    pass


def candidate(config: Dict[str, Any], allowance: dptune.Guarantee, seed: int) -> Tuple[Net, float]:
    return Net(), 0.0


best = dptune.tune(candidate, {"x": [1]}, per_run=dptune.Guarantee.zcdp(0.05))
wrong: str = best.model  # error: the model is a Net (or None), not Any
