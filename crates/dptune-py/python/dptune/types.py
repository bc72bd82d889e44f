"""The names dptune accepts, as ``Literal`` types for type checkers (mypy, pyright): a misspelt
mechanism, neighbour relation, tuner or direction is an error before the program runs. Import
them to annotate your own code, e.g. ``def pick(m: dptune.types.Mechanism) -> None``. At run
time the core checks the same names and raises :class:`dptune.InvalidParameter` for any other.
"""

from typing import Literal

__all__ = [
    "AllowanceKind",
    "CostMechanism",
    "Direction",
    "Mechanism",
    "Neighbours",
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
