"""dptune.opacus: Opacus DP-SGD runs calibrated, checked and scored by dptune (issue 15, item 4)."""

import runpy
from pathlib import Path

import pytest
import torch
from opacus.accountants import RDPAccountant
from torch import nn
from torch.utils.data import TensorDataset

import dptune
from dptune.opacus import OpacusCandidate, from_opacus

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "opacus" / "mnist_cnn.py"


def toy(n=400, seed=0):
    """Two Gaussian blobs in 4-D, labels 0/1."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    x = torch.randn(n, 4, generator=g) * 0.5 + (2 * y[:, None] - 1).float()
    return TensorDataset(x, y)


def make_model(config):
    return nn.Linear(4, 2)


def make_optimizer(params, config):
    return torch.optim.SGD(params, lr=config.get("lr", 0.5))


def test_from_opacus_composes_the_history():
    acc = RDPAccountant()
    acc.history = [(1.1, 0.01, 300), (0.9, 0.02, 100)]
    want = dptune.dpsgd_guarantee(0.01, 1.1, 300).compose(dptune.dpsgd_guarantee(0.02, 0.9, 100))
    got = dptune.Guarantee.from_opacus(acc)
    # Both routes of the same history: the RDP curves and the privacy loss distribution; the
    # epsilon is the smaller (here the PLD's, as PLDAccountant reports it).
    pld = dptune.opacus.PLDAccountant()
    pld.history = list(acc.history)
    assert got.epsilon(1e-5) == min(want.epsilon(1e-5), pld.get_epsilon(1e-5))
    assert got.epsilon(1e-5) < want.epsilon(1e-5)
    assert from_opacus(acc).epsilon(1e-5) == got.epsilon(1e-5)
    # The composition is not the first entry alone (a dropped entry would be caught).
    assert got.epsilon(1e-5) > dptune.dpsgd_guarantee(0.01, 1.1, 300).epsilon(1e-5)
    for bad in (object(), RDPAccountant()):
        with pytest.raises(dptune.InvalidParameter):
            from_opacus(bad)


def test_a_run_trains_within_its_allowance_and_releases_only_weights():
    q, steps = 32 / (400 * 0.8), 2 * int(1 / (32 / (400 * 0.8)))
    allowance = dptune.dpsgd_guarantee(q, 1.0, steps)
    run = OpacusCandidate(make_model, make_optimizer, toy(), public_size=400, classes=2,
                          epochs=2, batch_size=32)
    model, score = run({"lr": 0.5}, allowance, seed=1)
    assert isinstance(model, nn.Linear)
    # The released model carries no per-example gradients (raw private data) and no gradient.
    for p in model.parameters():
        assert p.grad is None
        assert not hasattr(p, "grad_sample") and not hasattr(p, "summed_grad")
    # It learned: the blobs are separable, so the noisy count of correct validation
    # predictions is most of the ~80 validation records (Laplace noise at eps ~ 0.2 has scale 5).
    assert score > 0.6 * len(run.val)


def test_the_schedule_and_noise_do_not_depend_on_the_private_size(monkeypatch):
    """The Poisson rate, steps and noise multiplier come from public values: the same on D and
    on D minus one record (what Opacus's accountant recorded is compared)."""
    recorded = []
    real = RDPAccountant.get_optimizer_hook_fn

    def spy(self, sample_rate):
        recorded.append(self)
        return real(self, sample_rate=sample_rate)

    monkeypatch.setattr(RDPAccountant, "get_optimizer_hook_fn", spy)
    allowance = dptune.dpsgd_guarantee(0.1, 1.2, 20)
    data = toy(200)
    for d in (data, TensorDataset(*data[:-1])):
        run = OpacusCandidate(make_model, make_optimizer, d, public_size=250, classes=2,
                              epochs=2, batch_size=20, seed=5)
        run({}, allowance, seed=0)
    a, b = (acc.history for acc in recorded)
    assert a == b and a[0][1] == 20 / (250 * 0.8)
    assert a[0][0] == dptune.dpsgd_noise_multiplier(allowance, 0.1, 20)


def test_an_allowance_without_room_for_the_schedule_is_an_unusable_configuration():
    run = OpacusCandidate(make_model, make_optimizer, toy(100), public_size=100, classes=2,
                          epochs=1, batch_size=10)
    with pytest.raises(dptune.InvalidParameter):
        run({}, dptune.Guarantee.pure(1.0), seed=0)
    with pytest.raises(dptune.InvalidParameter):
        run({"epochs": 0}, dptune.dpsgd_guarantee(0.1, 1.0, 10), seed=0)


def test_bad_data_is_a_data_error_before_anything_runs():
    x, y = toy(50).tensors
    x_nan = x.clone()
    x_nan[3, 1] = float("nan")
    for d in (TensorDataset(x_nan, y), TensorDataset(x, y + 5)):
        with pytest.raises(dptune.DataError):
            OpacusCandidate(make_model, make_optimizer, d, public_size=50, classes=2)


def test_the_example_prints_the_whole_tunings_epsilon(capsys):
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    ns = runpy.run_path(str(EXAMPLE))  # the module's constants, without running the tuning
    want = dptune.tuning_cost(ns["PER_RUN"], repeats=ns["REPEATS"]).epsilon(1e-5)
    eps = float(out.split("eps = ")[1].split()[0])
    assert eps == pytest.approx(want, abs=5e-4)
    if "test accuracy" in out:
        # A small CNN at this budget: far above chance (0.1) on the public test split.
        assert float(out.split("test accuracy: ")[1].split()[0]) > 0.5


def test_empty_poisson_batches_are_steps_of_noise_only():
    """With 12 records and a public size of 400, most Poisson batches are empty; each is still
    a step (noise only), so the run completes and its accountant records every step."""
    allowance = dptune.dpsgd_guarantee(2 / 320, 1.0, 160)
    run = OpacusCandidate(make_model, make_optimizer, toy(12), public_size=400, classes=2,
                          epochs=1, batch_size=2, seed=0)
    model, score = run({}, allowance, seed=0)
    assert isinstance(model, nn.Linear) and isinstance(score, int)


def test_a_record_that_overflows_its_gradient_does_not_poison_the_model():
    """One finite but huge record makes its logits overflow and its per-example gradient NaN;
    that example contributes zero, so the released weights stay finite (before the fix, the
    noisy sum and every weight became NaN: a planted record was detectable)."""
    x, y = toy(200).tensors
    x = x.clone()
    x[0] = 3e38
    run = OpacusCandidate(make_model, make_optimizer, TensorDataset(x, y), public_size=200,
                          classes=2, epochs=1, batch_size=50, train_fraction=0.99, seed=1)
    allowance = dptune.dpsgd_guarantee(50 / (200 * 0.99), 1.0, int(1 / (50 / (200 * 0.99))))
    for _ in range(3):
        model, _ = run({"lr": 1.0}, allowance, seed=0)
        assert all(torch.isfinite(p).all() for p in model.parameters())


def test_modules_with_buffers_and_zcdp_allowances_are_refused_before_training():
    bn = lambda config: nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2, affine=False))
    run = OpacusCandidate(bn, make_optimizer, toy(50), public_size=50, classes=2)
    with pytest.raises(dptune.InvalidParameter, match="buffers"):
        run({}, dptune.dpsgd_guarantee(1.0, 1.0, 1), seed=0)
    run = OpacusCandidate(make_model, make_optimizer, toy(50), public_size=50, classes=2)
    with pytest.raises(dptune.InvalidParameter, match="zCDP"):
        run({}, dptune.Guarantee.zcdp(0.5), seed=0)


def test_an_empty_training_side_runs_the_public_schedule_of_noise_only_steps():
    run = OpacusCandidate(make_model, make_optimizer, toy(3), public_size=100, classes=2,
                          epochs=1, batch_size=10, train_fraction=0.01, seed=0)
    run.train = torch.utils.data.Subset(run.train.dataset, [])  # every coin went to validation
    model, _ = run({}, dptune.dpsgd_guarantee(1.0, 1.0, 1), seed=0)
    assert isinstance(model, nn.Linear)
