"""A built-in local evaluation for demos and tests: synthetic scores, no data.

Candidate j has true quality j / candidates (the last is best); each client sees it through its
own deterministic noise (seeded by its partition id), as if it had validated every candidate on a
local split. Replace it with your own function through the run config key ``evaluate-fn``, and name what the
candidates are with ``configurations-fn`` (:func:`configurations`: a learning-rate grid).
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np


def configurations(candidates: int) -> List[Dict[str, float]]:
    """The public configurations the demo's candidates stand for: learning rates on a
    log-spaced grid from 1e-4 to 1e-1 (candidate j is the j-th)."""
    steps = max(candidates - 1, 1)
    rates = (1e-4 * 10 ** (3 * j / steps) for j in range(candidates))
    return [{"learning_rate": float(f"{r:.3g}")} for r in rates]


def evaluate(candidates: int, context: Any) -> np.ndarray:
    """Scores of all ``candidates`` for this client (higher is better)."""
    part = int(context.node_config.get("partition-id", 0))
    rng = np.random.default_rng(1000 + part)
    quality = np.arange(candidates, dtype=np.float64) / candidates
    return quality + rng.normal(0.0, 0.3, size=candidates)
