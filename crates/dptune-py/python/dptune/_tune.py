"""Private tuning with a Python callable as the candidate.

Division of labour:

* The library's tuner draws everything that is data-independent (``Tuner::schedule``, the same
  draw its own ``Tuner::run`` makes): the number of runs K (kept inside its release rule and
  never returned), one configuration and one 64-bit seed per run (the first word of the stream
  that ``Tuner::run`` hands to a Rust learner), and the whole tuning's guarantee (computed
  before anything runs).
* Python calls ``candidate(config, allowance, seed)`` for each run, sequentially or through the
  ``concurrent.futures.Executor`` you pass (a ``ProcessPoolExecutor``, Dask's
  ``Client.get_executor()``, Ray's executor, ...).
* The library's release rule keeps the best score among the first min(K, T) runs (ties to the
  lower run index), or with a threshold the first run that reaches it.
"""

from __future__ import annotations

import math
import numbers
import os
import warnings
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from . import _builtin, _core
from ._builtin import LearnerTuneResult
from ._core import Guarantee, InvalidParameter, Method, Repeats
from ._results import SEEDED_NOTE
from .types import TuningMethod

Domain = Union[Sequence[Any], Tuple[str, float, float]]
#: The type of the model a candidate returns: :class:`TuneResult` keeps it.
M = TypeVar("M")
Candidate = Callable[[Dict[str, Any], Guarantee, int], Tuple[M, float]]

#: The range kinds of a ``(kind, low, high)`` domain.
_RANGES = ("uniform", "log-uniform", "log_uniform", "loguniform", "int")
#: The δ at which a result shows ε when no target or stated δ gives one.
_SHOWN_DELTA = 1e-5


class TruncationWarning(UserWarning):
    """A capped tuning (per-run form) whose truncation adds more δ than ``cap_delta``: the cap
    is too small for the number of runs the repeats distribution draws. The message says the
    δ added and the smallest cap that keeps it within ``cap_delta``."""


@dataclass(frozen=True)
class DpSgd:
    """A per-run allowance kind for :func:`tune` with ``target=``: each run trains ``steps``
    DP-SGD steps with Poisson sampling at the public rate ``sampling_rate`` (a rate fixed in
    advance, never derived from the private record count). The tuner calibrates the noise
    multiplier; each run receives the RDP curve of those steps as its allowance (get the
    multiplier back with :func:`dptune.dpsgd_noise_multiplier`, or from
    ``TuneResult.noise_multiplier``)."""

    sampling_rate: float
    steps: int


@dataclass(frozen=True)
class TuneResult(Generic[M]):
    """What a tuning releases: the best candidate (or ``None`` = ⊥ where the method can end
    without one) and the guarantee of the **whole** tuning. Never the number of runs.
    Generic in the candidate's model type: ``tune`` of a candidate returning ``(Net, float)``
    gives a ``TuneResult[Net]`` whose ``model`` is an ``Optional[Net]``.

    ``config``, ``model`` and ``score`` are released under ``guarantee``; every other field is
    a public input or computed from public inputs only (the target, the method and its
    repeats, the calibrated per-run allowance, the cap, whether the run was ``seeded``: a
    seeded run is NOT PRIVATE, and its summary says so)."""

    config: Optional[Dict[str, Any]]
    model: Optional[M]
    score: Optional[float]
    guarantee: Guarantee
    per_run: Optional[Guarantee] = None
    target: Optional[Guarantee] = None
    method: str = ""
    direction: str = "maximize"
    cap: Optional[int] = None
    noise_multiplier: Optional[float] = None
    seeded: bool = False
    """Whether the plan (K, the configurations, the per-run seeds) came from ``seed=``: a
    reproducible research run, NOT PRIVATE (the draws are predictable from the seed, even a
    secret one). False: the operating system's."""

    @property
    def released(self) -> bool:
        """False when the tuning ended without a candidate (⊥)."""
        return self.config is not None

    def summary(self) -> str:
        """A readable account of the release: the whole tuning's ε (at the target's δ, or the
        pure ε, or at δ = 1e-5 when neither states one), how it was tuned, what each run
        spent (then, for a seeded run, the NOT PRIVATE note ``dptune._results.SEEDED_NOTE``), and
        the released configuration and score. Every number is a public input or a charged
        release; nothing about the runs (their number, timings) is shown."""
        lines = [f"{_epsilon_phrase(self.guarantee, self.target)} for the whole tuning"]
        how = [self.method] if self.method else []
        if self.cap is not None:
            how.append(f"capped at {self.cap} runs")
        if self.target is not None:
            how.append(f"calibrated to the target {self.target}")
        if how:
            lines[0] += f" ({'; '.join(how)})"
        if self.per_run is not None:
            each = f"each run spent at most {self.per_run}"
            if self.noise_multiplier is not None:
                each += f" (DP-SGD noise multiplier {self.noise_multiplier:.4g})"
            lines.append(each)
        if self.seeded:
            lines.append(SEEDED_NOTE)
        if self.config is None:
            lines.append("no configuration released (the method ended without one)")
        else:
            lines.append(f"best configuration {self.config!r}")
            lines.append(f"score {self.score!r} ({self.direction}d, released privately)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _epsilon_phrase(g: Guarantee, target: Optional[Guarantee]) -> str:
    """"eps = 2.00 at delta = 1e-05" from the guarantee: at the target's δ if the target states
    one, else its pure ε, else at its own stated δ, else at δ = 1e-5."""
    if g.pure_epsilon is not None:
        return f"eps = {_up(g.pure_epsilon)} (pure DP)"
    stated = (target.approx_bound if target is not None else None) or g.approx_bound
    delta = stated[1] if stated is not None else _SHOWN_DELTA
    return f"eps = {_up(g.epsilon(delta))} at delta = {delta:.3g}"


def _up(x: float) -> str:
    """``x`` to four significant digits, rounded up (a shown ε is never below the computed)."""
    s = f"{x:.4g}"
    while float(s) < x:
        s = f"{float(s) + 10 ** (math.floor(math.log10(float(s))) - 3):.4g}"
    return s


def _run_one(candidate: Candidate[Any], config: dict, allowance: Guarantee, seed: int):
    """One candidate run; returns (model, score) with score a float, or NaN for a configuration
    refused with ``dptune.InvalidParameter`` (by contract a data-independent refusal of the
    configuration: the worst score, which any run could have produced). Every other exception,
    :class:`dptune.DataError` included, propagates and aborts the whole tuning: a data-dependent
    failure turned into a score (or into "no release") would leak."""
    try:
        out = candidate(config, allowance, seed)
    except InvalidParameter as e:
        return str(e), math.nan  # the refusal's reason (data-independent by contract)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise InvalidParameter(
            f"invalid parameter `candidate` = {type(out).__name__}: "
            "must return a (model, score) pair"
        )
    model, score = out
    try:
        score = float(score)
    except (TypeError, ValueError):
        raise InvalidParameter(
            f"invalid parameter `candidate` = score of type {type(score).__name__}: "
            "the score must be a real number"
        ) from None
    if not math.isfinite(score):
        raise _core.DptuneError(
            "numerical error in candidate score: the candidate returned a non-finite score"
        )
    return model, score


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, _np_bool()))


def _np_bool() -> type:
    try:
        import numpy

        return numpy.bool_
    except ImportError:  # pragma: no cover - numpy is a dependency
        return bool


def _is_range(domain: Any) -> bool:
    """A ``(kind, low, high)`` tuple with a known kind and real ends; any other tuple is a tuple
    of choices."""
    return (
        isinstance(domain, tuple)
        and len(domain) == 3
        and isinstance(domain[0], str)
        and domain[0] in _RANGES
        and _is_real(domain[1])
        and _is_real(domain[2])
    )


def _index_space(space: Mapping[str, Domain]) -> Tuple[dict, dict]:
    """The space the Rust core draws from, and the choices by name. Every list of choices
    (a list, a tuple that is not a range, a 1-D numpy array, any other non-string sequence) is
    drawn as the index of a choice, uniformly as the core draws any choice, and mapped back to
    the very object given: booleans, ``None``, numpy scalars and any other value reach the
    candidate unchanged in type."""
    if not isinstance(space, Mapping):
        raise InvalidParameter(
            f"invalid parameter `space` = {type(space).__name__}: must be a dict name -> domain"
        )
    core, choices = {}, {}
    for name, domain in space.items():
        if _is_range(domain):
            core[name] = domain
            continue
        if isinstance(domain, (str, bytes)) or not hasattr(domain, "__iter__"):
            raise InvalidParameter(
                f"invalid parameter `space` = {name}: a domain is a sequence of choices or a "
                f"(kind, low, high) range with kind one of {', '.join(_RANGES)}"
            )
        if getattr(domain, "ndim", 1) != 1:
            raise InvalidParameter(
                f"invalid parameter `space` = {name}: an array of choices must be 1-D"
            )
        values: List[Any] = list(domain)
        for v in values:
            if _is_real(v) and not math.isfinite(float(v)):
                raise InvalidParameter(
                    f"invalid parameter `search_space` = {name}: choice {v!r} is not finite"
                )
        core[name] = list(range(len(values)))  # an empty list is refused by the core
        choices[name] = values
    return core, choices


@overload
def tune(candidate: str, space: Optional[Mapping[str, Domain]] = None,
         **options: Any) -> LearnerTuneResult: ...
@overload
def tune(candidate: Candidate[M], space: Mapping[str, Domain],
         **options: Any) -> TuneResult[M]: ...
def tune(
    candidate: Union[Candidate[M], str],
    space: Optional[Mapping[str, Domain]] = None,
    *,
    target: Optional[Guarantee] = None,
    per_run: Union[None, Guarantee, str, DpSgd] = None,
    method: Union[Method, TuningMethod] = "repeat",
    repeats: Optional[Repeats] = None,
    gamma: Optional[float] = None,
    threshold: Optional[float] = None,
    cap: Union[None, int, str] = None,
    cap_delta: float = 0.0,
    cap_share: float = 0.5,
    direction: str = "maximize",
    executor: Optional[Executor] = None,
    seed: Union[None, int, _core.SeededRun] = None,
    budget: Optional[str] = None,
    store: Union[None, str, "os.PathLike[str]"] = None,
    data: Optional[str] = None,
    hidden: Optional[int] = None,
    fractions: Tuple[float, float] = (0.5, 0.8),
    public_size: Optional[int] = None,
    count_share: Optional[float] = None,
    compare: bool = False,
    force: bool = False,
) -> Union[TuneResult[M], LearnerTuneResult]:
    """Privately tune ``candidate`` over ``space`` and release the best run with the guarantee
    of the whole tuning.

    Give the **target** (what the whole tuning may spend) and let dptune calibrate what each
    run may spend::

        best = dptune.tune(candidate, space, target=dptune.Guarantee.approx(2.0, 1e-5),
                           method=dptune.Method.papernot_steinke(dptune.Repeats.with_mean(10)))
        print(best)  # eps at delta = 1e-05 for the whole tuning, the configuration, the score

    or give ``per_run`` (a :class:`Guarantee`) and read the whole cost from the result.

    .. warning::
       **Your callable is responsible for its own privacy.** ``candidate(config, allowance,
       seed)`` must be a differentially private algorithm that spends **at most**
       ``allowance`` on the private data — training **and** the score it returns (e.g. train
       with Opacus/DP-SGD and compute a DP validation score on a disjoint split). dptune's
       guarantee is only as good as that promise; dptune cannot check what Python code
       spends. Use ``seed`` only for randomness that is not privacy noise (initialisation,
       shuffling). **Privacy noise must come from the operating system** (dptune's functions
       with ``seed=None``): noise keyed by ``seed`` (or anything derived from it) can be
       regenerated and subtracted by anyone who learns the seed, e.g. from a released model
       that stores it, and then nothing is private.

    **Built-in learners.** Give the candidate by name (``"dpsgd-logistic"``, ``"dpsgd-mlp"``,
    ``"objpert"`` or ``"ridge"``) to run the whole job of the command-line ``dptune tune`` on a
    bundled dataset: a charged noisy record count (DP-SGD), the private tuning, the final fit
    of the chosen configuration and the accounting of all three, by the same library function
    with the same plan. With the same seed and inputs it chooses the same configuration as
    ``dptune tune --seed``, and it returns a :class:`LearnerTuneResult` whose ``report`` is the
    object ``dptune tune --json`` prints::

        r = dptune.tune("dpsgd-logistic", target=dptune.Guarantee.approx(1.0, 1e-5))
        print(r)  # the configuration, the test accuracy, total eps <= 1 at delta = 1e-05

    ``target`` is then the whole job's (ε, δ) and is required; ``space`` defaults to the
    learner's own; ``method`` must be a :class:`dptune.Method` (default Papernot-Steinke with
    logarithmic repeats of mean 10); ``cap`` an int; ``budget`` and ``store`` as below.
    ``seed`` makes a reproducible research run whose seed keys **all** the privacy noise of the
    job (the noisy count, DP-SGD, the scores, the final fit): a seeded built-in run is not
    private at all, whoever holds the seed, and its report says so (``report["seeded"]``,
    :attr:`LearnerTuneResult.seeded`, a ``NOT PRIVATE`` note in the summary). ``"ridge"``
    needs a numeric label, which no bundled dataset has, and ``"objpert"`` a binary one (``"adult"``): a learner that does not fit the
    dataset is refused before any budget is charged. Only these apply to a built-in learner: ``data`` (a bundled dataset name, default
    ``"adult"``; its public test split scores the final model), ``hidden`` (units of
    ``"dpsgd-mlp"``, default 32), ``fractions`` (the tuning share of the records and the
    training share of the tuning part, default ``(0.5, 0.8)``), ``public_size`` (a public
    record count: no budget is spent on a noisy one), ``count_share`` (the share of ε spent on
    the noisy count, default 0.02), ``compare`` (also report the NOT PRIVATE exact-best
    configuration on the test split) and ``force`` (run even if the estimated memory or time
    exceeds this machine, as ``dptune tune --force``; without it such a job raises
    :class:`InvalidParameter` naming the parameter that drives it, before any budget is
    charged). The other arguments apply to a callable only; giving one
    with a name (or a built-in-only argument with a callable) raises
    :class:`InvalidParameter`.

    Parameters
    ----------
    candidate:
        ``candidate(config: dict, allowance: Guarantee, seed: int) -> (model, score)``, higher
        score is better. It must be picklable when ``executor`` runs it in other processes.
        Raising :class:`dptune.InvalidParameter` marks the configuration as unusable: raise it
        only for a refusal that does not depend on the data (checked before the data are
        touched); it counts as a run with the worst score. Validate the data before calling
        ``tune`` (raise :class:`dptune.DataError` there); any exception other than
        ``InvalidParameter`` raised during a run aborts the tuning, releases nothing and is
        re-raised. A candidate with a ``check_space(space)`` method (such as
        :class:`dptune.sklearn.Candidate`) is asked to validate the data against the whole
        space first, and one with ``check_allowance(allowance)`` to check the per-run
        allowance's kind, before anything runs. When every run refused its configuration,
        ``tune`` raises that :class:`dptune.InvalidParameter` instead of returning ⊥ (the
        refusals do not depend on the data, so this releases nothing).
    space:
        ``{name: domain}``. A domain is a range ``("uniform" | "log-uniform" | "int", low,
        high)`` (a 3-tuple whose first item names a kind and whose ends are real numbers), or
        choices: a list, any other tuple, a 1-D numpy array or another sequence. Choices may be
        anything (numbers, strings, booleans, ``None``, objects): one is drawn uniformly and
        handed to the candidate as the very object given, unchanged in type.
    target:
        What the **whole** tuning may spend, e.g. ``Guarantee.approx(2.0, 1e-5)``. The per-run
        allowance is then the largest of its kind (``per_run``) whose whole tuning fits the
        target, found by the library's calibration (``dptune.calibrate``).
    per_run:
        With ``target``: the kind of per-run allowance to calibrate, ``"zcdp"`` (default),
        ``"pure"`` or :class:`DpSgd` ``(sampling_rate, steps)`` (the noise multiplier of those
        DP-SGD steps is calibrated; the allowance is their RDP curve). Without ``target``: the
        per-run allowance itself, a :class:`Guarantee` (pure, zCDP or RDP for ``repeat`` and
        ``threshold``). Giving a :class:`Guarantee` together with ``target`` is refused
        (:class:`InvalidParameter`): say either what the whole tuning or what each run spends.
    method:
        A :class:`dptune.Method`: ``Method.papernot_steinke(repeats)`` (repeat-and-select),
        ``Method.liu_talwar(threshold, stop_probability)`` or ``Method.exhaustive()`` (every
        grid point, composed). The older spelling, a name with loose keywords, still works:
        ``"repeat"`` (needs ``repeats``), ``"threshold"`` (needs ``threshold`` and ``gamma``)
        or ``"exhaustive"``.
    direction:
        ``"maximize"`` (default) or ``"minimize"`` (e.g. a loss; ``"max"``/``"min"`` as in
        :func:`dptune.select`). Minimising is exactly
        maximising the negated scores (negation is exact in floating point, ties still go to
        the earlier run, and with ``threshold`` a run is accepted when its score is at most the
        threshold): the selection is the same post-processing of the runs' private scores, so
        the guarantee is unchanged. The released ``score`` is the candidate's own (not negated).
    cap:
        ``None``: run the drawn number of runs K. ``T`` (an int): always submit exactly T runs
        (the wall time and task count no longer depend on K) and keep the first min(K, T); the
        truncation adds δ = (1 + e^ε)·P[K > T] (truncation lemma), and the whole tuning is
        charged in (ε, δ). ``"auto"`` (with ``target``): the smallest T whose truncation term
        is at most ``cap_share`` of the target's δ.

        With ``target``, the truncation term may use ``cap_share`` (default 0.5, as the
        command-line tool) of the target's δ and the uncapped tuning gets the rest; a cap whose
        term exceeds that share is refused (:class:`InvalidParameter`), naming the smallest cap
        that fits. Without ``target``, the whole cost is (ε at ``cap_delta``, ``cap_delta`` +
        the term); when the term exceeds ``cap_delta`` a :class:`TruncationWarning` says the δ
        it adds and the smallest cap that keeps it within ``cap_delta``.
    cap_delta:
        Per-run form only: the δ at which the uncapped tuning is converted to (ε, δ) before the
        truncation term is added.
    cap_share:
        With ``target`` and a cap: the share of the target's δ the truncation term may use.
    executor:
        Any ``concurrent.futures.Executor``. **The executor is trusted:** it sees how many tasks
        are submitted, which is the secret K unless ``cap`` is set. Without ``cap``, do not let
        the task count, logs or the wall time reach anyone the guarantee protects against.
    seed:
        ``None`` (operating-system randomness) or an integer or :class:`dptune.SeededRun` for a
        reproducible research run. A seeded run is **not private, even if the seed is kept
        secret**: the same seed on two neighbouring datasets draws the same K, configurations
        and per-run seeds on both. The seed never reaches the privacy noise of the candidates
        shipped with dptune (:mod:`dptune.sklearn` draws its noise from the operating system).
    budget, store:
        Charge the whole tuning's guarantee to the budget ``budget`` of the persistent store
        (``store``, else the environment variable ``DPTUNE_STORE``, else the user's default
        store: the same file and rules as the command-line tool's ``--budget``; see
        :func:`dptune.budget_create`). The charge is committed after the space is checked and
        the plan drawn, and before any candidate runs. A charge that does not fit raises
        :class:`dptune.BudgetExceeded` and nothing runs or is released; a budget under another
        neighbour relation than the tuning's raises :class:`dptune.InvalidParameter`. A
        seeded run is charged like any other.

    Returns
    -------
    TuneResult
        The released configuration, model and score (or ``None``s for ⊥), the guarantee of the
        whole tuning, and the public inputs that produced it (``per_run``, ``target``,
        ``method``, ``direction``, ``cap``, ``noise_multiplier``); ``print(result)`` shows its
        :meth:`~TuneResult.summary`. The number of runs is never returned.
    """
    if isinstance(candidate, str):
        return _builtin.tune_learner(
            candidate, space, target=target, method=method, data=data, hidden=hidden,
            fractions=fractions, public_size=public_size, count_share=count_share, cap=cap,
            compare=compare, seed=seed, budget=budget, store=store, force=force,
            callable_only={
                "per_run": per_run is not None, "repeats": repeats is not None,
                "gamma": gamma is not None, "threshold": threshold is not None,
                "cap_delta": cap_delta != 0.0, "cap_share": cap_share != 0.5,
                "direction": direction != "maximize", "executor": executor is not None,
            },
        )
    builtin_only = {
        "data": data is not None, "hidden": hidden is not None,
        "fractions": tuple(fractions) != (0.5, 0.8), "public_size": public_size is not None,
        "count_share": count_share is not None, "compare": compare, "force": force,
    }
    for name, given in builtin_only.items():
        if given:
            raise InvalidParameter(
                f"invalid parameter `{name}`: applies to a built-in learner (candidate given "
                "by name), not to a callable candidate"
            )
    if space is None:
        raise InvalidParameter(
            "invalid parameter `space` = None: a callable candidate needs a search space"
        )
    _core._check_callable(candidate)
    # The spellings `dptune.select` accepts for its goal, normalised.
    directions = {"maximize": "maximize", "max": "maximize", "minimize": "minimize",
                  "min": "minimize"}
    if direction not in directions:
        raise InvalidParameter(
            f"invalid parameter `direction` = {direction!r}: expected \"maximize\" or "
            "\"minimize\""
        )
    direction = directions[direction]
    sign = -1.0 if direction == "minimize" else 1.0
    core_space, choices = _index_space(space)
    check_space = getattr(candidate, "check_space", None)
    if callable(check_space):
        check_space(dict(space))
    # Minimising: the core keeps the largest negated score, against the negated threshold.
    core_method: Union[Method, str] = method
    if isinstance(method, Method) and method.threshold is not None and sign < 0:
        core_method = Method.liu_talwar(-method.threshold, method.stop_probability)
    common = dict(method=core_method, repeats=repeats, gamma=gamma, threshold=None)
    if threshold is not None:
        common["threshold"] = sign * float(threshold)
    noise_multiplier = None
    if target is not None:
        if isinstance(per_run, Guarantee):
            raise InvalidParameter(
                "invalid parameter `per_run` = a Guarantee given together with `target`: give "
                "either the whole tuning's target or each run's allowance, not both (with "
                "target, per_run names the kind to calibrate: \"zcdp\", \"pure\" or "
                "dptune.DpSgd(sampling_rate, steps))"
            )
        if cap_delta != 0.0:
            raise InvalidParameter(
                f"invalid parameter `cap_delta` = {cap_delta}: with target, the cap's δ is "
                "the target's, split by cap_share"
            )
        kind = "zcdp" if per_run is None else per_run
        extra: dict = {}
        if isinstance(kind, DpSgd):
            extra = dict(sampling_rate=kind.sampling_rate, steps=kind.steps)
            kind = "dpsgd"
        elif kind not in ("zcdp", "pure"):
            raise InvalidParameter(
                f"invalid parameter `per_run` = {kind!r}: with target, expected \"zcdp\", "
                "\"pure\" or dptune.DpSgd(sampling_rate, steps)"
            )
        run, cap_used, cap_delta, noise_multiplier = _core._calibrate_tuning(
            core_space,
            target,
            per_run=kind,
            cap=None if cap == "auto" else _cap_int(cap),
            cap_auto=cap == "auto",
            cap_share=cap_share,
            **extra,
            **common,
        )
    else:
        if not isinstance(per_run, Guarantee):
            raise InvalidParameter(
                f"invalid parameter `per_run` = {per_run!r}: give target=Guarantee(...) (what "
                "the whole tuning may spend) or per_run=Guarantee(...) (what each run may spend)"
            )
        if cap == "auto":
            raise InvalidParameter(
                "invalid parameter `cap` = 'auto': the cap is chosen against the target's δ; "
                "give target=Guarantee.approx(eps, delta), or an integer cap"
            )
        run, cap_used = per_run, _cap_int(cap)
    plan = _core._plan_tuning(
        core_space,
        run,
        cap=cap_used,
        cap_delta=cap_delta,
        seed=seed,
        target=target,
        **common,
    )
    trunc = plan.truncation
    if target is None and trunc is not None and trunc[0] > cap_delta:
        warnings.warn(
            TruncationWarning(
                f"cap={cap_used} is too small for these repeats: truncating at {cap_used} runs "
                f"adds delta = {trunc[0]:.3g} to cap_delta = {cap_delta:g} (the term "
                f"(1 + e^eps)·P[K > cap] of the truncation lemma), so the whole tuning is "
                f"{plan.cost}; {trunc[1]}"
            ),
            stacklevel=2,
        )
    check_allowance = getattr(candidate, "check_allowance", None)
    if callable(check_allowance):
        check_allowance(plan.per_run)  # public: before the budget is charged and anything runs
    if budget is not None:
        _core._budget_charge(budget, plan.cost, "tune", store=store)
    elif store is not None:
        raise InvalidParameter(
            f"invalid parameter `store` = {store!r}: names a budget store, but no `budget` "
            "was given"
        )

    def config_of(drawn: dict) -> dict:
        return {k: (choices[k][v] if k in choices else v) for k, v in drawn.items()}

    tasks = [(config_of(c), s) for (_, c, s) in plan.tasks()]
    allowance = plan.per_run
    if executor is None:
        results = [_run_one(candidate, c, allowance, s) for (c, s) in tasks]
    else:
        futures = [executor.submit(_run_one, candidate, c, allowance, s) for (c, s) in tasks]
        try:
            results = [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    if results and all(math.isnan(r[1]) for r in results):
        # Every run refused its configuration before touching the data (InvalidParameter, by
        # contract data-independent): the outcome depends on public inputs and the plan only,
        # so saying so releases nothing, while "no release" would hide a misuse.
        raise InvalidParameter(
            f"invalid parameter `candidate`: every run refused its configuration; the first "
            f"said: {results[0][0]}"
        )
    # Minimising: the core keeps the largest negated score (exact; see `direction`).
    best = plan.best([sign * r[1] for r in results])
    about = dict(
        per_run=allowance,
        target=target,
        method=_describe(method, repeats, gamma, threshold),
        direction=direction,
        cap=cap_used,
        noise_multiplier=noise_multiplier,
        seeded=seed is not None,
    )
    if best is None:
        return TuneResult(None, None, None, plan.cost, **about)
    model, score = results[best]
    return TuneResult(tasks[best][0], model, score, plan.cost, **about)


def _cap_int(cap: Any) -> Optional[int]:
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, numbers.Integral):
        raise InvalidParameter(
            f"invalid parameter `cap` = {cap!r}: expected None, a number of runs or \"auto\""
        )
    return int(cap)


def _describe(
    method: Union[Method, str], repeats: Optional[Repeats], gamma: Any, threshold: Any
) -> str:
    """The method in words, from its public parameters."""
    if isinstance(method, Method):
        repeats, gamma, threshold = method.repeats, method.stop_probability, method.threshold
        method = method.name
    if method == "repeat":
        return f"Papernot–Steinke repeat-and-select, {repeats!r}"
    if method == "threshold":
        return f"Liu–Talwar threshold {threshold}, stop probability {gamma}"
    if method == "exhaustive":
        return "exhaustive grid search, composed"
    return method
