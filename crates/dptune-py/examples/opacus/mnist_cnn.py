"""Privately tune a small CNN trained with Opacus on the bundled MNIST-5k.

Each run trains with Opacus's DP-SGD at the noise multiplier dptune calibrates for the run's
allowance (a DP-SGD curve), and releases a noisy validation count; dptune's Papernot-Steinke
tuner picks the best run. The printed epsilon is the cost of the whole tuning: every run's
training and score and the selection (the number of runs is random and not printed). The test
split (the last 100 images of each digit) is public and never seen by the tuning.

    pip install dptune[torch]
    python crates/dptune-py/examples/opacus/mnist_cnn.py      # about 2 minutes on 2 CPU cores
"""

import gzip
from pathlib import Path
from typing import Any, Dict, Iterable, Tuple

import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset

import dptune
from dptune.opacus import OpacusCandidate

ROOT = Path(__file__).resolve().parents[4]
EPOCHS, BATCH, PUBLIC_SIZE = 2, 128, 4000


def load_mnist5k() -> Tuple[TensorDataset, Tuple[torch.Tensor, torch.Tensor]]:
    """(private training images, public test images): 500 per digit, the last 100 of each
    digit are the test split; pixels scaled by their public range [0, 255]."""
    with gzip.open(ROOT / "crates/dptune/data/mnist5k.csv.gz", "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    X = torch.tensor(data[:, :784] / 255.0).reshape(-1, 1, 28, 28)
    y = torch.tensor(data[:, 784], dtype=torch.long)
    test = torch.tensor([i % 500 >= 400 for i in range(len(y))])
    return TensorDataset(X[~test], y[~test]), (X[test], y[test])


def make_model(config: Dict[str, Any]) -> nn.Module:
    c = config["channels"]
    return nn.Sequential(
        nn.Conv2d(1, c, 5, stride=2), nn.GroupNorm(1, c), nn.ReLU(),   # 28 -> 12
        nn.Conv2d(c, 2 * c, 3, stride=2), nn.ReLU(),                   # 12 -> 5
        nn.Flatten(), nn.Linear(2 * c * 25, 10),
    )


def make_optimizer(params: Iterable[nn.Parameter], config: Dict[str, Any]) -> torch.optim.Optimizer:
    return torch.optim.SGD(params, lr=config["lr"], momentum=0.9)


PER_RUN_Q = BATCH / (PUBLIC_SIZE * 0.8)
PER_RUN = dptune.dpsgd_guarantee(PER_RUN_Q, 1.0, EPOCHS * int(1 / PER_RUN_Q))  # each run's allowance
REPEATS = dptune.Repeats.poisson(4.0)

if __name__ == "__main__":
    torch.set_num_threads(2)
    train, (X_test, y_test) = load_mnist5k()
    run = OpacusCandidate(make_model, make_optimizer, train, public_size=PUBLIC_SIZE, classes=10,
                          epochs=EPOCHS, batch_size=BATCH, max_grad_norm=1.0)
    best = dptune.tune(run, {"lr": ("log-uniform", 0.01, 0.5), "channels": [4, 8]},
                       per_run=PER_RUN, method=dptune.Method.papernot_steinke(REPEATS))
    delta = 1e-5
    if best.model is not None:  # released (None: the tuning ended without a run)
        with torch.no_grad():
            acc = (best.model(X_test).argmax(1) == y_test).float().mean().item()
        print(f"best configuration: {best.config}")
        print(f"test accuracy: {acc:.3f}")
    else:  # a Poisson number of runs is 0 with probability e^-4 = 1.8 %
        print("no run released (the random number of runs was 0)")
    print(f"whole tuning: eps = {best.guarantee.epsilon(delta):.3f} at delta = {delta:g}")
