"""dptune.opacus.PLDAccountant: dptune's PLD epsilon inside an unchanged Opacus training loop
(issue 14, deliverable 5), with real torch (CPU) and Opacus."""

import warnings

import pytest
import torch
from opacus import PrivacyEngine
from opacus.accountants import IAccountant, RDPAccountant, create_accountant
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import dptune
from dptune.accounting import compose, dpsgd
from dptune.opacus import PLDAccountant

DELTA = 1e-5


def data(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    x = torch.randn(n, 4, generator=g) * 0.5 + (2 * y[:, None] - 1).float()
    return TensorDataset(x, y)


def private(accountant, noise_multiplier=1.1, batch_size=8):
    """The Opacus quick start on a tiny model; ``accountant`` is the only dptune-specific part."""
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(data(), batch_size=batch_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Secure RNG turned off" (a test, not a release)
        engine = PrivacyEngine(accountant=accountant)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader,
        noise_multiplier=noise_multiplier, max_grad_norm=1.0,
    )
    return engine, model, optimizer, loader


def train(model, optimizer, loader, epochs=1):
    criterion = nn.CrossEntropyLoss()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()


def test_registered_with_opacus_by_name():
    assert isinstance(create_accountant("dptune"), PLDAccountant)
    assert issubclass(PLDAccountant, IAccountant)
    assert PLDAccountant.mechanism() == "dptune"
    engine, *_ = private("dptune")
    assert isinstance(engine.accountant, PLDAccountant)
    assert engine.get_epsilon(DELTA) == 0.0  # nothing spent yet


def test_a_training_loop_reports_dptunes_epsilon():
    engine, model, optimizer, loader = private("dptune")
    train(model, optimizer, loader, epochs=2)
    history = engine.accountant.history
    assert len(history) == 1
    z, q, steps = history[0]
    assert (z, q, steps) == (1.1, 1 / 8, 16)
    eps = engine.get_epsilon(DELTA)
    # Exactly `dptune account dpsgd`'s epsilon for the same (q, z, steps) ...
    assert eps == dpsgd(q, z, steps, DELTA)["epsilon"]
    # ... and no larger than Opacus's RDP accountant on the same history (strictly smaller here).
    rdp = RDPAccountant()
    rdp.history = list(history)
    assert eps < rdp.get_epsilon(DELTA)
    assert len(engine.accountant) == 1


def test_a_heterogeneous_history_is_composed_exactly():
    engine, model, optimizer, loader = private("dptune", noise_multiplier=1.0)
    train(model, optimizer, loader)
    optimizer.noise_multiplier = 2.0  # a noise schedule: later steps noisier
    train(model, optimizer, loader)
    acc = engine.accountant
    assert acc.history == [(1.0, 1 / 8, 8), (2.0, 1 / 8, 8)]
    eps = engine.get_epsilon(DELTA)
    parts = [{"mechanism": "gaussian", "sigma": 1.0, "q": 0.125, "times": 8},
             {"mechanism": "gaussian", "sigma": 2.0, "q": 0.125, "times": 8}]
    spec = {"parts": parts, "delta": DELTA, "neighbours": "add_remove"}
    assert acc.spec(DELTA) == spec
    assert eps == compose(spec).epsilon_pld()
    # Not the first entry alone, nor all 16 steps at either noise: the composition is exact.
    assert dpsgd(0.125, 2.0, 16, DELTA)["epsilon"] < eps < dpsgd(0.125, 1.0, 16, DELTA)["epsilon"]
    assert eps > dpsgd(0.125, 1.0, 8, DELTA)["epsilon"]
    # Several rates too (stepped directly, as Opacus's hook does).
    mixed = PLDAccountant()
    for q, z, t in [(0.01, 1.0, 300), (0.02, 0.8, 100), (0.01, 1.0, 50)]:
        for _ in range(t):
            mixed.step(noise_multiplier=z, sample_rate=q)
    assert mixed.history == [(1.0, 0.01, 300), (0.8, 0.02, 100), (1.0, 0.01, 50)]
    want = compose(mixed.spec(DELTA))
    assert mixed.get_epsilon(DELTA) == want.epsilon_pld()
    rdp = RDPAccountant()
    rdp.history = list(mixed.history)
    assert mixed.get_epsilon(DELTA) < rdp.get_epsilon(DELTA)
    # The guarantee holds both routes; its epsilon is the better one.
    assert mixed.guarantee().epsilon(DELTA) <= mixed.get_epsilon(DELTA)


def test_the_history_survives_a_checkpoint(tmp_path):
    engine, model, optimizer, loader = private("dptune")
    train(model, optimizer, loader)
    path = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=path, module=model, optimizer=optimizer)
    fresh, model2, optimizer2, _ = private("dptune")
    fresh.load_checkpoint(path=path, module=model2, optimizer=optimizer2)
    assert fresh.accountant.history == engine.accountant.history
    assert fresh.get_epsilon(DELTA) == engine.get_epsilon(DELTA)
    # Opacus refuses another mechanism's state, as for its own accountants.
    with pytest.raises(ValueError):
        PLDAccountant().load_state_dict(RDPAccountant().state_dict())


def test_make_private_with_epsilon_calibrates_by_the_pld():
    def noise(accountant):
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine = PrivacyEngine(accountant=accountant)
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=DataLoader(data(), batch_size=8), target_epsilon=2.0,
            target_delta=DELTA, epochs=3, max_grad_norm=1.0,
        )
        train(model, optimizer, loader, epochs=3)
        return optimizer.noise_multiplier, engine.get_epsilon(DELTA)

    z_pld, eps_pld = noise("dptune")
    z_rdp, _ = noise("rdp")
    # The same target buys less noise, and the run stays within the target by dptune's count.
    assert z_pld < z_rdp
    assert eps_pld <= 2.0


def test_what_the_pld_cannot_represent_is_refused():
    with pytest.raises(dptune.InvalidParameter, match="`neighbours`"):
        PLDAccountant(neighbours="replace_one")
    with pytest.raises(dptune.InvalidParameter, match="`interval`"):
        PLDAccountant(interval=5.0)
    acc = PLDAccountant()
    with pytest.raises(dptune.InvalidParameter, match="`noise_multiplier`"):
        acc.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.raises(dptune.InvalidParameter, match="`sample_rate`"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)
    assert acc.history == []  # nothing recorded by a refused step
    acc.step(noise_multiplier=1.0, sample_rate=0.1)
    with pytest.raises(dptune.InvalidParameter, match="`alphas`"):
        acc.get_epsilon(DELTA, alphas=[2.0, 4.0])
    # A delta below what the PLD certifies (its charged numerical error, about 1.7e-9 for 1000
    # steps on the default grid) names `delta`; the guarantee's RDP route still answers there,
    # but only when asked for explicitly.
    long = PLDAccountant()
    long.history = [(1.0, 0.01, 1000)]
    with pytest.raises(dptune.InvalidParameter, match="`delta`"):
        long.get_epsilon(1e-10)
    assert 0 < long.guarantee().epsilon(1e-10) < float("inf")
    # Noise so small that the loss grid would not fit: an error naming the part's sigma (the
    # noise multiplier), not a number.
    tiny = PLDAccountant()
    tiny.history = [(0.01, 0.5, 10)]
    with pytest.raises(dptune.InvalidParameter, match="`sigma` = 0.01"):
        tiny.get_epsilon(DELTA)


def test_a_refused_step_leaves_the_model_unchanged():
    # noise_multiplier 0 (no privacy): Opacus's hook calls step() after adding the (zero)
    # noise and before the update, so the refusal stops the update.
    engine, model, optimizer, loader = private("dptune", noise_multiplier=0.0)
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(dptune.InvalidParameter, match="`noise_multiplier`"):
        train(model, optimizer, loader)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert engine.accountant.history == []
