from ._core import (
    BudgetExceeded as BudgetExceeded,
    DataError as DataError,
    DptuneError as DptuneError,
    Guarantee as Guarantee,
    InvalidParameter as InvalidParameter,
    NoisePlan as NoisePlan,
    NoRelease as NoRelease,
    Method as Method,
    Repeats as Repeats,
    SecAggClient as SecAggClient,
    SecAggServer as SecAggServer,
    SeededRun as SeededRun,
    budget_create as budget_create,
    budget_status as budget_status,
    calibrate as calibrate,
    decode_signed_u32 as decode_signed_u32,
    dpsgd_epsilon as dpsgd_epsilon,
    dpsgd_guarantee as dpsgd_guarantee,
    dpsgd_noise_multiplier as dpsgd_noise_multiplier,
    encode_signed_u32 as encode_signed_u32,
    gaussian_epsilon as gaussian_epsilon,
    gaussian_release as gaussian_release,
    gaussian_rho as gaussian_rho,
    gaussian_sigma as gaussian_sigma,
    largest_pure_within as largest_pure_within,
    noisy_count as noisy_count,
    noisy_vote as noisy_vote,
    pure_to_zcdp as pure_to_zcdp,
    select_argmax as select_argmax,
    select_index as _select_index,
    selection_cost as selection_cost,
    split_by_coin as split_by_coin,
    top_k as top_k,
    top_k_vote as top_k_vote,
    tuning_cost as tuning_cost,
    zcdp_delta as zcdp_delta,
    zcdp_epsilon as zcdp_epsilon,
    zcdp_rho_for as zcdp_rho_for,
)
from . import accounting as accounting
from ._nonprivate import (
    NotPrivate as NotPrivate,
    nonprivate_selection_probabilities as nonprivate_selection_probabilities,
)
from ._builtin import LearnerTuneResult as LearnerTuneResult
from ._results import Selection as Selection, TopKSelection as TopKSelection
from ._tune import (
    DpSgd as DpSgd,
    TruncationWarning as TruncationWarning,
    TuneResult as TuneResult,
    tune as tune,
)
from .types import Mechanism

#: One private selection (the core's ``select_index``). A definition, not an ``import ... as
#: select``: mypy re-exports only ``import x as x``, and reported ``dptune.select`` as "does not
#: explicitly export attribute".
select = _select_index

__version__: str
MECHANISMS: tuple[Mechanism, ...]
