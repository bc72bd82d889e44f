"""Private tuning with a Python callable as the candidate.

Division of labour:

* The Rust core draws everything that is data-independent, exactly as its own ``Tuner`` does:
  the number of runs K (kept inside a Rust object and never returned), one configuration and one
  64-bit seed per run, and the whole tuning's guarantee (computed before anything runs).
* Python calls ``candidate(config, allowance, seed)`` for each run, sequentially or through the
  ``concurrent.futures.Executor`` you pass (a ``ProcessPoolExecutor``, Dask's
  ``Client.get_executor()``, Ray's executor, ...).
* The Rust core keeps the best score among the first min(K, T) runs (ties to the lower run
  index), or with a threshold the first run that reaches it.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from . import _core
from ._core import Guarantee, InvalidParameter, Repeats
from .types import TuningMethod

Domain = Union[Sequence[Union[int, float, str]], Tuple[str, float, float]]
#: The type of the model a candidate returns: :class:`TuneResult` keeps it.
M = TypeVar("M")
Candidate = Callable[[Dict[str, Any], Guarantee, int], Tuple[M, float]]


@dataclass(frozen=True)
class TuneResult(Generic[M]):
    """What a tuning releases: the best candidate (or ``None`` = ⊥ where the method can end
    without one) and the guarantee of the **whole** tuning. Never the number of runs.
    Generic in the candidate's model type: ``tune`` of a candidate returning ``(Net, float)``
    gives a ``TuneResult[Net]`` whose ``model`` is an ``Optional[Net]``."""

    config: Optional[Dict[str, Any]]
    model: Optional[M]
    score: Optional[float]
    guarantee: Guarantee

    @property
    def released(self) -> bool:
        """False when the tuning ended without a candidate (⊥)."""
        return self.config is not None


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


def tune(
    candidate: Candidate[M],
    space: Mapping[str, Domain],
    *,
    per_run: Guarantee,
    method: TuningMethod = "repeat",
    repeats: Optional[Repeats] = None,
    gamma: Optional[float] = None,
    threshold: Optional[float] = None,
    cap: Optional[int] = None,
    cap_delta: float = 0.0,
    executor: Optional[Executor] = None,
    seed: Union[None, int, _core.SeededRun] = None,
    budget: Optional[str] = None,
    store: Union[None, str, "os.PathLike[str]"] = None,
) -> TuneResult[M]:
    """Privately tune ``candidate`` over ``space`` and release the best run with the guarantee
    of the whole tuning.

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
        ``{name: [choice, ...]}`` or ``{name: ("uniform" | "log-uniform" | "int", low, high)}``.
    per_run:
        What each run may spend: pure, zCDP (or RDP) for ``repeat`` and ``threshold``.
    method:
        ``"repeat"`` (Papernot–Steinke repeat-and-select; needs ``repeats``), ``"threshold"``
        (Liu–Talwar; needs ``threshold`` and ``gamma``) or ``"exhaustive"`` (every grid point,
        composed).
    cap:
        Always submit exactly ``cap`` runs and keep the first min(K, cap); the truncation is
        charged at ``cap_delta`` (converting the guarantee to (ε, δ)).
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
        neighbour relation than ``per_run``'s raises :class:`dptune.InvalidParameter`. A
        seeded run is charged like any other.

    Returns
    -------
    TuneResult
        The released configuration, model and score (or ``None``s for ⊥) and the guarantee.
        The number of runs is never returned.
    """
    _core._check_callable(candidate)
    check_space = getattr(candidate, "check_space", None)
    if callable(check_space):
        check_space(dict(space))
    plan = _core._plan_tuning(
        dict(space),
        per_run,
        method=method,
        repeats=repeats,
        gamma=gamma,
        threshold=threshold,
        cap=cap,
        cap_delta=cap_delta,
        seed=seed,
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
    tasks = plan.tasks()
    allowance = plan.per_run
    if executor is None:
        results = [_run_one(candidate, c, allowance, s) for (_, c, s) in tasks]
    else:
        futures = [executor.submit(_run_one, candidate, c, allowance, s) for (_, c, s) in tasks]
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
    best = plan.best([r[1] for r in results])
    if best is None:
        return TuneResult(None, None, None, plan.cost)
    model, score = results[best]
    return TuneResult(tasks[best][1], model, score, plan.cost)
