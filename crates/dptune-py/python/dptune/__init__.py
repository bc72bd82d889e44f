"""dptune: differentially private hyperparameter tuning with exact accounting.

The Rust core (``dptune._core``) does every privacy-relevant computation: exact selection
mechanisms, accounting, the data-independent part of a tuning (the number of runs K, the
configurations and seeds, the cost), DP-HYPE votes, Skellam noise and secure aggregation.
This package adds numpy-friendly signatures, the Python-callable tuner and the Flower apps
(``dptune.flower``). Numpy in, numpy out; the library prints nothing.

Errors raised by the core arrive as :class:`DptuneError` subclasses carrying the core's message:
:class:`InvalidParameter` (bad input, naming the parameter), :class:`BudgetExceeded` and
:class:`NoRelease` (refusals that protect privacy).

Seeds: every randomised function takes ``seed=None`` (noise from the operating system, the
default for anything meant to be private) or an integer seed for reproducible research runs,
which is **not private against anyone who knows or can guess the seed**.
"""

from __future__ import annotations

from . import _core
from ._core import (
    BudgetExceeded,
    DptuneError,
    Guarantee,
    InvalidParameter,
    NoisePlan,
    NoRelease,
    Repeats,
    SecAggClient,
    SecAggServer,
    calibrate,
    decode_signed_u32,
    dpsgd_epsilon,
    dpsgd_guarantee,
    encode_signed_u32,
    gaussian_epsilon,
    gaussian_release,
    gaussian_rho,
    gaussian_sigma,
    noisy_count,
    noisy_vote,
    pure_to_zcdp,
    select_argmax,
    selection_cost,
    selection_probabilities,
    split_by_coin,
    top_k,
    top_k_vote,
    tuning_cost,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho_for,
)
from ._tune import TuneResult, tune

for _cls in (DptuneError, InvalidParameter, BudgetExceeded, NoRelease):
    _cls.__module__ = "dptune"
del _cls

#: One private selection: ``select(scores, epsilon, *, mechanism="exponential", ...)`` returns
#: ``(index, guarantee)``. A direct binding of the Rust core (no Python wrapper in the way).
select = _core.select_index

__version__ = "0.1.0"

MECHANISMS = (
    "exponential",
    "gumbel",
    "laplace",
    "permute-and-flip",
    "gaussian",
    "gem",
)

__all__ = [
    "BudgetExceeded",
    "DptuneError",
    "Guarantee",
    "InvalidParameter",
    "MECHANISMS",
    "NoRelease",
    "NoisePlan",
    "Repeats",
    "SecAggClient",
    "SecAggServer",
    "TuneResult",
    "calibrate",
    "decode_signed_u32",
    "dpsgd_epsilon",
    "dpsgd_guarantee",
    "encode_signed_u32",
    "gaussian_epsilon",
    "gaussian_release",
    "gaussian_rho",
    "gaussian_sigma",
    "noisy_count",
    "noisy_vote",
    "pure_to_zcdp",
    "select",
    "select_argmax",
    "selection_cost",
    "selection_probabilities",
    "split_by_coin",
    "top_k",
    "top_k_vote",
    "tune",
    "tuning_cost",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho_for",
]
