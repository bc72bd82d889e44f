"""Privacy accounting by privacy loss distributions: the accountant of ``dptune account
compose`` and ``dptune account dpsgd``, in Python (numpy arrays for profiles).

:func:`compose` takes a list of mechanisms in exactly the form the command-line tool reads
(the ``inputs`` of the golden cases)::

    {"parts": [{"mechanism": "gaussian", "sigma": 1.0, "q": 0.01, "times": 1000},
               {"mechanism": "laplace", "b": 10.0, "times": 5}],
     "delta": 1e-5, "neighbours": "add_remove"}

``mechanism`` is one of gaussian, laplace, discrete_gaussian, discrete_laplace,
randomized_response, pure, approx, with its parameters ``sigma`` / ``b`` / ``t`` / ``eps`` /
``delta`` (and ``k`` for randomized response), an optional ``sensitivity``, an optional
Poisson rate ``q`` (gaussian and laplace, add/remove-one only) and ``times``. The text is
parsed by the Rust core's one parser and composed by the same library call as the CLI, so
every number equals the CLI's. Unknown keys, a missing parameter or a parameter that does not
apply raise :class:`dptune.InvalidParameter`.

The result, a :class:`Composition`, reports ε at any δ as the minimum over the valid routes
(the PLD, and each part's closed-form bound composed: RDP, zCDP, pure or (ε, δ)) and names the
route that won; δ at ε; the whole profile δ(ε) by the PLD; and its :class:`dptune.Guarantee`.
Every number is an upper bound: the grid rounds losses up and charges its truncation.

:func:`dpsgd` is the shortcut for DP-SGD (Poisson-subsampled Gaussian, add/remove-one): the
dict ``dptune account dpsgd --json`` prints, with ``epsilon`` (by PLD) and ``epsilon_pld``,
``epsilon_rdp`` beside it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Mapping, Union

import numpy as np

from ._core import Composition, InvalidParameter, _compose_json, dpsgd_account

__all__ = ["Composition", "Spec", "compose", "dpsgd"]

#: A composition: a mapping in the CLI's form, its JSON text, or the path of a JSON file.
Spec = Union[Mapping[str, Any], str, bytes, "os.PathLike[str]"]


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (so ``np.float64(1.0)`` and ``np.int64(3)`` serialise)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _text(spec: Spec) -> str:
    if isinstance(spec, Mapping):
        try:
            return json.dumps(spec, default=_plain)
        except (TypeError, ValueError) as e:
            raise InvalidParameter(f"invalid parameter `spec` = a mapping: {e}") from None
    if isinstance(spec, bytes):
        return spec.decode("utf-8", errors="replace")
    if isinstance(spec, str):
        return spec
    if isinstance(spec, os.PathLike):
        try:
            with open(spec, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            raise InvalidParameter(f"invalid parameter `spec` = {os.fspath(spec)!r}: cannot read it: {e}") from None
    raise InvalidParameter(
        f"invalid parameter `spec` = a {type(spec).__name__}: give a mapping, JSON text, or a "
        "pathlib.Path of a JSON file"
    )


def compose(spec: Spec, *, interval: float = 1e-4) -> Composition:
    """Composes the mechanisms of ``spec`` (a mapping in the form above, its JSON text, or a
    :class:`pathlib.Path` of a JSON file; a plain ``str`` is JSON text, never a path) on a
    loss grid of width ``interval`` (the CLI's ``--interval``).

    Same numbers as ``dptune account compose FILE --interval interval``:
    ``compose(spec).report()`` is the object it prints with ``--json``."""
    return _compose_json(_text(spec), interval)


def dpsgd(
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
    *,
    interval: float = 1e-4,
) -> Dict[str, Any]:
    """ε of ``steps`` DP-SGD steps with Poisson rate ``sampling_rate`` and noise multiplier
    ``noise_multiplier`` (σ / clipping norm), add/remove-one neighbours, at ``delta``: the dict
    ``dptune account dpsgd --json`` prints. ``epsilon`` is the PLD's (``route`` "pld"),
    ``epsilon_rdp`` the RDP bound on continuous orders (``order``), ``epsilon_default_grid``
    the RDP bound on dp_accounting's default orders."""
    return dpsgd_account(sampling_rate, noise_multiplier, steps, delta, interval=interval)
