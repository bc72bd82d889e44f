"""The DP-HYPE protocol code shared by the Flower apps, run in process (fast)."""

import pytest

import dptune
from dptune.flower import RoundConfig, run_in_process

RC = {"candidates": 20, "k": 3, "epsilon": 1.0, "delta": 1e-5, "min-nodes": 5,
      "min-survivors": 3, "seed": 7}
NODES = [{"partition-id": i} for i in range(5)]


def test_round_releases_an_index_and_the_guarantee_for_the_survivors():
    full = run_in_process(RC, NODES)
    assert full["survivors"] == [0, 1, 2, 3, 4] and 0 <= full["selected"] < 20
    assert full["neighbours"] == "replace-one"
    # The noise is sized for t = 3 survivors: ε at 3 survivors is the requested one; more
    # survivors add noise, so ε shrinks.
    three = run_in_process(RC, NODES, drop_after={3: 1, 4: 2})
    assert three["survivors"] == [0, 1, 2]
    assert three["epsilon"] <= 1.0 and full["epsilon"] < three["epsilon"]
    assert run_in_process(RC, NODES) == full  # seeded: reproducible


def test_below_the_survivor_threshold_nothing_is_released():
    with pytest.raises(dptune.NoRelease):
        run_in_process(RC, NODES, drop_after={1: 3, 3: 1, 4: 2})


def test_run_config_errors():
    with pytest.raises(dptune.InvalidParameter, match="`k`"):
        RoundConfig.from_run_config({**RC, "k": None})
    with pytest.raises(dptune.InvalidParameter):
        run_in_process({**RC, "k": 0}, NODES)
    with pytest.raises(dptune.InvalidParameter, match="evaluate-fn"):
        run_in_process({**RC, "evaluate-fn": "nonsense"}, NODES)
