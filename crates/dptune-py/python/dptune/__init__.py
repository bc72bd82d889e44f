"""dptune: differentially private hyperparameter tuning with exact accounting.

The Rust core (``dptune._core``) does every privacy-relevant computation: exact selection
mechanisms, accounting, the data-independent part of a tuning (the number of runs K, the
configurations and seeds, the cost), DP-HYPE votes, Skellam noise and secure aggregation.
This package adds numpy-friendly signatures, the Python-callable tuner and the Flower apps
(``dptune.flower``). Numpy in, numpy out; the library prints nothing.

Tuning: :func:`tune` takes the whole tuning's allowance (``target=Guarantee.approx(eps,
delta)``) and calibrates what each run may spend (zCDP, pure, or a DP-SGD noise multiplier via
:class:`DpSgd`) with the core's calibration, or takes the per-run allowance itself
(``per_run=``); ``print(result)`` shows the whole tuning's ε and the released configuration.

Errors raised by the core arrive as :class:`DptuneError` subclasses carrying the core's message:
:class:`InvalidParameter` (bad input, naming the parameter), :class:`DataError` (malformed
private data, found by validation before any mechanism runs), :class:`BudgetExceeded` and
:class:`NoRelease` (refusals that protect privacy).

Seeds: every randomised function takes ``seed=None`` (noise from the operating system, the
only setting that is private) or a seed for reproducible research runs. **A seeded run is not
private, even if the seed is kept secret**: the same seed on two neighbouring datasets draws the
same noise, so the difference of the two outputs is exact (``noisy_count(100, 1.0, seed=7)`` and
``noisy_count(101, 1.0, seed=7)`` differ by exactly 1). An integer seed keys one release; passing
the same integer to two releases reuses their noise, which then cancels in any difference of
the two. A :class:`SeededRun` gives each release of a research run its own stream (release i
draws from stream i of the seed), so releases within one run never share noise.

Persistent budgets: :func:`budget_create` and :func:`budget_status` use the same SQLite store
as the command-line tool (``store=``, else ``DPTUNE_STORE``, else the user's default), and
``budget=`` on :func:`tune`, :func:`select`, :func:`top_k`, :func:`noisy_count` and
:func:`gaussian_release` charges the whole cost, committed before anything is released
(:class:`BudgetExceeded` if it does not fit: nothing released, store unchanged).

Non-private diagnostics (:func:`nonprivate_selection_probabilities`) return a
:class:`NotPrivate` value, never a ``(value, guarantee)`` pair.
"""

from __future__ import annotations

from . import _core
from ._core import (
    BudgetExceeded,
    DataError,
    DptuneError,
    Guarantee,
    InvalidParameter,
    Method,
    NoisePlan,
    NoRelease,
    Repeats,
    SecAggClient,
    SeededRun,
    SecAggServer,
    budget_create,
    budget_status,
    calibrate,
    decode_signed_u32,
    dpsgd_epsilon,
    dpsgd_guarantee,
    dpsgd_noise_multiplier,
    encode_signed_u32,
    gaussian_epsilon,
    gaussian_release,
    gaussian_rho,
    gaussian_sigma,
    largest_pure_within,
    noisy_count,
    noisy_vote,
    pure_to_zcdp,
    select_argmax,
    selection_cost,
    split_by_coin,
    top_k,
    top_k_vote,
    tuning_cost,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho_for,
)
from . import accounting
from ._nonprivate import NotPrivate, nonprivate_selection_probabilities
from ._builtin import LearnerTuneResult
from ._results import Selection, TopKSelection
from ._tune import DpSgd, TruncationWarning, TuneResult, tune



def _from_opacus(accountant: object) -> Guarantee:
    """The guarantee of an Opacus accountant's history (see :func:`dptune.opacus.from_opacus`;
    needs ``dptune[torch]``)."""
    from .opacus import from_opacus

    return from_opacus(accountant)


Guarantee.from_opacus = staticmethod(_from_opacus)  # type: ignore[attr-defined]

for _cls in (DptuneError, InvalidParameter, DataError, BudgetExceeded, NoRelease):
    _cls.__module__ = "dptune"
del _cls

#: One private selection: ``select(scores, epsilon, *, mechanism="exponential", ...)`` returns
#: ``(index, guarantee)``, a :class:`Selection` (whose ``seeded`` says whether ``seed=`` keyed
#: it). A direct binding of the Rust core (no Python wrapper in the way).
select = _core.select_index

__version__ = "0.1.0"

#: The mechanisms :func:`select` accepts (the library's list, ``Mechanism::single_index_names``).
MECHANISMS = tuple(_core.MECHANISMS)

__all__ = [
    "BudgetExceeded",
    "DataError",
    "DpSgd",
    "DptuneError",
    "Guarantee",
    "InvalidParameter",
    "LearnerTuneResult",
    "MECHANISMS",
    "NoRelease",
    "NoisePlan",
    "NotPrivate",
    "Method",
    "Repeats",
    "SecAggClient",
    "SecAggServer",
    "SeededRun",
    "Selection",
    "TopKSelection",
    "TruncationWarning",
    "TuneResult",
    "accounting",
    "budget_create",
    "budget_status",
    "calibrate",
    "decode_signed_u32",
    "dpsgd_epsilon",
    "dpsgd_guarantee",
    "dpsgd_noise_multiplier",
    "encode_signed_u32",
    "gaussian_epsilon",
    "gaussian_release",
    "gaussian_rho",
    "gaussian_sigma",
    "largest_pure_within",
    "noisy_count",
    "noisy_vote",
    "nonprivate_selection_probabilities",
    "pure_to_zcdp",
    "select",
    "select_argmax",
    "selection_cost",
    "split_by_coin",
    "top_k",
    "top_k_vote",
    "tune",
    "tuning_cost",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho_for",
]
