"""NOT PRIVATE diagnostics: exact quantities computed from the raw (private) inputs, with no
noise and no guarantee. They are for analysing a mechanism on data you may look at (synthetic or
public scores, tests, papers), never for publishing: a diagnostic of private scores reveals them.

Each returns a :class:`NotPrivate` value, never a ``(value, guarantee)`` pair, so that it cannot
be mistaken for a release; its name says so too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import _core

LABEL = "NOT PRIVATE"


@dataclass(frozen=True)
class NotPrivate:
    """A NOT PRIVATE diagnostic: ``value`` is an exact function of the raw inputs (no noise, no
    guarantee); ``what`` says what it is. Never publish it for private inputs."""

    value: Any
    what: str

    @property
    def label(self) -> str:
        """Always ``"NOT PRIVATE"``."""
        return LABEL

    def __repr__(self) -> str:
        return f"NotPrivate({self.what}: {self.value!r}) [{LABEL}: no guarantee]"


def nonprivate_selection_probabilities(
    scores: Any,
    epsilon: float,
    *,
    mechanism: str = "exponential",
    sensitivity: float = 1.0,
    monotonic: bool = False,
    goal: str = "maximize",
    neighbours: str = "add_remove",
    delta: Optional[float] = None,
    sensitivities: Any = None,
    beta: float = 0.1,
) -> NotPrivate:
    """NOT PRIVATE: the exact probabilities with which ``dptune.select`` (same arguments) picks
    each candidate, computed from the raw ``scores`` without noise. The result is a
    :class:`NotPrivate` whose ``value`` is a float64 array; nothing is spent and no guarantee
    applies, since the probabilities are a deterministic function of the scores."""
    p = _core._selection_probabilities(
        scores,
        epsilon,
        mechanism=mechanism,
        sensitivity=sensitivity,
        monotonic=monotonic,
        goal=goal,
        neighbours=neighbours,
        delta=delta,
        sensitivities=sensitivities,
        beta=beta,
    )
    return NotPrivate(p, f"exact selection probabilities of {mechanism} on the raw scores")
