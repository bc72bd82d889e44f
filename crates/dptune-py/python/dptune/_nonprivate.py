"""NOT PRIVATE diagnostics: exact quantities computed from the raw (private) inputs, with no
noise and no guarantee. They are for analysing a mechanism on data you may look at (synthetic or
public scores, tests, papers), never for publishing: a diagnostic of private scores reveals them.

Each returns a :class:`NotPrivate` value, never a ``(value, guarantee)`` pair, so that it cannot
be mistaken for a release; its name says so too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    # `typing.Unpack` is Python 3.11+; type checkers know `typing_extensions` on every version.
    from typing_extensions import Unpack

    from .types import SelectionOptions

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
    scores: Any, epsilon: float, **options: Unpack[SelectionOptions]
) -> NotPrivate:
    """NOT PRIVATE: the exact probabilities with which ``dptune.select`` (same arguments) picks
    each candidate, computed from the raw ``scores`` without noise. The options are those of
    ``dptune.select`` (:class:`dptune.types.SelectionOptions`), with its defaults. The result is
    a :class:`NotPrivate` whose ``value`` is a float64 array; nothing is spent and no guarantee
    applies, since the probabilities are a deterministic function of the scores."""
    p, mechanism = _core._selection_probabilities(scores, epsilon, **options)
    return NotPrivate(p, f"exact selection probabilities of {mechanism} on the raw scores")
