"""A built-in local evaluation for demos and tests: synthetic scores, no data.

Candidate j has true quality j / candidates (the last is best); each client sees it through its
own deterministic noise (seeded by its partition id), as if it had validated every candidate on a
local split. Replace it with your own function through the run config key ``evaluate-fn``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def evaluate(candidates: int, context: Any) -> np.ndarray:
    """Scores of all ``candidates`` for this client (higher is better)."""
    part = int(context.node_config.get("partition-id", 0))
    rng = np.random.default_rng(1000 + part)
    quality = np.arange(candidates, dtype=np.float64) / candidates
    return quality + rng.normal(0.0, 0.3, size=candidates)
