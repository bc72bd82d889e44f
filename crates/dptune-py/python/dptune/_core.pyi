"""Type stubs of the compiled core (``dptune._core``). Arrays are numpy in, numpy out; any 1-D
real array (any dtype that converts to float64, any strides) or sequence of numbers is
accepted where ``ArrayLike`` is written."""

import os
from typing import Any, Dict, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import Unpack

from ._results import Selection as Selection, TopKSelection as TopKSelection
from .types import (
    AllowanceKind as AllowanceKind,
    ArrayLike as ArrayLike,
    CostMechanism as CostMechanism,
    Direction as Direction,
    LooseMethod as LooseMethod,
    Mechanism as Mechanism,
    Neighbours as Neighbours,
    SelectionOptions as SelectionOptions,
    TopKMethod as TopKMethod,
    TuningMethod as TuningMethod,
)
StrPath = Union[str, "os.PathLike[str]"]

class DptuneError(Exception):
    """Base class of every dptune error; the message is the Rust core's."""

class InvalidParameter(DptuneError):
    """A caller-supplied value is outside what the mechanism or formula accepts. The message
    names the parameter: ``invalid parameter `name` = value: reason``."""

class BudgetExceeded(DptuneError):
    """A charge would exceed the allowance; nothing was released."""

class DataError(DptuneError):
    """The private data are malformed (non-finite values, undeclared labels, wrong shape).
    Raised by validation before any mechanism runs, so nothing was released; raised inside a
    tuning it aborts the whole tuning (it is never turned into a score)."""

class SeededRun:
    """A seeded research run (NOT PRIVATE, even with a secret seed): pass it as ``seed=`` to
    several releases and each draws its own noise stream (release i: stream i of the seed), so
    no two releases of the run share noise, as two releases given the same integer seed do."""

    def __init__(self, seed: int) -> None: ...
    @property
    def seed(self) -> int: ...
    @property
    def releases(self) -> int:
        """How many releases have drawn from this run so far."""

Seed = Union[None, int, SeededRun]

class NoRelease(DptuneError):
    """Nothing can be released under the given public inputs (e.g. too few survivors, or a
    selection overhead that alone exceeds the allowance)."""

class Guarantee:
    """What a mechanism promises and what a release spent. Immutable, comparable, and pickled
    exactly (every bound, RDP curve and privacy loss distribution, bit for bit), so it crosses
    a process pool. Always carries its neighbour relation. ``str()`` shows the numbers: pure ε,
    (ε, δ), ρ, and for a guarantee stated only as zCDP, an RDP curve or a PLD, its ε at
    δ = 1e-5."""

    @staticmethod
    def pure(epsilon: float, neighbours: Neighbours = "add_remove") -> Guarantee: ...
    @staticmethod
    def approx(epsilon: float, delta: float, neighbours: Neighbours = "add_remove") -> Guarantee: ...
    @staticmethod
    def zcdp(rho: float, neighbours: Neighbours = "add_remove") -> Guarantee: ...
    def epsilon(self, delta: float) -> float:
        """ε at δ from the tightest bound (rounded up)."""
    def delta(self, epsilon: float) -> float:
        """δ at ε."""
    @staticmethod
    def from_opacus(accountant: object) -> Guarantee:
        """The composed DP-SGD guarantee of an Opacus accountant's history."""
    def fits_within(self, allowance: Guarantee) -> bool:
        """True when this guarantee fits within ``allowance`` (checked as a Ledger charge)."""
    def compose(self, other: Guarantee) -> Guarantee:
        """Sequential composition (same neighbour relation required)."""
    def to_replace(self) -> Guarantee:
        """The guarantee under replace-one neighbours."""
    @property
    def pure_epsilon(self) -> Optional[float]: ...
    @property
    def approx_bound(self) -> Optional[Tuple[float, float]]:
        """(ε, δ) if the guarantee states an (ε, δ) bound (the one with the smallest ε)."""
    @property
    def rho(self) -> Optional[float]: ...
    @property
    def neighbours(self) -> Literal["add_remove", "replace_one"]:
        """"add_remove" or "replace_one" (the spelling of every output)."""
    def rdp(self, orders: ArrayLike) -> Optional[npt.NDArray[np.float64]]:
        """The RDP curve at ``orders``, if the guarantee implies one."""

class Repeats:
    """The distribution of the number of runs K of repeat-and-select (never a draw of it).
    ``repr()`` names the kind and its parameters, e.g.
    ``Repeats(geometric, stop_probability=0.1, mean=10)``."""

    @staticmethod
    def poisson(mean: float) -> Repeats: ...
    @staticmethod
    def geometric(
        stop_probability: Optional[float] = None,
        *,
        mean: Optional[float] = None,
        gamma: Optional[float] = None,
    ) -> Repeats:
        """K geometric on {1, 2, ...}: after each run, stop with probability
        ``stop_probability`` (E[K] = 1/stop_probability), or give ``mean`` instead; ``gamma``
        is the older name of the stop probability. Exactly one of them."""
    @staticmethod
    def tnb(eta: float, gamma: float) -> Repeats: ...
    @staticmethod
    def tnb_with_mean(eta: float, mean: float) -> Repeats: ...
    @staticmethod
    def with_mean(mean: float, eta: float = 0.0) -> Repeats:
        """Papernot–Steinke's truncated negative binomial with E[K] = ``mean`` and shape
        ``eta`` (default 0, logarithmic, as the command-line tool; 1 is geometric)."""
    @property
    def mean(self) -> float: ...
    @property
    def kind(self) -> str:
        """"poisson", "geometric", "logarithmic" or "truncated negative binomial"."""
    @property
    def stop_probability(self) -> Optional[float]:
        """The probability of stopping after each run, for geometric K (else None)."""
    @property
    def eta(self) -> Optional[float]: ...
    @property
    def gamma(self) -> Optional[float]: ...

#: The mechanisms ``select_index`` accepts.
MECHANISMS: Sequence[str]

def select_index(
    scores: ArrayLike,
    epsilon: float,
    *,
    seed: Seed = None,
    budget: Optional[str] = None,
    store: Optional[StrPath] = None,
    **options: Unpack[SelectionOptions],
) -> Selection:
    """One private selection: ``(index, guarantee)``, a :class:`dptune.Selection` tuple whose
    ``seeded`` is True when ``seed`` was given: a seeded selection is a reproducible research
    run, NOT PRIVATE (the noise is predictable from the seed), and its repr says so.

    Options (keyword-only; :class:`dptune.types.SelectionOptions` types them):
    ``mechanism="exponential"``, ``sensitivity=1.0``, ``monotonic=False``,
    ``goal="maximize"``, ``neighbours="add_remove"``, ``delta=None``, ``sensitivities=None``,
    ``beta=0.1``.

    ``mechanism``: "exponential" (ε pure and ε²/8 zCDP), "gumbel" (same law), "laplace"
    (report-noisy-max, ε pure), "permute-and-flip" (ε pure), "gaussian" (needs ``delta``,
    which the pure mechanisms refuse; calibrated to the L2 sensitivity Δ·√m of the whole vector), "gem" (generalized EM, with
    per-candidate ``sensitivities`` and failure probability ``beta``). ``sensitivity`` Δ is the
    per-candidate bound; the range paid is Δ if ``monotonic`` else 2Δ. Scores must be finite;
    ``-inf`` (``+inf`` when minimising) marks a candidate that can never win (the exclusion must
    not depend on private data). Sampling is exact (no floating-point noise).
    ``seed=None`` uses the operating system; a seed (an integer or a :class:`SeededRun`) is for
    research runs only and is not private even if kept secret. ``budget``: charge the
    selection's guarantee to this budget of the persistent store (``store``, else
    ``$DPTUNE_STORE``, else the user's default; see :func:`budget_create`) before anything is
    sampled; :class:`BudgetExceeded` if it does not fit (nothing released, store unchanged),
    :class:`InvalidParameter` under another neighbour relation than the budget's."""

def _selection_probabilities(
    scores: ArrayLike, epsilon: float, **options: Unpack[SelectionOptions]
) -> Tuple[npt.NDArray[np.float64], str]:
    """NOT PRIVATE: the exact selection probabilities on the raw scores (no noise, no
    guarantee), and the mechanism's name. Use ``dptune.nonprivate_selection_probabilities``,
    which labels the result."""

def selection_cost(
    epsilon: float,
    *,
    mechanism: CostMechanism = "exponential",
    neighbours: Neighbours = "add_remove",
    delta: Optional[float] = None,
    k: Optional[int] = None,
) -> Guarantee:
    """What one selection spends (public). ``mechanism`` may also be "top-k" (peeling
    permute-and-flip) or "top-k-gumbel" with ``k``; for those ``epsilon`` is the total over the
    k rounds (each runs at epsilon/k rounded down), and the cost is at most ``epsilon``."""

def top_k(
    scores: ArrayLike,
    epsilon: float,
    k: int,
    *,
    method: TopKMethod = "permute-and-flip",
    sensitivity: float = 1.0,
    monotonic: bool = False,
    goal: Direction = "maximize",
    neighbours: Neighbours = "add_remove",
    seed: Seed = None,
    budget: Optional[str] = None,
    store: Optional[StrPath] = None,
) -> TopKSelection:
    """The k best candidates in order, privately: ``(indices, guarantee)``, a
    :class:`dptune.TopKSelection` tuple whose ``seeded`` is True when ``seed`` was given (a
    reproducible research run, NOT PRIVATE: the noise is predictable from the seed; its repr
    says so). ``epsilon`` is the total over the k rounds
    (each runs at ε/k rounded down; the returned guarantee is what was spent, at most ε).
    ``budget``/``store``: charged before anything is sampled, as in :func:`select_index`."""

def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """ε of one Gaussian release (exact Balle–Wang)."""

def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ giving (ε, δ) (exact calibration)."""

def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """ρ = Δ²/(2σ²)."""

def dpsgd_guarantee(sampling_rate: float, noise_multiplier: float, steps: int) -> Guarantee:
    """RDP guarantee of DP-SGD (Poisson-subsampled Gaussian) over ``steps`` steps."""

def dpsgd_noise_multiplier(allowance: Guarantee, sampling_rate: float, steps: int) -> float:
    """The smallest noise multiplier for which ``steps`` DP-SGD steps at the public Poisson rate
    ``sampling_rate`` (continuous Gaussian noise) fit ``allowance``."""
def largest_pure_within(allowance: Guarantee) -> float:
    """The largest ε whose ε-DP release fits ``allowance``."""
def dpsgd_epsilon(sampling_rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """DP-SGD ε at δ: exactly ``dpsgd_guarantee(...).epsilon(delta)`` (one conversion)."""

def noisy_count(
    count: int,
    epsilon: float,
    *,
    neighbours: Neighbours = "add_remove",
    seed: Seed = None,
    budget: Optional[str] = None,
    store: Optional[StrPath] = None,
) -> Tuple[int, Guarantee]:
    """``count`` + exact discrete Laplace noise of scale 1/ε: ε-DP under add/remove-one and
    under replace-one (a count moves by at most 1 either way); the guarantee carries the
    ``neighbours`` named. ``seed``: research runs only (not private even if secret).
    ``budget``/``store``: charged before the noise is drawn, as in :func:`select_index`."""

def gaussian_release(
    values: ArrayLike,
    sensitivity: float,
    rho: float,
    *,
    neighbours: Neighbours = "add_remove",
    seed: Seed = None,
    budget: Optional[str] = None,
    store: Optional[StrPath] = None,
) -> Tuple[npt.NDArray[np.float64], Guarantee]:
    """Exact grid-Gaussian noise calibrated so the release (rounding charged) is at most ρ-zCDP,
    for ``values`` of L2 sensitivity ``sensitivity`` under ``neighbours`` (which the guarantee
    carries). Non-finite values are a :class:`DataError`, raised before any noise is drawn.
    ``seed``: research runs only (not private even if secret). ``budget``/``store``: the spent
    ρ is charged after the values are checked and before the noise is drawn."""

def split_by_coin(
    n: int, fraction: float, *, seed: Seed = None
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Indices of records ``0..n`` split by one exact Bernoulli(``fraction``) coin each
    (heads first): disjoint sides that compose in parallel under add/remove neighbours.
    Either side may be empty. An ``n`` whose index arrays (about 24 bytes per record) exceed
    this machine's memory is an :class:`InvalidParameter` naming ``n`` and the estimate."""

def zcdp_epsilon(rho: float, delta: float) -> float: ...
def zcdp_delta(rho: float, epsilon: float) -> float: ...
def zcdp_rho_for(epsilon: float, delta: float) -> float: ...
def pure_to_zcdp(epsilon: float) -> float: ...
class Method:
    """How a tuning selects among its runs (``dptune::tune::Method``): accepted as ``method=``
    by :func:`dptune.tune`, :func:`tuning_cost` and :func:`calibrate` in place of a name with
    loose keywords (giving both is refused)."""

    @staticmethod
    def papernot_steinke(repeats: Repeats) -> Method:
        """Repeat-and-select: run K ~ ``repeats`` candidates, release the best."""
    @staticmethod
    def liu_talwar(threshold: float, stop_probability: float) -> Method:
        """After each run, release it if its score reaches ``threshold``, else stop with
        probability ``stop_probability`` (releasing nothing)."""
    @staticmethod
    def exhaustive(runs: Optional[int] = None) -> Method:
        """Every grid point, composed; ``runs`` (the grid size) where no space gives it."""
    @property
    def name(self) -> TuningMethod: ...
    @property
    def repeats(self) -> Optional[Repeats]: ...
    @property
    def threshold(self) -> Optional[float]: ...
    @property
    def stop_probability(self) -> Optional[float]: ...
    @property
    def runs(self) -> Optional[int]: ...

def tuning_cost(
    per_run: Guarantee,
    *,
    method: Union[Method, TuningMethod, None] = None,
    runs: Optional[int] = None,
    **loose: Unpack[LooseMethod],
) -> Guarantee:
    """The guarantee of a whole tuning whose runs each spend at most ``per_run``, for a
    :class:`Method`, or by the older spelling (deprecated; its keywords are
    :class:`dptune.types.LooseMethod`): "repeat" (the default; Papernot–Steinke
    repeat-and-select, needs ``repeats``), "threshold" (Liu–Talwar Alg. 1, needs ``gamma`` and
    ``threshold``), "exhaustive" (``runs`` grid points composed)."""

def calibrate(
    outer: Guarantee,
    *,
    method: Union[Method, TuningMethod, None] = None,
    runs: Optional[int] = None,
    per_run: AllowanceKind = "zcdp",
    sampling_rate: Optional[float] = None,
    steps: Optional[int] = None,
    **loose: Unpack[LooseMethod],
) -> Guarantee:
    """The largest per-run allowance whose whole tuning fits ``outer``: "zcdp", "pure", or
    "dpsgd" (``steps`` DP-SGD steps at the public Poisson ``sampling_rate``: the RDP curve of
    the smallest noise multiplier that fits; :func:`dpsgd_noise_multiplier` gives it back).
    ``method`` (or the older spelling) as for :func:`tuning_cost`. Raises NoRelease when even
    the smallest does not fit."""

class NoisePlan:
    """DP-HYPE's distributed Skellam noise: total variance sized for ``min_survivors`` clients
    of whom at most ``colluders`` collude (each share is sized for ``min_survivors − colluders``
    honest clients), and the client-level accounting for any number of survivors."""

    @staticmethod
    def calibrate(
        k: int,
        epsilon: float,
        delta: float,
        min_survivors: int,
        neighbours: Neighbours = "replace_one",
        colluders: int = 0,
    ) -> NoisePlan: ...
    @staticmethod
    def with_variance(
        k: int,
        variance: float,
        min_survivors: int,
        neighbours: Neighbours = "replace_one",
        colluders: int = 0,
    ) -> NoisePlan: ...
    @property
    def k(self) -> int: ...
    @property
    def colluders(self) -> int: ...
    @property
    def total_variance(self) -> float: ...
    @property
    def min_survivors(self) -> int: ...
    def guarantee(self, survivors: int, delta: float) -> Tuple[Guarantee, float]:
        """(guarantee, ε at δ) with ``survivors`` contributions; NoRelease below t."""

def top_k_vote(scores: ArrayLike, k: int) -> npt.NDArray[np.uint8]:
    """Ones at the k best scores (ties to the lower index)."""

def noisy_vote(
    scores: ArrayLike, plan: NoisePlan, *, seed: Optional[int] = None, stream: int = 0
) -> npt.NDArray[np.int64]:
    """A client's submission: top-k vote (NaN scores count as the worst) plus its Skellam share
    Sk(μ/(t − c)) per coordinate."""

def select_argmax(counts: ArrayLike, *, seed: Seed = None) -> int:
    """Index of the largest count, ties broken uniformly at random."""

def encode_signed_u32(values: ArrayLike) -> npt.NDArray[np.uint32]: ...
def decode_signed_u32(values: ArrayLike) -> npt.NDArray[np.int64]: ...

class SecAggClient:
    """A secure-aggregation client (complete graph). Keys derive from the 32 secret bytes
    ``key``: the same key and messages rebuild the same state in another process."""

    def __init__(
        self, id: int, clients: int, min_survivors: int, input: ArrayLike, key: bytes, round: int = 0
    ) -> None: ...
    def advertise_keys(self) -> bytes: ...
    def share_keys(self, msg: bytes) -> bytes: ...
    def masked_input(self, msg: bytes) -> bytes: ...
    def unmask(self, msg: bytes) -> bytes: ...

class SecAggServer:
    """A secure-aggregation server; learns only the survivors' sum."""

    def __init__(self, clients: int, dim: int, min_survivors: int, round: int = 0) -> None: ...
    def receive(self, msg: bytes) -> None: ...
    def advance(self) -> dict[int, bytes]: ...
    def finish(self) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

class _TuningPlan:
    @property
    def cost(self) -> Guarantee: ...
    @property
    def per_run(self) -> Guarantee: ...
    def tasks(self) -> list[Tuple[int, dict, int]]: ...
    def best(self, scores: ArrayLike) -> Optional[int]: ...
    @property
    def truncation(self) -> Optional[Tuple[float, str]]: ...

def _plan_tuning(space: dict, per_run: Guarantee, **kwargs: Any) -> _TuningPlan: ...
def _calibrate_tuning(
    space: dict, target: Guarantee, **kwargs: Any
) -> Tuple[Guarantee, Optional[int], float, Optional[float]]: ...
def _tune_learner(learner: str, **kwargs: Any) -> str: ...
def _check_callable(obj: object) -> None: ...

def budget_create(
    name: str, epsilon: float, delta: float, neighbours: Neighbours, *, store: Optional[StrPath] = None
) -> Dict[str, Any]:
    """Creates the budget ``name`` of (ε, δ) under ``neighbours`` in the persistent store
    (``store``, else ``$DPTUNE_STORE``, else the user's default; created if missing), like
    ``dptune budget create``. Returns its status (as :func:`budget_status`)."""

def budget_status(name: str, *, store: Optional[StrPath] = None) -> Dict[str, Any]:
    """The budget ``name``: ``epsilon``, ``delta``, ``neighbours``, ``spent_epsilon`` (every
    charge composed by the library's ledger at the budget's δ), ``charges``, ``route``,
    ``store``; like ``dptune budget show``."""

def _budget_charge(
    name: str, cost: Guarantee, command: str, *, store: Optional[StrPath] = None
) -> Guarantee: ...

class Composition:
    """A composition of mechanisms (``dptune.accounting.compose``): its guarantee by every valid
    route (the privacy loss distribution and each part's closed-form bound) and queries.
    Immutable. Every number is an upper bound and equals the CLI's."""

    def epsilon(self, delta: Optional[float] = None) -> float:
        """ε at ``delta`` (default :attr:`target_delta`): the minimum over the valid routes."""
    def route(self, delta: Optional[float] = None) -> str:
        """The route giving :meth:`epsilon`: "pld", "rdp", "zcdp", "pure" or "approx"."""
    def epsilon_pld(self, delta: Optional[float] = None) -> float:
        """ε at ``delta`` by the privacy loss distribution alone."""
    def delta(self, epsilon: float) -> float:
        """δ at ``epsilon`` > 0: the minimum over the valid routes."""
    def profile(self, epsilons: ArrayLike) -> npt.NDArray[np.float64]:
        """δ(ε) by the privacy loss distribution at each ε ≥ 0 (``delta_pld`` of
        ``dptune account profile``)."""
    def report(self, delta: Optional[float] = None) -> Dict[str, Any]:
        """The object ``dptune account compose FILE --json`` prints (at ``delta``)."""
    @property
    def guarantee(self) -> Guarantee:
        """The composed guarantee (its ``epsilon`` is :meth:`epsilon`)."""
    @property
    def target_delta(self) -> float:
        """The specification's ``delta``."""
    @property
    def interval(self) -> float:
        """The width of the loss grid."""
    @property
    def grid_points(self) -> int:
        """Grid points held by the PLD (both directions)."""

def _compose_json(text: str, interval: float = 1e-4) -> Composition: ...
def dpsgd_account(
    sampling_rate: float, noise_multiplier: float, steps: int, delta: float, *, interval: float = 1e-4
) -> Dict[str, Any]:
    """The object ``dptune account dpsgd --json`` prints: ``epsilon`` by PLD, with
    ``epsilon_pld``, ``epsilon_rdp`` (continuous orders) and ``epsilon_default_grid`` beside it."""
