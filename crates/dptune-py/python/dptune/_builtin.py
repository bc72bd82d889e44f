"""``dptune.tune`` with a built-in learner: the whole job of the command-line ``dptune tune``
(noisy record count, private tuning, final fit and their accounting), run by the same library
function with the same plan, returning the same report. With the same seed and inputs the two
front ends choose the same configuration."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _core
from ._core import Guarantee, InvalidParameter, Method
from ._results import seeded_suffix

#: The built-in learners, as the command line spells them (Python may write ``_`` for ``-``).
LEARNERS = ("dpsgd-logistic", "dpsgd-mlp", "objpert", "ridge")


@dataclass(frozen=True)
class LearnerTuneResult:
    """What ``dptune.tune`` releases for a built-in learner: ``report`` is exactly the object
    ``dptune tune --json`` prints (every field declared public input, charged release, or — only
    under ``compare=True``, inside ``report["compare"]`` with ``"not_private": true`` — a NOT
    PRIVATE diagnostic). Never the exact record count, the number of runs or a run time."""

    report: Dict[str, Any]

    @property
    def config(self) -> Dict[str, Any]:
        """The chosen configuration (a charged release)."""
        return self.report["best"]

    @property
    def seeded(self) -> bool:
        """Whether the noise came from ``seed`` (a reproducible research run, NOT PRIVATE: the
        noise is predictable from the seed) rather than the operating system."""
        return self.report["seeded"]

    @property
    def epsilon(self) -> float:
        """The whole job's ε at :attr:`delta` (count, tuning and final fit)."""
        return self.report["privacy"]["epsilon"]

    @property
    def delta(self) -> float:
        """The whole job's δ."""
        return self.report["privacy"]["delta"]

    def summary(self) -> str:
        """One line per part: the configuration, the test score and the privacy spent, and for
        a seeded run the NOT PRIVATE note (``dptune._results.SEEDED_NOTE``)."""
        p = self.report["privacy"]
        score = next(
            (f"{k.replace('_', ' ')} {self.report[k]:.4f}" for k in ("test_accuracy", "test_rmse")
             if self.report.get(k) is not None),
            "no test score",
        )
        return (
            f"dptune.tune({self.report['learner']!r} on {self.report['dataset']}): "
            f"{self.config}; {score}; total eps <= {p['epsilon']:.6g} at delta = "
            f"{p['delta']:g} ({p['neighbours']}; tuning by {p['tuning']['route']}, final fit by "
            f"{p['final_fit']['route']}){seeded_suffix(self.seeded)}"
        )

    def __str__(self) -> str:
        return self.summary()


def tune_learner(
    learner: str,
    space: Optional[Mapping[str, Any]],
    *,
    target: Optional[Guarantee],
    method: Union[Method, str],
    data: Optional[str],
    hidden: Optional[int],
    fractions: Tuple[float, float],
    public_size: Optional[int],
    count_share: Optional[float],
    cap: Union[None, int, str],
    compare: bool,
    seed: Any,
    budget: Optional[str],
    store: Union[None, str, "os.PathLike[str]"],
    force: bool,
    callable_only: Mapping[str, bool],
) -> LearnerTuneResult:
    """The built-in branch of :func:`dptune.tune` (its docstring documents the arguments)."""
    for name, given in callable_only.items():
        if given:
            raise InvalidParameter(
                f"invalid parameter `{name}`: applies to a callable candidate, not to the "
                f"built-in learner {learner!r}"
            )
    if target is None:
        raise InvalidParameter(
            "invalid parameter `target` = None: a built-in learner is given the whole job's "
            "budget, e.g. target=dptune.Guarantee.approx(1.0, 1e-5)"
        )
    if cap is not None and not isinstance(cap, int):
        raise InvalidParameter(
            f"invalid parameter `cap` = {cap!r}: a built-in learner takes an int cap"
        )
    if isinstance(method, str):
        if method != "repeat":
            raise InvalidParameter(
                f"invalid parameter `method` = {method!r}: give a built-in learner a "
                "dptune.Method (the default is Papernot-Steinke with logarithmic repeats of "
                "mean 10)"
            )
        method = None
    text = _core._tune_learner(
        learner,
        target=target,
        data="adult" if data is None else data,
        hidden=hidden,
        space=None if space is None else dict(space),
        method=method,
        fractions=tuple(fractions),
        public_size=public_size,
        count_share=count_share,
        cap=cap,
        compare=compare,
        seed=seed,
        budget=budget,
        store=None if store is None else os.fspath(store),
        force=force,
    )
    return LearnerTuneResult(report=json.loads(text))
