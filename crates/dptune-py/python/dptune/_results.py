"""The results of the core's direct bindings :func:`dptune.select` and :func:`dptune.top_k`,
and the note every seeded result carries.

A selection returns a tuple, ``(index, guarantee)`` or ``(indices, guarantee)``, so ``i, g =
dptune.select(...)`` keeps working; the tuple is a :class:`Selection` or :class:`TopKSelection`
that also says whether it came from a seed (``seeded``, a class attribute: the core builds
the seeded subclass, so a result costs no more than a plain tuple). A seeded result is a
reproducible research run and NOT PRIVATE, and its ``repr`` says so with :data:`SEEDED_NOTE`,
the same note as the summaries of :class:`dptune.TuneResult` and
:class:`dptune.LearnerTuneResult`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._core import Guarantee

#: What a seeded result says (``repr``/summary): the short form of the command line's note
#: (``dptune::noise::SEEDED_NOTE``).
SEEDED_NOTE = "NOT PRIVATE: seeded run (the noise is predictable from the seed)"


def seeded_suffix(seeded: bool) -> str:
    """``"; "`` + :data:`SEEDED_NOTE` for a seeded result, else nothing: the tail of a one-line
    summary."""
    return f"; {SEEDED_NOTE}" if seeded else ""


class Selection(tuple[int, Guarantee]):
    """What :func:`dptune.select` releases: the tuple ``(index, guarantee)`` (the selected
    candidate, a charged release, and what the selection spent), with :attr:`seeded`."""

    __slots__ = ()

    seeded: bool = False
    """Whether the noise came from ``seed=``: a reproducible research run, NOT PRIVATE (the
    noise is predictable from the seed, even a secret one). False: the operating system's."""

    @property
    def selected(self) -> int:
        """The selected candidate (charged release); ``self[0]`` (not ``index``, which is the
        tuple's method)."""
        return self[0]

    @property
    def guarantee(self) -> Guarantee:
        """What the selection spent."""
        return self[1]

    def __repr__(self) -> str:
        return f"Selection(selected={self[0]!r}, guarantee={self[1]!r}{seeded_suffix(self.seeded)})"


class TopKSelection(tuple[npt.NDArray[np.int64], Guarantee]):
    """What :func:`dptune.top_k` releases: the tuple ``(indices, guarantee)`` (the selected
    candidates best first, a charged release, and what the k rounds spent), with
    :attr:`seeded`."""

    __slots__ = ()

    seeded: bool = False
    """Whether the noise came from ``seed=``: a reproducible research run, NOT PRIVATE (the
    noise is predictable from the seed, even a secret one). False: the operating system's."""

    @property
    def selected(self) -> npt.NDArray[np.int64]:
        """The selected candidates, best first (charged release); ``self[0]``."""
        return self[0]

    @property
    def guarantee(self) -> Guarantee:
        """What the k rounds spent together."""
        return self[1]

    def __repr__(self) -> str:
        return (
            f"TopKSelection(selected={self[0].tolist()!r}, guarantee={self[1]!r}"
            f"{seeded_suffix(self.seeded)})"
        )


class _SeededSelection(Selection):
    """A :class:`Selection` drawn from a seed (the core returns it when ``seed`` is given)."""

    __slots__ = ()
    seeded = True


class _SeededTopKSelection(TopKSelection):
    """A :class:`TopKSelection` drawn from a seed (the core returns it when ``seed`` is
    given)."""

    __slots__ = ()
    seeded = True
