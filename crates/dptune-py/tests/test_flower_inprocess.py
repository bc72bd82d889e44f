"""The DP-HYPE protocol code shared by the Flower apps, run in process (fast)."""

import numpy as np
import pytest

import dptune
from dptune.flower import RoundConfig, run_in_process
from dptune.flower._protocol import local_scores

RC = {"candidates": 20, "k": 3, "epsilon": 1.0, "delta": 1e-5, "min-nodes": 5,
      "min-survivors": 3, "seed": 7}
NODES = [{"partition-id": i} for i in range(5)]
RELEASED = {"selected", "survivors", "colluders", "epsilon", "delta", "neighbours", "guarantee",
            "assumption",
            # Functions of the above and of public inputs (issue 15, item 8): the selected
            # index's declared configuration, the target and why epsilon differs from it.
            "selected_configuration", "candidates", "target_epsilon", "epsilon_note"}


def test_round_releases_an_index_and_the_guarantee_for_the_survivors():
    full = run_in_process(RC, NODES)
    assert set(full) == RELEASED
    # Only the number of survivors is released, not which clients survived.
    assert full["survivors"] == 5 and 0 <= full["selected"] < 20
    assert full["neighbours"] == "replace_one"
    assert full["colluders"] == 0 and "at most 0 colluding" in full["assumption"]
    # The noise is sized for t = 3 survivors: ε at 3 survivors is the requested one; more
    # survivors add noise, so ε shrinks.
    three = run_in_process(RC, NODES, drop_after={3: 1, 4: 2})
    assert three["survivors"] == 3
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
    # c must leave an honest survivor (t = 3), be a count, and satisfy 2·threshold > n + c for
    # secure aggregation against a server colluding with c clients (threshold 3 of n = 5).
    for c in (3, -1, 1):
        with pytest.raises(dptune.InvalidParameter, match="colluders"):
            run_in_process({**RC, "colluders": c}, NODES)


# Local evaluations that fail on client 2's data, each in a different way (e99dd64: the exception
# escaped, i.e. a dropout in a deployment, so participation depended on the data).
def _raises(candidates, context):
    if int(context.node_config["partition-id"]) == 2:
        raise ValueError("a data-dependent failure")
    return np.linspace(0.0, 1.0, candidates)


def _wrong_shape(candidates, context):
    n = candidates - 1 if int(context.node_config["partition-id"]) == 2 else candidates
    return np.linspace(0.0, 1.0, n)


def _nan(candidates, context):
    s = np.linspace(0.0, 1.0, candidates)
    if int(context.node_config["partition-id"]) == 2:
        s[:] = np.nan
    return s


def _clean(candidates, context):
    return np.linspace(0.0, 1.0, candidates)


@pytest.mark.parametrize("fn", ["_raises", "_wrong_shape", "_nan"])
def test_a_failed_local_evaluation_still_votes(fn):
    rc = {**RC, "evaluate-fn": f"{__name__}:{fn}"}
    clean = run_in_process({**RC, "evaluate-fn": f"{__name__}:_clean"}, NODES)
    got = run_in_process(rc, NODES)
    # Client 2 is still a survivor, so every public field equals the clean run's.
    for key in RELEASED - {"selected"}:
        assert got[key] == clean[key], key
    assert got["survivors"] == 5


def test_the_fallback_vote_is_k_random_candidates_independent_of_the_data():
    cfg = RoundConfig.from_run_config({**RC, "candidates": 10})

    def vote(seed, fn):
        c = RoundConfig.from_run_config({**RC, "candidates": 10, "seed": seed})
        return dptune.top_k_vote(local_scores(c, fn, None, 2), c.k)

    def broken(candidates, context):
        raise RuntimeError("boom")

    def also_broken(candidates, context):
        return "not scores"

    for seed in range(5):
        v = vote(seed, broken)
        assert v.sum() == cfg.k and set(v.tolist()) <= {0, 1}
        # Which failure it was does not matter: the vote depends on (seed, partition) only.
        assert (v == vote(seed, also_broken)).all()
    # Uniform over candidates: 3000 seeded fallbacks of k = 3 of p = 10; each count is within
    # 5 standard errors (sqrt(3000 * 0.3 * 0.7) = 25.1) of 900. Fixed seeds; a false failure
    # has probability < 1e-5.
    counts = sum(vote(seed, broken).astype(np.int64) for seed in range(3000))
    assert np.all(np.abs(counts - 900) < 126), counts
    # The first-k rule (what a tie-break of all -inf would give) is rejected by the same check.
    first_k = np.zeros(10, dtype=np.int64)
    first_k[:3] = 3000
    assert not np.all(np.abs(first_k - 900) < 126)
    # Without a seed the draw comes from the operating system, still exactly k ones.
    unseeded = RoundConfig.from_run_config({**RC, "candidates": 10, "seed": -1})
    assert dptune.top_k_vote(local_scores(unseeded, broken, None, 2), 3).sum() == 3


def test_colluders_resize_the_noise_and_are_stated():
    # Issue 13: t = 80, 100 survivors, k = 5, δ = 1e-5, target ε = 1. With noise sized for
    # honest clients the release claims ε = 0.885; against 40 colluders the same shares (μ/80
    # each, only 60 honest) give ε >= 1.17.
    honest = dptune.NoisePlan.calibrate(5, 1.0, 1e-5, 80)
    assert honest.colluders == 0
    _, claimed = honest.guarantee(100, 1e-5)
    assert abs(claimed - 0.885) < 5e-4
    same_shares = dptune.NoisePlan.with_variance(
        5, honest.total_variance * 40 / 80, 80, colluders=40
    )
    _, truth = same_shares.guarantee(100, 1e-5)
    assert 1.17 <= truth < 1.18
    sized = dptune.NoisePlan.calibrate(5, 1.0, 1e-5, 80, colluders=40)
    assert sized.guarantee(80, 1e-5)[1] <= 1.0
    # The Flower round: colluders from the run config, stated in the release (t = 4 of 5: the
    # threshold 4 resists a server colluding with 2 clients, 2·4 > 5 + 2).
    rc = {**RC, "min-survivors": 4, "colluders": 2}
    r = run_in_process(rc, NODES)
    assert r["colluders"] == 2 and "at most 2 colluding" in r["assumption"]
    plan = RoundConfig.from_run_config(rc).plan()
    assert r["epsilon"] == plan.guarantee(5, 1e-5)[1] <= 1.0


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 8 (residue): a slow evaluation must not become a dropout through timing.

def _slow(candidates, context):
    import time

    if int(context.node_config["partition-id"]) == 2:
        time.sleep(3.0)
    return np.linspace(0.0, 1.0, candidates)


def test_a_late_evaluation_votes_the_data_free_fallback_by_the_deadline():
    """Client 2's evaluation takes 3 s; with eval-deadline 0.3 s it is abandoned, the client
    votes the same data-free vote as a client whose evaluation raised (seeded: a function of
    (seed, partition) only), within well under the 3 s, and it stays a survivor. The check
    fails without the deadline (the call would take 3 s)."""
    import time

    cfg = RoundConfig.from_run_config({**RC, "eval-deadline": 0.3})
    start = time.monotonic()
    late = local_scores(cfg, _slow, _Ctx2(2), 2)
    took = time.monotonic() - start
    assert 0.3 <= took < 1.5, took

    def broken(candidates, context):
        raise RuntimeError("boom")

    raised = local_scores(cfg, broken, _Ctx2(2), 2)
    assert np.array_equal(late, raised)
    assert dptune.top_k_vote(late, cfg.k).sum() == cfg.k
    # A client within the deadline votes its own scores.
    assert np.array_equal(local_scores(cfg, _slow, _Ctx2(1), 1), np.linspace(0.0, 1.0, 20))
    # The whole round: client 2 is a survivor, every public field as in the clean run.
    rc = {**RC, "eval-deadline": 0.3, "evaluate-fn": f"{__name__}:_slow"}
    got = run_in_process(rc, NODES)
    clean = run_in_process({**RC, "evaluate-fn": f"{__name__}:_clean"}, NODES)
    assert got["survivors"] == 5
    for key in RELEASED - {"selected"}:
        assert got[key] == clean[key], key


def test_padding_answers_at_the_deadline_and_the_deadline_is_validated():
    import time

    cfg = RoundConfig.from_run_config({**RC, "eval-deadline": 0.4, "pad-to-deadline": True})
    start = time.monotonic()
    local_scores(cfg, _clean, None, 0)
    assert time.monotonic() - start >= 0.4
    # Default: half the stage timeout.
    assert RoundConfig.from_run_config({**RC, "stage-timeout": 30.0}).deadline == 15.0
    for bad in (0.0, -1.0, 60.0, 100.0, float("nan")):
        with pytest.raises(dptune.InvalidParameter, match="`eval-deadline`"):
            RoundConfig.from_run_config({**RC, "eval-deadline": bad})
    with pytest.raises(dptune.InvalidParameter, match="`pad-to-deadline`"):
        RoundConfig.from_run_config({**RC, "pad-to-deadline": "yes"})


class _Ctx2:
    def __init__(self, part):
        self.node_config = {"partition-id": part}
