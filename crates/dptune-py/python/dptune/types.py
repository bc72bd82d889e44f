"""The names dptune accepts, as ``Literal`` types for type checkers (mypy, pyright): a misspelt
mechanism, neighbour relation, tuner or direction is an error before the program runs. Import
them to annotate your own code, e.g. ``def pick(m: dptune.types.Mechanism) -> None``. At run
time the core checks the same names and raises :class:`dptune.InvalidParameter` for any other.
The keyword sets that several functions share (``**options``) are ``TypedDict`` types here,
declared once: :class:`SelectionOptions` and :class:`LooseMethod`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional, Sequence, TypedDict, Union

import numpy.typing as npt

if TYPE_CHECKING:
    from ._core import Repeats

__all__ = [
    "AllowanceKind",
    "ArrayLike",
    "CostMechanism",
    "Direction",
    "LooseMethod",
    "Mechanism",
    "Neighbours",
    "SelectionOptions",
    "TopKMethod",
    "TuningMethod",
]

#: Neighbour relations: ``add_remove`` / ``replace_one`` is the one spelling of every output;
#: the other spellings are still accepted as input (earlier releases wrote them).
Neighbours = Literal[
    "add_remove", "replace_one", "add-remove", "add/remove-one", "replace", "replace-one"
]
#: One private selection's mechanism (:func:`select_index`).
Mechanism = Literal["exponential", "gumbel", "laplace", "permute-and-flip", "gaussian", "gem"]
#: What :func:`selection_cost` prices: a mechanism, or a peeling top-k.
CostMechanism = Literal[
    "exponential", "gumbel", "laplace", "permute-and-flip", "gaussian", "gem", "top-k",
    "top-k-gumbel",
]
#: :func:`top_k`'s method.
TopKMethod = Literal["permute-and-flip", "gumbel"]
#: Whether higher or lower scores win.
Direction = Literal["maximize", "minimize", "max", "min"]
#: The tuner: repeat-and-select, Liu–Talwar's threshold, or every grid point.
TuningMethod = Literal["repeat", "threshold", "exhaustive"]
#: The kind of per-run allowance :func:`calibrate` returns.
AllowanceKind = Literal["zcdp", "pure", "dpsgd"]

#: A 1-D real array (any dtype that converts to float64, any strides) or a sequence of numbers.
ArrayLike = Union[npt.NDArray[Any], Sequence[float]]


class SelectionOptions(TypedDict, total=False):
    """The keyword options of one selection, shared by :func:`dptune.select` and
    :func:`dptune.nonprivate_selection_probabilities` (``**options``); each may be left out, and
    its default is the one in its comment. ``opts: SelectionOptions = {...}`` then
    ``dptune.select(scores, epsilon, **opts)`` is checked like the keywords written out."""

    #: The mechanism (default ``"exponential"``).
    mechanism: Mechanism
    #: Δ, how far one neighbour moves each score (default ``1.0``).
    sensitivity: float
    #: Whether all scores move the same way between neighbours (range Δ, else 2Δ; default
    #: ``False``).
    monotonic: bool
    #: Whether higher or lower scores win (default ``"maximize"``).
    goal: Direction
    #: The neighbour relation of the guarantee (default ``"add_remove"``).
    neighbours: Neighbours
    #: δ, for ``"gaussian"`` only (default ``None``).
    delta: Optional[float]
    #: Per-candidate sensitivities, for ``"gem"`` (default ``None``).
    sensitivities: Optional[ArrayLike]
    #: GEM's failure probability (default ``0.1``).
    beta: float


class LooseMethod(TypedDict, total=False):
    """The loose keywords of the older spelling of a tuning's method (deprecated: give a
    :class:`dptune.Method` as ``method=`` instead), beside ``method="repeat"`` (the default),
    ``"threshold"`` or ``"exhaustive"``, in :func:`dptune.tuning_cost` and
    :func:`dptune.calibrate`."""

    #: The distribution of the number of runs, for ``"repeat"``.
    repeats: Optional[Repeats]
    #: The stop probability, for ``"threshold"``.
    gamma: Optional[float]
    #: The score a run must reach to be released, for ``"threshold"``.
    threshold: Optional[float]
