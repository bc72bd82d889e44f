"""Private tuning of Opacus (PyTorch DP-SGD) training loops.

:class:`OpacusCandidate` turns "a model, an optimizer, a dataset" into a candidate for
:func:`dptune.tune`: each run trains a fresh model with Opacus's DP-SGD at the noise multiplier
dptune calibrates for the run's allowance, checks afterwards that Opacus's own accountant
history fits that allowance, and releases a validation score with dptune's exact noise.

Why a run spends at most its allowance (add/remove-one neighbours):

* **Split.** One exact coin per record (:func:`dptune.split_by_coin`) puts it on the training
  or the validation side, so the two sides are disjoint and training and scoring compose in
  parallel: each may spend the whole allowance.
* **Training** is T steps of the Poisson-subsampled Gaussian mechanism (Abadi et al. 2016,
  arXiv 1607.00133): every record of the training side is in a step's batch independently with
  the **public** probability ``q = batch_size / public_size`` (never a rate derived from the
  private record count), per-example gradients are clipped to ``max_grad_norm`` and Gaussian
  noise of standard deviation ``z · max_grad_norm`` is added to their sum, which is divided by
  the public expected batch size ``batch_size``. T = ``epochs · ⌊1/q⌋`` (Opacus's steps per
  epoch) is public. z is :func:`dptune.dpsgd_noise_multiplier` for (allowance, q, T): the
  smallest multiplier whose curve (Mironov, Talwar & Zhang 2019, arXiv 1908.10530) fits. After
  training, the guarantee rebuilt from Opacus's accountant history (:func:`from_opacus`) is
  checked to fit the allowance; a mismatch (a training loop that ran more steps or at another
  rate) raises and releases nothing.
* **Score**: the number of correct validation predictions (sensitivity 1) plus exact discrete
  Laplace noise at the largest ε that fits the allowance (:func:`dptune.largest_pure_within`).

Assumptions you accept with this path (also in docs/PRIVACY.md): Opacus's noise is PyTorch's
floating-point Gaussian, not an exact sampler; it runs in Opacus's ``secure_mode`` (the
2n-sample sum of Holohan & Braghin, arXiv 2107.10138, against the floating-point attack of
Jin et al.), with a generator seeded from the operating system. Batch sampling and noise never
use the run's ``seed`` (which only initialises the model), so a released model carries no key
to its noise.

:class:`PLDAccountant` is a drop-in accountant for an existing Opacus training loop: importing
this module registers it with Opacus under the name ``"dptune"``, so
``PrivacyEngine(accountant="dptune")`` reports dptune's privacy-loss-distribution ε (the number
``dptune account dpsgd`` prints), and ``make_private_with_epsilon`` calibrates the noise by it.
"""

from __future__ import annotations

import math
import secrets
import warnings
from typing import Any, Callable, Dict, Iterable, Optional, Tuple, Union

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.accountants import IAccountant, RDPAccountant, register_accountant
from opacus.data_loader import DPDataLoader
from opacus.optimizers import DPOptimizer
from torch import nn
from torch.utils.data import Dataset, Subset

from ._core import (
    Composition,
    DataError,
    DptuneError,
    Guarantee,
    InvalidParameter,
    SeededRun,
    dpsgd_guarantee,
    dpsgd_noise_multiplier,
    largest_pure_within,
    noisy_count,
    split_by_coin,
)
from .accounting import compose

__all__ = ["OpacusCandidate", "PLDAccountant", "from_opacus"]


def from_opacus(accountant: Any) -> Guarantee:
    """The guarantee of everything an Opacus accountant recorded: its history of
    (noise multiplier, sample rate, steps) entries, each a DP-SGD curve
    (:func:`dptune.dpsgd_guarantee`), composed, together with the privacy loss distribution of
    the same history (:func:`dptune.accounting.compose`; its ε is the smaller valid one). Works
    with any accountant that keeps Opacus's ``history`` list (RDP, PRV, GDP accountants)."""
    history = getattr(accountant, "history", None)
    if not isinstance(history, list):
        raise InvalidParameter(
            f"invalid parameter `accountant` = {type(accountant).__name__}: "
            "needs an Opacus accountant with a `history` list"
        )
    if not history:
        raise InvalidParameter(
            "invalid parameter `accountant` = an empty history: nothing was recorded"
        )
    total: Optional[Guarantee] = None
    for entry in history:
        z, q, steps = entry
        g = dpsgd_guarantee(float(q), float(z), int(steps))
        total = g if total is None else total.compose(g)
    assert total is not None
    spec = {
        "parts": [
            {"mechanism": "gaussian", "sigma": float(z), "q": float(q), "times": int(t)}
            for z, q, t in history
        ],
        "delta": 1e-5,  # only the default of queries; fits_within and epsilon pass their own
        "neighbours": "add_remove",
    }
    try:
        # The privacy loss distribution of the same history beside its RDP curve: an (ε, δ)
        # allowance is then checked by the tightest route, as dptune calibrated the noise
        # (dptune.dpsgd_noise_multiplier uses every route for (ε, δ) allowances).
        return compose(spec).guarantee  # closed form (the same RDP curves) and PLD together
    except InvalidParameter:
        # Too little noise for a PLD grid: the RDP curve alone (a valid, looser bound).
        return total



class PLDAccountant(IAccountant):
    """An Opacus accountant (``opacus.accountants.IAccountant``) that reports dptune's ε by
    privacy loss distributions: the history of (noise multiplier, sample rate, steps) entries
    Opacus records is composed exactly, each entry a Poisson-subsampled Gaussian self-composed
    ``steps`` times (both add and remove directions, pessimistic rounding, truncation
    charged), entries of different rates or noise composed by FFT. For a one-entry history
    :meth:`get_epsilon` is the ``epsilon`` of ``dptune account dpsgd``; for any history it is
    the ``epsilon_pld`` of ``dptune account compose`` on the parts of :meth:`spec`.

    Use it in an existing loop with two lines::

        import dptune.opacus                                 # registers "dptune" with Opacus
        privacy_engine = PrivacyEngine(accountant="dptune")  # instead of PrivacyEngine()

    ``make_private_with_epsilon`` then calibrates the noise multiplier by this accountant (Opacus
    creates one by its registered name for its search), and checkpoints keep the history in the
    accountant's ``state_dict`` (mechanism ``"dptune"``).

    Refusals, never a silent fallback: ``neighbours`` other than add/remove-one (Opacus's
    Poisson sampling is accounted under add/remove-one; a replace-one subsampled PLD is not
    implemented) and a step whose ``noise_multiplier`` is not a finite positive number or whose
    ``sample_rate`` is outside (0, 1] (the step is refused before the optimizer applies it) raise
    :class:`dptune.InvalidParameter` naming the parameter; so do, at :meth:`get_epsilon`, a grid
    the PLD cannot hold (very small noise: names the part's ``sigma``, the noise multiplier) and a
    ``delta`` below what the PLD certifies (its charged numerical error; the RDP route of
    :meth:`guarantee` answers there when asked for explicitly).
    """

    def __init__(self, *, interval: float = 1e-4, neighbours: str = "add_remove"):
        super().__init__()
        if neighbours not in ("add_remove", "add-remove"):
            raise InvalidParameter(
                f"invalid parameter `neighbours` = {neighbours!r}: Opacus's Poisson-subsampled "
                "DP-SGD is accounted under add/remove-one only (a replace-one subsampled PLD "
                "is not implemented)"
            )
        # The grid width is checked by the core now, not at the first get_epsilon.
        compose(
            {"parts": [{"mechanism": "pure", "eps": 1.0}], "delta": 0.5, "neighbours": "add_remove"},
            interval=interval,
        )
        self.interval = float(interval)
        self._cached: Optional[Tuple[Tuple[Tuple[float, float, int], ...], Composition]] = None

    @classmethod
    def mechanism(cls) -> str:
        return "dptune"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Records one step (consecutive steps of the same noise and rate share one entry, as
        in Opacus's own accountants)."""
        z, q = float(noise_multiplier), float(sample_rate)
        if not (math.isfinite(z) and z > 0.0):
            raise InvalidParameter(
                f"invalid parameter `noise_multiplier` = {noise_multiplier!r}: must be a finite "
                "positive number (no noise gives no privacy guarantee)"
            )
        if not 0.0 < q <= 1.0:
            raise InvalidParameter(
                f"invalid parameter `sample_rate` = {sample_rate!r}: a Poisson rate must lie in (0, 1]"
            )
        if self.history and self.history[-1][0] == z and self.history[-1][1] == q:
            self.history[-1] = (z, q, self.history[-1][2] + 1)
        else:
            self.history.append((z, q, 1))

    def __len__(self) -> int:
        return len(self.history)

    def spec(self, delta: float) -> Dict[str, Any]:
        """The history as a composition in the form of ``dptune account compose FILE``."""
        return {
            "parts": [
                {"mechanism": "gaussian", "sigma": float(z), "q": float(q), "times": int(t)}
                for z, q, t in self.history
            ],
            "delta": delta,
            "neighbours": "add_remove",
        }

    def composition(self) -> Composition:
        """The composed history (cached until the history changes); :class:`dptune.InvalidParameter`
        if nothing was recorded."""
        key = tuple((float(z), float(q), int(t)) for z, q, t in self.history)
        if not key:
            raise InvalidParameter("invalid parameter `history` = []: nothing was recorded")
        if self._cached is None or self._cached[0] != key:
            # The spec's delta is only the default of the queries; every query passes its own.
            self._cached = (key, compose(self.spec(1e-5), interval=self.interval))
        return self._cached[1]

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """ε at ``delta`` of everything recorded, by the privacy loss distribution (0 before the
        first step). Options of other accountants (``alphas``, ``eps_error``, ...) do not apply
        and are refused."""
        unused = [*(f"positional argument {i + 2}" for i in range(len(args))), *kwargs]
        if unused:
            raise InvalidParameter(
                f"invalid parameter `{unused[0]}` = given: PLDAccountant.get_epsilon takes only delta"
            )
        if not self.history:
            return 0.0
        return self.composition().epsilon_pld(float(delta))

    def guarantee(self) -> Guarantee:
        """Everything recorded as a :class:`dptune.Guarantee` (the PLD together with the RDP
        curve: its ``epsilon`` is the minimum of both routes)."""
        return self.composition().guarantee


# Opacus creates accountants by name (PrivacyEngine(accountant=...), and get_noise_multiplier
# inside make_private_with_epsilon): "dptune" is this one from the moment dptune.opacus is
# imported. force=True replaces an earlier registration of this class (a module reload).
register_accountant("dptune", PLDAccountant, force=True)


def _zero_non_finite(module: nn.Module) -> None:
    """Sets to zero the per-example gradients of every example with a non-finite entry in any
    parameter. One record with huge (finite) features can overflow its logits and make its
    gradient NaN, which clipping does not bound (a NaN norm gives a NaN factor) and which would
    turn the whole noisy sum into NaN: an unbounded privacy loss. A zero gradient has norm 0,
    so each example still contributes at most the clip norm (the sensitivity is unchanged)."""
    grads = [p.grad_sample for p in module.parameters() if getattr(p, "grad_sample", None) is not None]
    if not grads:
        return
    bad = torch.zeros(grads[0].shape[0], dtype=torch.bool)
    for g in grads:
        bad |= ~torch.isfinite(g.reshape(g.shape[0], -1)).all(dim=1)
    if bad.any():
        for g in grads:
            g[bad] = 0.0


def _os_generator() -> torch.Generator:
    """A torch generator keyed by 63 bits from the operating system (never from a seed)."""
    return torch.Generator().manual_seed(secrets.randbits(63))


class OpacusCandidate:
    """A candidate for :func:`dptune.tune` that trains a PyTorch model with Opacus DP-SGD.

    Parameters
    ----------
    make_model : ``make_model(config) -> nn.Module`` (Opacus-compatible: no BatchNorm).
    make_optimizer : ``make_optimizer(parameters, config) -> torch.optim.Optimizer``.
    dataset : a map-style dataset of ``(features, label)`` pairs: the private data. Validated
        and split here (one coin per record, ``train_fraction`` to training).
    public_size : a public number of records (e.g. the size you would state in a paper); the
        training side's sampling rate is ``batch_size / (public_size · train_fraction)``. It
        need not be exact: a wrong value changes the batch sizes, never the guarantee.
    epochs, batch_size, max_grad_norm : defaults; a configuration may override each (they are
        public hyperparameters).
    classes : the number of classes (labels must be 0 .. classes − 1; checked before any run).
    seed : drives the split only (``None``: the operating system).

    ``__call__(config, allowance, seed)`` returns ``(model, noisy correct count)``; the model is
    a fresh ``make_model(config)`` holding the trained weights. ``allowance`` must be an RDP or
    (ε, δ) guarantee under add/remove-one neighbours (a DP-SGD curve from
    :func:`dptune.dpsgd_guarantee` is the natural one); zCDP is refused (subsampling has no zCDP
    amplification). Modules with buffers (BatchNorm) are refused: their statistics would leave
    un-noised. An example whose gradient is not finite contributes zero to its step.
    """

    def __init__(
        self,
        make_model: Callable[[Dict[str, Any]], nn.Module],
        make_optimizer: Callable[[Iterable[nn.Parameter], Dict[str, Any]], torch.optim.Optimizer],
        dataset: Dataset,
        *,
        public_size: int,
        classes: int,
        epochs: int = 1,
        batch_size: int = 64,
        max_grad_norm: float = 1.0,
        train_fraction: float = 0.8,
        seed: Union[None, int, SeededRun] = None,
    ):
        for name, f in (("make_model", make_model), ("make_optimizer", make_optimizer)):
            if not callable(f):
                raise InvalidParameter(f"invalid parameter `{name}` = {f!r}: must be callable")
        if isinstance(public_size, bool) or not isinstance(public_size, int) or public_size < 1:
            raise InvalidParameter(
                f"invalid parameter `public_size` = {public_size!r}: must be a positive integer"
            )
        if isinstance(classes, bool) or not isinstance(classes, int) or classes < 2:
            raise InvalidParameter(
                f"invalid parameter `classes` = {classes!r}: must be an integer >= 2"
            )
        if not 0.0 < train_fraction < 1.0:
            raise InvalidParameter(
                f"invalid parameter `train_fraction` = {train_fraction!r}: must be in (0, 1)"
            )
        self.make_model, self.make_optimizer = make_model, make_optimizer
        self.public_size, self.classes, self.train_fraction = public_size, classes, train_fraction
        self.defaults = {"epochs": epochs, "batch_size": batch_size, "max_grad_norm": max_grad_norm}
        self._schedule(self.defaults)  # the defaults are checked like any configuration
        self._validate(dataset)
        train, val = split_by_coin(len(dataset), train_fraction, seed=seed)
        self.train = Subset(dataset, train.tolist())
        self.val = Subset(dataset, val.tolist())

    def _validate(self, dataset: Dataset) -> None:
        """Every record is a (finite float tensor, label in 0..classes−1) pair of one shape: a
        :class:`dptune.DataError` otherwise, before any mechanism runs."""
        shape = None
        for i in range(len(dataset)):
            try:
                x, y = dataset[i]
            except (TypeError, ValueError):
                raise DataError(f"data error in `dataset` at record {i}: not a (features, label) pair") from None
            x = torch.as_tensor(x)
            if shape is None:
                shape = x.shape
            if x.shape != shape or not torch.isfinite(x.float()).all():
                raise DataError(
                    f"data error in `dataset` at record {i}: features must be finite and of one shape"
                )
            label = int(y)
            if label != y or not 0 <= label < self.classes:
                raise DataError(
                    f"data error in `dataset` at record {i}: label outside 0..{self.classes - 1}"
                )

    def _batches(self, q: float, steps: int) -> Iterable[Tuple[Any, Any]]:
        """`steps` Poisson batches of the training side at rate q (OS-keyed sampling); an empty
        training side gives `steps` empty batches, so the run is the same public schedule of
        noise-only steps instead of a failure."""
        if len(self.train) == 0:
            yield from [((), ())] * steps
            return
        for _ in range(steps // int(1 / q)):
            yield from DPDataLoader(self.train, sample_rate=q, generator=_os_generator())

    def _schedule(self, config: Dict[str, Any]) -> Tuple[float, int, int, float, int]:
        """(q, steps per epoch, epochs, max_grad_norm, batch_size) from public values only."""
        c = {**self.defaults, **{k: v for k, v in config.items() if k in self.defaults}}
        epochs, batch, clip = c["epochs"], c["batch_size"], c["max_grad_norm"]
        for name, v in (("epochs", epochs), ("batch_size", batch)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidParameter(f"invalid parameter `{name}` = {v!r}: must be an integer >= 1")
        if not (isinstance(clip, (int, float)) and 0 < clip < math.inf):
            raise InvalidParameter(
                f"invalid parameter `max_grad_norm` = {clip!r}: must be a finite positive number"
            )
        q = min(1.0, int(batch) / (self.public_size * self.train_fraction))
        return q, int(1 / q), int(epochs), float(clip), int(batch)

    def __call__(self, config: Dict[str, Any], allowance: Guarantee, seed: int):
        # Everything here up to training depends on public values only: a refusal is an
        # InvalidParameter (an unusable configuration), never a data-dependent failure.
        q, per_epoch, epochs, clip, batch = self._schedule(config)
        steps = epochs * per_epoch
        if allowance.rho is not None:
            # Subsampling has no zCDP amplification, and Opacus's record (an RDP curve) could
            # never be checked against a zCDP allowance: refused before any data is touched.
            raise InvalidParameter(
                "invalid parameter `allowance` = a zCDP guarantee: give an RDP allowance (e.g. "
                "dptune.dpsgd_guarantee(q, z, steps)) or an (epsilon, delta) one"
            )
        z = dpsgd_noise_multiplier(allowance, q, steps)
        score_eps = largest_pure_within(allowance)

        # The global torch generator is used for initialisation only, and restored afterwards
        # (its state after training would reflect how many draws the run made).
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model = self.make_model(config)
        if any(True for _ in model.buffers()):
            # Buffers (BatchNorm's running statistics) are computed from private batches
            # without noise and would be released with the weights.
            raise InvalidParameter(
                "invalid parameter `make_model` = a module with buffers (e.g. BatchNorm): their "
                "values are not privatised; use GroupNorm or LayerNorm"
            )
        module = GradSampleModule(model)
        optimizer = DPOptimizer(
            self.make_optimizer(module.parameters(), config),
            noise_multiplier=z,
            max_grad_norm=clip,
            expected_batch_size=batch,
            loss_reduction="mean",
            generator=_os_generator(),
            secure_mode=True,
        )
        accountant = RDPAccountant()
        optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=q))
        criterion = nn.CrossEntropyLoss()
        module.train()
        # PyTorch warns on every step that the input needs no gradient (true of every dataset,
        # so the warning says nothing about the data); it is silenced for the loop only.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            for x, y in self._batches(q, per_epoch * epochs):
                optimizer.zero_grad()
                if len(y) > 0:
                    criterion(module(x.float()), y.long()).backward()
                    _zero_non_finite(module)
                else:  # an empty Poisson batch: a step of noise only
                    for p in module.parameters():
                        p.grad_sample = torch.zeros((0, *p.shape))
                optimizer.step()
        spent = from_opacus(accountant)
        if not spent.fits_within(allowance):
            # The schedule is public, so this cannot depend on the data: a programming error.
            raise DptuneError(
                f"the Opacus accountant recorded {accountant.history}, which does not fit the "
                "run's allowance; nothing was released"
            )
        module.eval()
        with torch.no_grad():
            correct = 0
            for i in range(0, len(self.val), 512):
                xs, ys = zip(*(self.val[j] for j in range(i, min(i + 512, len(self.val)))))
                pred = module(torch.stack([torch.as_tensor(x) for x in xs]).float()).argmax(1)
                correct += int((pred == torch.as_tensor(ys)).sum())
        score, _ = noisy_count(correct, score_eps)
        # Only the weights leave, in a fresh module: Opacus's training state (per-example
        # gradients, the un-noised clipped sum `summed_grad`) stays behind with the wrapper.
        released = self.make_model(config)
        released.load_state_dict(module._module.state_dict())
        return released, score
