"""The Python API on small inputs: equality with the Rust core, errors, bad input."""

import math
import pickle
import sys

import numpy as np
import pytest

import dptune

SCORES = np.array([0.1, 0.5, 0.4, 0.9, 0.2, 0.85, 0.3, 0.7])

# Recorded with the Rust core's CLI (same seeds, same scores):
#   dptune select --json --mechanism M --epsilon 2 --sensitivity 0.1 [--delta 1e-6] --seed S
CLI_GOLDEN = {
    "exponential": [5, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 5],
    "gumbel": [5, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 5],
    "laplace": [5, 5, 3, 5, 3, 3, 3, 3, 5, 3, 5, 5],
    "permute-and-flip": [5, 3, 3, 3, 3, 3, 2, 3, 3, 3, 3, 7],
    "gaussian": [5, 1, 6, 3, 1, 5, 6, 5, 5, 0, 7, 3],
}


@pytest.mark.parametrize("mechanism", sorted(CLI_GOLDEN))
def test_selection_equals_the_rust_cli_for_the_same_seed(mechanism):
    delta = 1e-6 if mechanism == "gaussian" else None
    got = [
        dptune.select(SCORES, 2.0, mechanism=mechanism, sensitivity=0.1, delta=delta, seed=s)[0]
        for s in range(1, 13)
    ]
    assert got == CLI_GOLDEN[mechanism]


def test_selection_guarantee_and_probabilities():
    i, g = dptune.select(SCORES, 1.0, seed=3)
    assert 0 <= i < len(SCORES)
    assert g.pure_epsilon == 1.0 and g.rho == 0.125 and g.neighbours == "add_remove"
    diag = dptune.nonprivate_selection_probabilities(SCORES, 1.0, sensitivity=0.1)
    p = diag.value
    assert isinstance(p, np.ndarray) and p.dtype == np.float64
    assert abs(p.sum() - 1.0) < 1e-12 and p.argmax() == 3
    # R = 2Δ = 0.2, ε = 1: p ∝ exp(5·u)
    w = np.exp(5 * SCORES)
    assert np.allclose(p, w / w.sum(), rtol=1e-9)
    assert dptune.selection_cost(1.0) == g
    # The top-k allowance is the total over its k rounds (0.5 each here).
    assert dptune.selection_cost(1.5, mechanism="top-k", k=3).pure_epsilon == 1.5


def test_top_k_and_minimize():
    idx, g = dptune.top_k(SCORES, 150.0, 3, sensitivity=0.001, seed=1)  # 50 per round
    assert idx.dtype == np.int64 and list(idx) == [3, 5, 7]
    assert g.pure_epsilon == 150.0
    i, _ = dptune.select(SCORES, 50.0, sensitivity=0.001, goal="minimize", seed=1)
    assert i == 0


def test_accounting_functions():
    assert abs(dptune.gaussian_epsilon(1.0, 1e-5) - 4.377178095681227) < 1e-9
    s = dptune.gaussian_sigma(1.0, 1e-5)
    assert dptune.gaussian_epsilon(s, 1e-5) <= 1.0 + 1e-9
    assert dptune.gaussian_rho(2.0) == 0.125
    e = dptune.dpsgd_epsilon(0.01, 1.1, 1000, 1e-5)
    assert 0.5 < e < 2.0
    assert dptune.dpsgd_guarantee(0.01, 1.1, 1000).epsilon(1e-5) <= e + 1e-9
    assert dptune.zcdp_epsilon(0.5, 1e-6) > 0 and dptune.pure_to_zcdp(1.0) == 0.5
    rho = dptune.zcdp_rho_for(1.0, 1e-6)
    assert dptune.zcdp_epsilon(rho, 1e-6) <= 1.0 + 1e-12
    g = dptune.Guarantee.zcdp(0.1).compose(dptune.Guarantee.zcdp(0.2))
    assert abs(g.rho - 0.3) < 1e-12
    assert dptune.Guarantee.pure(1.0).to_replace().neighbours.startswith("replace")


def test_repeat_and_select_costs():
    run = dptune.Guarantee.pure(0.5)
    geo = dptune.Repeats.geometric(0.1)
    assert abs(geo.mean - 10.0) < 1e-9
    assert dptune.tuning_cost(run, repeats=geo).pure_epsilon == 1.5
    assert dptune.tuning_cost(run, method="threshold", gamma=0.1, threshold=0.0).pure_epsilon == 1.0
    assert dptune.tuning_cost(run, method="exhaustive", runs=10).pure_epsilon == 5.0
    per = dptune.calibrate(dptune.Guarantee.pure(1.5), repeats=dptune.Repeats.geometric(0.05),
                           per_run="pure")
    assert abs(per.pure_epsilon - 0.5) < 1e-8
    with pytest.raises(dptune.NoRelease, match="selection overhead"):
        dptune.calibrate(dptune.Guarantee.approx(0.001, 1e-5),
                         repeats=dptune.Repeats.tnb_with_mean(0.0, 10.0))


def test_errors_carry_the_rust_message_and_a_specific_class():
    assert issubclass(dptune.InvalidParameter, dptune.DptuneError)
    assert issubclass(dptune.BudgetExceeded, dptune.DptuneError)
    assert issubclass(dptune.NoRelease, dptune.DptuneError)
    with pytest.raises(dptune.InvalidParameter, match=r"invalid parameter `epsilon` = -1: must be finite and > 0"):
        dptune.select(SCORES, -1.0)
    with pytest.raises(dptune.DataError, match="`scores`"):
        dptune.select(np.array([1.0, np.nan]), 1.0)
    with pytest.raises(dptune.InvalidParameter, match="`scores`"):
        dptune.select(np.array([]), 1.0)
    with pytest.raises(dptune.InvalidParameter, match="`delta`"):
        dptune.select(SCORES, 1.0, mechanism="gaussian")
    with pytest.raises(dptune.InvalidParameter, match="sparse"):
        dptune.select(SCORES, 1.0, mechanism="sparse-vector")
    with pytest.raises(dptune.NoRelease, match="survivors"):
        dptune.NoisePlan.calibrate(5, 1.0, 1e-5, 3).guarantee(2, 1e-5)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([[1.0, 2.0], [3.0, 4.0]]),
        np.array(["a", "b"]),
        np.array([1 + 2j, 3j]),
        "12",
        object(),
        [1.0, "x"],
        np.array([np.inf, 1.0]),
        np.full(3, np.nan),
    ],
)
def test_bad_arrays_raise_and_do_not_crash(bad):
    with pytest.raises((dptune.InvalidParameter, dptune.DataError, TypeError)):
        dptune.select(bad, 1.0, seed=1)


def test_dtypes_and_strides_are_accepted():
    want = dptune.select(SCORES, 2.0, sensitivity=0.1, seed=4)[0]
    assert dptune.select(SCORES.astype(np.float32), 2.0, sensitivity=0.1, seed=4)[0] == want
    assert dptune.select(list(SCORES), 2.0, sensitivity=0.1, seed=4)[0] == want
    strided = np.repeat(SCORES, 2)[::2]
    assert not strided.flags["C_CONTIGUOUS"] or strided.strides[0] != 8
    assert dptune.select(strided, 2.0, sensitivity=0.1, seed=4)[0] == want
    assert dptune.select(SCORES[::-1].copy()[::-1], 2.0, sensitivity=0.1, seed=4)[0] == want
    ints = np.array([1, 5, 4, 9], dtype=np.int32)
    assert dptune.select(ints, 100.0, seed=1)[0] == 3


def test_guarantee_pickles():
    for g in [dptune.Guarantee.pure(1.0), dptune.Guarantee.zcdp(0.2, "replace"),
              dptune.Guarantee.approx(1.0, 1e-6), dptune.selection_cost(1.0)]:
        assert pickle.loads(pickle.dumps(g)) == g


def test_votes_noise_and_secure_aggregation():
    v = dptune.top_k_vote(np.array([0.1, 0.9, 0.5, 0.9]), 2)
    assert v.dtype == np.uint8 and list(v) == [0, 1, 0, 1]
    plan = dptune.NoisePlan.calibrate(2, 1.0, 1e-5, 3)
    g, eps = plan.guarantee(3, 1e-5)
    assert eps <= 1.0 and g.neighbours.startswith("replace")
    scores = [np.random.default_rng(i).random(6) for i in range(4)]
    noisy = [dptune.noisy_vote(s, plan, seed=7, stream=i) for i, s in enumerate(scores)]
    assert all(n.dtype == np.int64 for n in noisy)
    # Secure aggregation through serialised messages, client 3 drops after stage 0.
    import os
    keys = [os.urandom(32) for _ in range(4)]
    clients = [dptune.SecAggClient(i, 4, 3, noisy[i], keys[i]) for i in range(4)]
    server = dptune.SecAggServer(4, 6, 3)
    for c in clients:
        server.receive(c.advertise_keys())
    out = server.advance()
    for i in range(3):
        server.receive(clients[i].share_keys(out[i]))
    out = server.advance()
    for i in range(3):
        server.receive(clients[i].masked_input(out[i]))
    out = server.advance()
    for i in range(3):
        server.receive(clients[i].attest(out[i]))
    out = server.advance()
    for i in range(3):
        server.receive(clients[i].unmask(out[i]))
    total, survivors = server.finish()
    assert list(survivors) == [0, 1, 2]
    assert np.array_equal(total, noisy[0] + noisy[1] + noisy[2])
    # A replayed client (same key, same messages) produces the same bytes.
    c2 = dptune.SecAggClient(0, 4, 3, noisy[0], keys[0])
    assert c2.advertise_keys() == dptune.SecAggClient(0, 4, 3, noisy[0], keys[0]).advertise_keys()
    with pytest.raises(dptune.InvalidParameter, match="32 bytes"):
        dptune.SecAggClient(0, 4, 3, noisy[0], b"short")
    with pytest.raises(dptune.DptuneError):
        server.receive(b"garbage")
    # Shamir threshold max(t, n/2 + 1) = 3 of 4 resists a server colluding with one client
    # (2·3 > 4 + 1) but not with two (2·3 <= 4 + 2): refused, naming the parameter.
    dptune.SecAggServer(4, 6, 3, colluders=1)
    for make in (
        lambda: dptune.SecAggServer(4, 6, 3, colluders=2),
        lambda: dptune.SecAggClient(0, 4, 3, noisy[0], keys[0], colluders=2),
    ):
        with pytest.raises(dptune.InvalidParameter, match="colluders"):
            make()


@pytest.mark.parametrize(
    "call",
    [
        lambda: dptune.select(SCORES, float("nan")),
        lambda: dptune.select(SCORES, 1.0, sensitivity=float("inf")),
        lambda: dptune.select(SCORES, 1.0, goal="sideways"),
        lambda: dptune.select(SCORES, 1.0, neighbours="everyone"),
        lambda: dptune.select(SCORES, 1.0, mechanism="median"),
        lambda: dptune.select(SCORES, 1.0, mechanism="gem", sensitivities=[1.0, 2.0]),
        lambda: dptune.top_k(SCORES, 1.0, 0),
        lambda: dptune.top_k(SCORES, 1.0, 100),
        lambda: dptune.Guarantee.approx(1.0, 2.0),
        lambda: dptune.Repeats.geometric(1.5),
        lambda: dptune.gaussian_epsilon(-1.0, 1e-5),
        lambda: dptune.dpsgd_epsilon(2.0, 1.0, 10, 1e-5),
        lambda: dptune.SecAggServer(1, 4, 2),
        lambda: dptune.NoisePlan.calibrate(0, 1.0, 1e-5, 3),
        lambda: dptune.select_argmax([]),
        lambda: dptune.select_argmax([1.5, 2.0]),
        lambda: dptune.decode_signed_u32([-1]),
        lambda: dptune.tuning_cost(dptune.Guarantee.pure(1.0), method="nope"),
    ],
)
def test_bad_parameters_raise_invalid_parameter(call):
    with pytest.raises(dptune.InvalidParameter):
        call()


def test_out_of_range_integers_raise_python_errors():
    with pytest.raises(OverflowError):
        dptune.select(SCORES, 1.0, seed=-1)
    with pytest.raises(TypeError):
        dptune.select(SCORES, "one")


def test_stubs_declare_every_public_name():
    """``__init__.pyi`` is what type checkers see: a public name missing there is untyped."""
    import re
    from pathlib import Path

    stub = (Path(dptune.__file__).parent / "__init__.pyi").read_text()
    declared = set(re.findall(r" as (\w+)", stub)) | set(re.findall(r"^(\w+)\s*[:=]", stub, re.M))
    assert sorted(set(dptune.__all__) - declared) == []


def test_split_by_coin_is_a_seeded_partition_and_refuses_bad_input():
    first, second = dptune.split_by_coin(1000, 0.3, seed=2)
    assert first.dtype == np.int64 and len(first) + len(second) == 1000
    assert np.union1d(first, second).tolist() == list(range(1000))
    again = dptune.split_by_coin(1000, 0.3, seed=2)
    assert again[0].tolist() == first.tolist()
    with pytest.raises(dptune.InvalidParameter, match="`fraction`"):
        dptune.split_by_coin(10, 1.0)
    # One record: a side is always empty, and that is a split, not a refusal (a refusal would
    # depend on the private number of records).
    first, second = dptune.split_by_coin(1, 0.5, seed=0)
    assert len(first) + len(second) == 1
    assert [len(s) for s in dptune.split_by_coin(0, 0.5, seed=0)] == [0, 0]


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 14 (Python part): labels of non-private diagnostics and neighbour relations.

def test_selection_probabilities_are_a_labelled_non_private_diagnostic():
    """The exact probabilities are a deterministic function of the raw scores: they must not
    look like a release (no ``(value, guarantee)`` pair, no unlabelled array) and must say NOT
    PRIVATE in their name, their type and their repr. At e99dd64 ``dptune.selection_probabilities``
    returned a bare array."""
    assert not hasattr(dptune, "selection_probabilities")
    diag = dptune.nonprivate_selection_probabilities(SCORES, 1.0, sensitivity=0.1)
    assert isinstance(diag, dptune.NotPrivate) and not isinstance(diag, tuple)
    assert diag.label == "NOT PRIVATE" and "NOT PRIVATE" in repr(diag)
    assert "NOT PRIVATE" in dptune.nonprivate_selection_probabilities.__doc__
    assert not any(isinstance(v, dptune.Guarantee) for v in vars(diag).values())


def test_selection_options_are_one_keyword_set_with_the_documented_defaults():
    """``select`` and ``nonprivate_selection_probabilities`` read one set of options, declared
    once in the core (issue 16): written out at the defaults the docstring lists, each gives
    what leaving them out gives; a misspelt option is a TypeError, never ignored; a value of the
    wrong type is a TypeError too."""
    defaults = dict(mechanism="exponential", sensitivity=1.0, monotonic=False, goal="maximize",
                    neighbours="add_remove", delta=None, sensitivities=None, beta=0.1)
    doc = dptune.select.__doc__
    for name, value in defaults.items():
        assert f"{name}={value!r}".replace("'", '"') in doc, name
    assert dptune.select(SCORES, 1.0, seed=5, **defaults) == dptune.select(SCORES, 1.0, seed=5)
    np.testing.assert_array_equal(
        dptune.nonprivate_selection_probabilities(SCORES, 1.0, **defaults).value,
        dptune.nonprivate_selection_probabilities(SCORES, 1.0).value,
    )
    with pytest.raises(TypeError, match="unexpected keyword argument 'mechansim'"):
        dptune.select(SCORES, 1.0, mechansim="gem")
    # The error names the function the user called, not the private one behind it.
    with pytest.raises(
        TypeError,
        match=r"^nonprivate_selection_probabilities\(\) got an unexpected keyword argument 'seed'",
    ):
        dptune.nonprivate_selection_probabilities(SCORES, 1.0, seed=1)
    with pytest.raises(TypeError):
        dptune.select(SCORES, 1.0, beta="small")


@pytest.mark.parametrize("unknown_first", [True, False])
def test_an_unknown_option_is_reported_before_a_badly_typed_one_in_any_order(unknown_first):
    """Review item: ``read_options`` reported whichever bad keyword came first in the call, so
    a call with a misspelt option and a wrongly typed one raised one error or the other by
    keyword order. Now the unknown keyword always wins (as PyO3 checks names before values),
    and among several of a kind the alphabetically first is named; alone, the badly typed one
    is still a TypeError noting which keyword it was."""
    pairs = [("mechansim", "gem"), ("beta", "small")]
    kwargs = dict(pairs if unknown_first else pairs[::-1])
    assert list(kwargs)[0] == ("mechansim" if unknown_first else "beta")
    with pytest.raises(TypeError, match=r"^select_index\(\) got an unexpected keyword argument 'mechansim'$"):
        dptune.select(SCORES, 1.0, **kwargs)
    two = dict(zeta=1, alpha=2) if unknown_first else dict(alpha=2, zeta=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        dptune.select(SCORES, 1.0, **two)
    bad = [("sensitivity", "big"), ("beta", "small")]
    with pytest.raises(TypeError) as caught:
        dptune.select(SCORES, 1.0, **dict(bad if unknown_first else bad[::-1]))
    if sys.version_info >= (3, 11):  # exceptions take notes from 3.11 on
        assert caught.value.__notes__ == ["while processing 'beta'"], caught.value
    # The loose tuning keywords are read by the same function.
    loose = [("gama", 0.1), ("threshold", "high")]
    with pytest.raises(TypeError, match="unexpected keyword argument 'gama'"):
        dptune.calibrate(dptune.Guarantee.pure(1.0), method="threshold",
                         **dict(loose if unknown_first else loose[::-1]))


def test_a_seeded_selection_says_it_is_not_private():
    """Review item: ``select`` and ``top_k`` with ``seed=`` returned a bare tuple that did not
    say it was seeded. The result is still the tuple ``(index, guarantee)`` (unpacking, indexing
    and equality unchanged), a :class:`dptune.Selection` whose ``seeded`` says whether a seed
    keyed it; a seeded one's repr carries the NOT PRIVATE note, an unseeded one's does not."""
    from dptune._results import SEEDED_NOTE

    seeded = dptune.select(SCORES, 1.0, seed=3)
    private = dptune.select(SCORES, 1.0)
    run = dptune.select(SCORES, 1.0, seed=dptune.SeededRun(3))
    for r in (seeded, private, run):
        assert isinstance(r, dptune.Selection) and isinstance(r, tuple) and len(r) == 2
        i, g = r
        assert (r.selected, r.guarantee) == (i, g) == tuple(r) and isinstance(i, int)
    assert seeded.seeded is True and run.seeded is True and private.seeded is False
    assert SEEDED_NOTE in repr(seeded) and SEEDED_NOTE in str(run)
    assert "NOT PRIVATE" not in repr(private) and "seeded" not in repr(private)
    assert seeded == dptune.select(SCORES, 1.0, seed=3)
    back = pickle.loads(pickle.dumps(seeded))
    assert back == seeded and back.seeded is True and type(back) is type(seeded)

    top = dptune.top_k(SCORES, 3.0, 2, seed=1)
    plain = dptune.top_k(SCORES, 3.0, 2)
    for r in (top, plain):
        assert isinstance(r, dptune.TopKSelection) and len(r) == 2
        idx, g = r
        assert r.selected is idx and r.guarantee == g and idx.dtype == np.int64
    assert top.seeded is True and plain.seeded is False
    assert SEEDED_NOTE in repr(top)
    assert "NOT PRIVATE" not in repr(plain) and "seeded" not in repr(plain)


@pytest.mark.parametrize("neighbours, label", [("add-remove", "add_remove"),
                                               ("replace", "replace_one")])
def test_noisy_count_and_gaussian_release_report_the_neighbour_relation(neighbours, label):
    """At e99dd64 both always reported add/remove-one (and had no ``neighbours`` parameter)."""
    _, g = dptune.noisy_count(10, 1.0, neighbours=neighbours)
    assert g.neighbours == label and g.pure_epsilon == 1.0
    _, g = dptune.gaussian_release([1.0, 2.0], 1.0, 0.5, neighbours=neighbours)
    assert g.neighbours == label and g.rho <= 0.5
    # Both default to add_remove, as before.
    assert dptune.noisy_count(10, 1.0)[1].neighbours == "add_remove"
    with pytest.raises(dptune.InvalidParameter, match="`neighbours`"):
        dptune.noisy_count(10, 1.0, neighbours="swap")


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 9: seeded runs are research runs, and no two releases of one share noise.

def test_same_integer_seed_on_neighbouring_counts_cancels_exactly():
    """Why a seeded run is not private even with a secret seed: the same seed on neighbouring
    datasets draws the same noise, so the difference of the outputs is the exact difference."""
    for seed in range(20):
        a, _ = dptune.noisy_count(100, 1.0, seed=seed)
        b, _ = dptune.noisy_count(101, 1.0, seed=seed)
        assert b - a == 1


def test_releases_within_one_seeded_run_draw_different_streams():
    """Two releases keyed by one SeededRun use different noise streams, so their noise does not
    cancel; the same run replayed gives the same outputs (reproducible research). The leaky
    variant, the same integer seed for both releases, is rejected by the same check. False
    failure: two independent grid-Gaussian vectors of 64 coordinates agreeing everywhere has
    probability far below 1e-100."""
    zeros = np.zeros(64)

    def noises(seed):
        first, _ = dptune.gaussian_release(zeros, 1.0, 0.5, seed=seed)
        second, _ = dptune.gaussian_release(zeros, 1.0, 0.5, seed=seed)
        return first, second

    run = dptune.SeededRun(7)
    first, second = noises(run)
    assert run.releases == 2 and "NOT PRIVATE" in repr(run)
    assert not np.array_equal(first, second)
    replay = noises(dptune.SeededRun(7))
    np.testing.assert_array_equal(replay[0], first)
    np.testing.assert_array_equal(replay[1], second)
    # The leaky variant: one integer seed for two releases reuses the stream.
    leaky_first, leaky_second = noises(7)
    np.testing.assert_array_equal(leaky_first, leaky_second)
    # Counts within one run do not cancel either: over 20 runs the noise differs somewhere.
    diffs = set()
    for s in range(20):
        r = dptune.SeededRun(s)
        diffs.add(dptune.noisy_count(101, 1.0, seed=r)[0] - dptune.noisy_count(100, 1.0, seed=r)[0])
    assert diffs != {1}


def test_seeded_run_is_accepted_wherever_a_seed_is():
    run = dptune.SeededRun(3)
    dptune.select(SCORES, 1.0, seed=run)
    dptune.top_k(SCORES, 1.0, 2, seed=run)
    dptune.split_by_coin(100, 0.5, seed=run)
    dptune.select_argmax([1, 3, 3], seed=run)
    assert run.releases == 4
    with pytest.raises(TypeError, match="SeededRun"):
        dptune.noisy_count(1, 1.0, seed="7")
    # numpy integers are integer seeds, as before.
    assert dptune.noisy_count(1, 1.0, seed=np.int64(7)) == dptune.noisy_count(1, 1.0, seed=7)


def test_gaussian_release_of_non_finite_values_is_a_data_error():
    """At e99dd64 a NaN in the released values raised InvalidParameter, which the tuner turned
    into an unusable run (NaN score): a data-dependent failure hidden as a score."""
    with pytest.raises(dptune.DataError, match="`values`"):
        dptune.gaussian_release([1.0, math.nan], 1.0, 0.5)
    assert not issubclass(dptune.DataError, dptune.InvalidParameter)
    assert issubclass(dptune.DataError, dptune.DptuneError)


def test_nan_scores_are_a_data_error():
    """Scores are computed from private data: a NaN is a DataError (aborts a tuning), not an
    InvalidParameter (which the tuner counts as an unusable configuration), as at e99dd64."""
    bad = SCORES.copy()
    bad[2] = math.nan
    with pytest.raises(dptune.DataError, match="`scores`"):
        dptune.select(bad, 1.0)
    with pytest.raises(dptune.DataError, match="`scores`"):
        dptune.top_k(bad, 1.0, 2)


def test_mechanisms_come_from_the_library_and_match_the_literal_type():
    """``dptune.MECHANISMS`` is the library's list of single-index mechanisms, and the
    ``dptune.types.Mechanism`` literal that type checkers see names exactly those."""
    import typing

    import dptune.types

    assert dptune.MECHANISMS == tuple(typing.get_args(dptune.types.Mechanism))
    for m in dptune.MECHANISMS:
        dptune.select([0.1, 0.2], 1.0, mechanism=m, delta=1e-6 if m == "gaussian" else None,
                      seed=1)


def test_noise_plan_names_delta_when_it_is_not_positive():
    for delta in (0.0, -1e-6, float("nan")):
        with pytest.raises(dptune.InvalidParameter, match="`delta`"):
            dptune.NoisePlan.calibrate(1, 1.0, delta, 3)
