"""Run an Optuna define-by-run objective under private selection.

An Optuna objective ``objective(trial) -> value`` asks for its hyperparameters as it runs
(``trial.suggest_float``, ``suggest_int``, ``suggest_categorical``, conditional spaces
included) and returns a score. :func:`optimize` runs such an objective unchanged under dptune's
private selection (Papernot-Steinke repeat-and-select or Liu-Talwar, as :func:`dptune.tune`;
the number of trials is random and never released) and returns the best trial's parameters,
its model and the guarantee of the **whole** tuning.

What changes in the objective is only what makes it private: train with ``trial.allowance``
(the per-run budget) and return a score computed privately within that same allowance::

    def objective(trial):
        C = trial.suggest_float("C", 1e-2, 1e2, log=True)
        model = PrivateLogisticRegression(classes=[0, 1], C=C, rho=trial.allowance.rho)  # changed
        model.fit(X_train, y_train)
        trial.set_model(model)  # optional: the best trial's model comes back
        return dptune.noisy_count(int((model.predict(X_val) == y_val).sum()),
                                  math.sqrt(2 * trial.allowance.rho))[0]  # changed

    best = dptune.optuna.optimize(
        objective, per_run=dptune.Guarantee.zcdp(0.05),
        method=dptune.Method.papernot_steinke(dptune.Repeats.with_mean(10)))

Why this is private (Papernot & Steinke, ICLR 2022, arXiv 2110.03620, Thm 2; Liu & Talwar,
STOC 2019, arXiv 1811.07971, Thm 3.1 for ``method="threshold"``): each trial is one run of a
fixed randomised algorithm: its hyperparameters are drawn by :class:`PrivateTrial` from the
priors the objective declares, using only the run's seed (never the data), and the objective
must spend at most ``trial.allowance`` on the private data, score included. Those are the
theorems' preconditions; the first is enforced here, the second is the objective's promise
(dptune cannot see what Python code spends). Conditional spaces are fine as long as what the
objective suggests depends only on earlier suggestions, never on the data.

What is refused, because it would release something uncharged: ``trial.report`` and
``trial.should_prune`` (intermediate values, and pruning decisions made on them, depend on the
data and are not part of what the selection theorems cover), ``trial.number`` (the index of the
best trial says how many trials ran, which is secret), user and system attributes (values the
objective computes on private data would be released beside the winner unpaid). Each raises
:class:`TrialMisuse` and aborts the whole tuning: nothing is released.

Optuna itself is not needed to run this module; ``pip install dptune[optuna]`` installs it for
the objectives that also run under a plain ``optuna.Study``.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Callable, Dict, Literal, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from ._core import DptuneError, Guarantee, InvalidParameter, Method, Repeats, SeededRun
from ._tune import tune

__all__ = ["OptimizeResult", "PrivateTrial", "TrialMisuse", "optimize"]

Direction = Literal["maximize", "minimize"]
Choice = Union[None, bool, int, float, str]
#: The type of one categorical choice: ``suggest_categorical`` returns the choices' type.
C = TypeVar("C", bound=Choice)


class TrialMisuse(DptuneError):
    """The objective used a part of Optuna's trial interface that private selection cannot
    honour (intermediate reports, pruning, the trial number, attributes). Raised inside a run,
    it aborts the whole tuning and nothing is released."""


def _refuse(what: str, why: str) -> TrialMisuse:
    return TrialMisuse(f"`trial.{what}` is not available under private selection: {why}")


class PrivateTrial:
    """The ``trial`` an objective receives from :func:`optimize`: Optuna's ``suggest_*``
    methods, drawing every hyperparameter from its declared prior with the run's own
    generator (seeded from the run's seed, never from data), plus :attr:`allowance` and
    :attr:`seed`.

    A name suggested twice returns the same value if the declaration is the same, as in Optuna.
    A malformed or conflicting declaration raises :class:`TrialMisuse`: a programming error,
    which aborts the tuning rather than counting as an unusable configuration.
    """

    def __init__(self, allowance: Guarantee, seed: int):
        self._allowance = allowance
        # Two independent streams of the run's seed: one samples the hyperparameters, the
        # other is handed to the objective (initialisation, shuffling), so that the objective's
        # own draws do not shift the sampled configuration.
        sampler_seq, user_seq = np.random.SeedSequence(seed).spawn(2)
        self._rng = np.random.Generator(np.random.PCG64(sampler_seq))
        self._seed = int(user_seq.generate_state(1, dtype=np.uint64)[0])
        self._params: Dict[str, Any] = {}
        self._declared: Dict[str, Tuple[Any, ...]] = {}
        self._model: Any = None

    @property
    def allowance(self) -> Guarantee:
        """What this trial may spend on the private data, training and score together."""
        return self._allowance

    @property
    def seed(self) -> int:
        """A 64-bit seed for the objective's non-privacy randomness (initialisation,
        shuffling). Never use it for privacy noise: whoever learns it could remove the noise."""
        return self._seed

    @property
    def params(self) -> Dict[str, Any]:
        """The hyperparameters suggested so far."""
        return dict(self._params)

    def set_model(self, model: Any) -> None:
        """Keep ``model`` as this trial's model; the winner's comes back in the result. It is
        released, so it must be the output of the objective's private training."""
        self._model = model

    def _suggest(self, name: str, declaration: Tuple[Any, ...], draw: Callable[[], Any]) -> Any:
        if not isinstance(name, str):
            raise TrialMisuse(f"invalid parameter `name` = {name!r}: must be a string")
        if name in self._declared:
            if self._declared[name] != declaration:
                raise TrialMisuse(
                    f"invalid parameter `{name}` = {declaration[1:]!r}: suggested earlier as "
                    f"{self._declared[name][1:]!r}; a name keeps one declaration"
                )
            return self._params[name]
        value = draw()
        self._declared[name] = declaration
        self._params[name] = value
        return value

    def suggest_float(
        self,
        name: str,
        low: float,
        high: float,
        *,
        step: Optional[float] = None,
        log: bool = False,
    ) -> float:
        """A float from ``[low, high]``: uniform, log-uniform (``log=True``, ``low > 0``) or
        uniform over the grid ``low, low + step, ...`` (as Optuna's ``FloatDistribution``)."""
        low, high = _bounds(name, low, high)
        if log and step is not None:
            raise TrialMisuse(
                f"invalid parameter `{name}` = step {step!r} with log=True: choose one"
            )
        if log and low <= 0:
            raise TrialMisuse(
                f"invalid parameter `{name}` = low {low!r} with log=True: must be > 0"
            )
        if step is not None and not (isinstance(step, (int, float)) and 0 < step < math.inf):
            raise TrialMisuse(
                f"invalid parameter `{name}` = step {step!r}: must be a finite positive number"
            )

        def draw() -> float:
            if step is not None:
                points = int(math.floor((high - low) / step + 1e-9)) + 1
                return float(low + step * int(self._rng.integers(points)))
            if log:
                return float(math.exp(self._rng.uniform(math.log(low), math.log(high))))
            return float(self._rng.uniform(low, high))

        return self._suggest(name, ("float", low, high, step, log), draw)

    def suggest_int(
        self, name: str, low: int, high: int, *, step: int = 1, log: bool = False
    ) -> int:
        """An integer from ``[low, high]``: uniform over ``low, low + step, ...``, or
        log-uniform (``log=True``: a log-uniform draw on ``[low − ½, high + ½]`` rounded to the
        nearest integer, as Optuna's ``IntDistribution``)."""
        for label, v in (("low", low), ("high", high), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TrialMisuse(
                    f"invalid parameter `{name}` = {label} {v!r}: must be an integer"
                )
        low, high, step = int(low), int(high), int(step)
        if low > high or step < 1:
            raise TrialMisuse(
                f"invalid parameter `{name}` = ({low}, {high}, step {step}): need low <= high "
                "and step >= 1"
            )
        if log and (low < 1 or step != 1):
            raise TrialMisuse(
                f"invalid parameter `{name}` = ({low}, {high}, step {step}) with log=True: "
                "need low >= 1 and step 1"
            )

        def draw() -> int:
            if log:
                a, b = math.log(low - 0.5), math.log(high + 0.5)
                return min(high, max(low, int(round(math.exp(self._rng.uniform(a, b))))))
            return low + step * int(self._rng.integers((high - low) // step + 1))

        return self._suggest(name, ("int", low, high, step, log), draw)

    def suggest_categorical(self, name: str, choices: Sequence[C]) -> C:
        """One of ``choices`` (None, bool, int, float or str, as in Optuna), uniformly."""
        options = tuple(choices)
        if not options or not all(
            c is None or isinstance(c, (bool, int, float, str)) for c in options
        ):
            raise TrialMisuse(
                f"invalid parameter `{name}` = {options!r}: need at least one choice, each None, "
                "bool, int, float or str"
            )
        value: C = self._suggest(
            name, ("categorical", options), lambda: options[int(self._rng.integers(len(options)))]
        )
        return value

    def report(self, value: float, step: int) -> None:
        raise _refuse(
            "report", "intermediate values depend on the data and would be released unpaid"
        )

    def should_prune(self) -> bool:
        raise _refuse(
            "should_prune",
            "stopping a trial on intermediate scores is not covered by the selection theorems",
        )

    @property
    def number(self) -> int:
        raise _refuse("number", "the index of the winning trial reveals how many trials ran")

    def set_user_attr(self, key: str, value: Any) -> None:
        raise _refuse(
            "set_user_attr", "attributes computed on private data would be released unpaid"
        )

    def set_system_attr(self, key: str, value: Any) -> None:
        raise _refuse(
            "set_system_attr", "attributes computed on private data would be released unpaid"
        )


def _bounds(name: str, low: Any, high: Any) -> Tuple[float, float]:
    ok = all(
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, bool)
        and math.isfinite(v)
        for v in (low, high)
    )
    if not ok or low > high:
        raise TrialMisuse(
            f"invalid parameter `{name}` = ({low!r}, {high!r}): need finite low <= high"
        )
    return float(low), float(high)


@dataclass(frozen=True)
class OptimizeResult:
    """What :func:`optimize` releases: the best trial's parameters, its value (as the
    objective returned it), its model (what it passed to ``trial.set_model``, else None) and
    the guarantee of the whole tuning; ``None``s when the tuning ended without a winner (⊥,
    possible with ``method="threshold"``). Never the number of trials."""

    best_params: Optional[Dict[str, Any]]
    best_value: Optional[float]
    model: Any
    guarantee: Guarantee

    @property
    def released(self) -> bool:
        """False when the tuning ended without a winner (⊥)."""
        return self.best_params is not None


class _Run:
    """The candidate handed to :func:`dptune.tune`: one trial of ``objective``. Picklable when
    the objective is, so that an executor can run trials in other processes."""

    def __init__(self, objective: Callable[[PrivateTrial], float], sign: float):
        self.objective, self.sign = objective, sign

    def __call__(self, config: dict, allowance: Guarantee, seed: int):
        trial = PrivateTrial(allowance, seed)
        try:
            value = self.objective(trial)
        except InvalidParameter as e:
            # dptune.tune would count an InvalidParameter as an unusable configuration (a worst
            # score). Raised inside an objective it may come after the data were touched, so
            # it aborts the tuning instead of becoming a data-dependent score.
            raise TrialMisuse(f"the objective raised InvalidParameter: {e}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            # Data-independent misuse (the objective's return type): abort, never a score.
            raise TrialMisuse(
                f"the objective returned {type(value).__name__}: it must return one number "
                "(a private score); multi-objective studies are not supported"
            )
        return (trial.params, trial._model), self.sign * float(value)


def optimize(
    objective: Callable[[PrivateTrial], float],
    *,
    per_run: Guarantee,
    direction: Direction = "maximize",
    method: Union[Method, Literal["repeat", "threshold"]] = "repeat",
    repeats: Optional[Repeats] = None,
    gamma: Optional[float] = None,
    threshold: Optional[float] = None,
    cap: Optional[int] = None,
    cap_delta: float = 0.0,
    executor: Optional[Executor] = None,
    seed: Union[None, int, SeededRun] = None,
) -> OptimizeResult:
    """Run ``objective`` under private selection and release the best trial.

    ``direction`` is ``"maximize"`` or ``"minimize"`` (note: Optuna's default is minimize,
    dptune's is maximize; say which). ``threshold`` is in the objective's own units (for
    ``"minimize"`` the first trial whose value is at most it wins). Every other argument is
    :func:`dptune.tune`'s, with the same warnings: the objective is responsible for spending at
    most ``trial.allowance`` (score included) and for drawing privacy noise from the operating
    system; ``executor`` sees the number of trials unless ``cap`` is set; a seeded run is not
    private. ``method="exhaustive"`` needs a declared grid, which a define-by-run objective does
    not have: use :func:`dptune.tune` with a space for that.
    """
    if not callable(objective):
        raise InvalidParameter(
            f"invalid parameter `objective` = {type(objective).__name__}: must be callable"
        )
    if direction not in ("maximize", "minimize"):
        raise InvalidParameter(
            f"invalid parameter `direction` = {direction!r}: must be 'maximize' or 'minimize'"
        )
    if isinstance(method, Method) and method.name == "exhaustive":
        raise InvalidParameter(
            f"invalid parameter `method` = {method!r}: a define-by-run objective has no grid "
            "to run exhaustively"
        )
    if not isinstance(method, Method) and method not in ("repeat", "threshold"):
        raise InvalidParameter(
            f"invalid parameter `method` = {method!r}: must be 'repeat' or 'threshold' (a "
            "define-by-run objective has no grid to run exhaustively)"
        )
    sign = 1.0 if direction == "maximize" else -1.0
    if isinstance(method, Method) and method.threshold is not None and sign < 0:
        # The trials' values are negated below (maximised): so is the threshold.
        method = Method.liu_talwar(-method.threshold, method.stop_probability)
    out = tune(
        _Run(objective, sign),
        {},
        per_run=per_run,
        method=method,
        repeats=repeats,
        gamma=gamma,
        threshold=None if threshold is None else sign * threshold,
        cap=cap,
        cap_delta=cap_delta,
        executor=executor,
        seed=seed,
    )
    if not out.released:
        return OptimizeResult(None, None, None, out.guarantee)
    params, model = out.model
    return OptimizeResult(params, sign * out.score, model, out.guarantee)
