"""`budget=` in Python (issue 17, section 1) and up-front size limits (section 2): the Rust
budget store bound through the extension, the same file and rules as the CLI's `--budget`."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dptune

from cli_binary import cli_path

@pytest.fixture
def store(tmp_path):
    return tmp_path / "budget.sqlite"


def test_tune_charges_its_whole_cost_before_any_run(store):
    dptune.budget_create("b", 1.0, 1e-6, "add-remove", store=store)
    per = dptune.Guarantee.zcdp(0.01)
    rep = dptune.Repeats.geometric(0.5)
    calls = []

    def candidate(config, allowance, seed):
        calls.append(dptune.budget_status("b", store=store)["charges"])
        return None, float(config["x"])

    r = dptune.tune(candidate, {"x": [1.0, 2.0]}, per_run=per, repeats=rep, budget="b",
                    store=store)
    # Every run saw the charge already committed (a variant charging after the runs fails).
    assert calls and set(calls) == {1}
    st = dptune.budget_status("b", store=store)
    assert st["charges"] == 1 and st["route"] == "rdp"
    assert st["spent_epsilon"] == pytest.approx(r.guarantee.epsilon(1e-6), rel=1e-9)
    # The next tuning does not fit in what is left: BudgetExceeded, no candidate runs, the
    # store is unchanged.
    calls.clear()
    big = dptune.Guarantee.zcdp(0.2)
    with pytest.raises(dptune.BudgetExceeded, match="nothing was released"):
        dptune.tune(candidate, {"x": [1.0]}, per_run=big, repeats=rep, budget="b", store=store)
    assert calls == [] and dptune.budget_status("b", store=store)["charges"] == 1


def test_selection_count_and_gaussian_charge_before_release(store, monkeypatch):
    monkeypatch.setenv("DPTUNE_STORE", str(store))  # no store= below: the environment names it
    dptune.budget_create("p", 2.0, 0.0, "add-remove")
    i, g = dptune.select([1.0, 5.0, 2.0], 0.5, budget="p")
    assert 0 <= i < 3 and g.pure_epsilon == 0.5
    _, g = dptune.top_k([1.0, 5.0, 2.0], 0.5, 2, budget="p")  # the total: 0.25 per round
    c, g = dptune.noisy_count(10, 0.5, budget="p")
    # A long score vector takes the path that releases the GIL: charged the same way.
    i, g = dptune.select(np.arange(5000.0), 0.25, budget="p")
    st = dptune.budget_status("p")
    assert st["charges"] == 4 and st["spent_epsilon"] == pytest.approx(1.75)
    with pytest.raises(dptune.BudgetExceeded):
        dptune.noisy_count(10, 0.3, budget="p")
    assert dptune.budget_status("p")["charges"] == 4
    # Invalid scores are refused before the charge (nothing charged for nothing released).
    with pytest.raises(dptune.DataError):
        dptune.select([1.0, float("nan")], 0.1, budget="p")
    assert dptune.budget_status("p")["charges"] == 4
    # A zCDP charge cannot enter a pure budget: refused, nothing released.
    with pytest.raises(dptune.BudgetExceeded):
        dptune.gaussian_release(np.ones(3), 1.0, 0.01, budget="p")
    dptune.budget_create("z", 1.0, 1e-5, "add-remove")
    out, g = dptune.gaussian_release(np.ones(3), 1.0, 0.01, budget="z")
    st = dptune.budget_status("z")
    assert st["charges"] == 1 and st["route"] == "zcdp" and out.shape == (3,)


def test_neighbour_relation_unknown_budget_and_stray_store_are_refused(store):
    dptune.budget_create("r", 1.0, 1e-6, "replace", store=store)
    with pytest.raises(dptune.InvalidParameter, match="neighbour"):
        dptune.noisy_count(3, 0.1, budget="r", store=store)
    assert dptune.budget_status("r", store=store)["charges"] == 0
    dptune.noisy_count(3, 0.1, neighbours="replace", budget="r", store=store)
    assert dptune.budget_status("r", store=store)["charges"] == 1
    with pytest.raises(dptune.DptuneError, match="nope"):
        dptune.noisy_count(3, 0.1, budget="nope", store=store)
    with pytest.raises(dptune.DptuneError):
        dptune.noisy_count(3, 0.1, budget="r", store=store.with_name("missing.sqlite"))
    with pytest.raises(dptune.InvalidParameter, match="`store`"):
        dptune.noisy_count(3, 0.1, store=store)
    with pytest.raises(dptune.InvalidParameter, match="`store`"):
        dptune.tune(lambda c, a, s: (None, 1.0), {"x": [1]},
                    per_run=dptune.Guarantee.zcdp(0.01),
                    repeats=dptune.Repeats.geometric(0.5), store=store)


def test_python_and_cli_charges_land_in_the_same_store(store):
    cli = cli_path()
    if cli is None:
        pytest.skip("the dptune CLI is not built (cargo build --release -p dptune-cli)")
    env = {**os.environ, "DPTUNE_STORE": str(store)}

    def run(*args, stdin=""):
        return subprocess.run([str(cli), *args], input=stdin, capture_output=True, text=True,
                              env=env, timeout=120)

    assert run("budget", "create", "shared", "--epsilon", "1", "--delta", "1e-6",
               "--neighbours", "add-remove").returncode == 0
    sel = run("select", "--mechanism", "exponential", "--epsilon", "0.25", "--sensitivity", "1",
              "--budget", "shared", stdin="1\n2\n3\n")
    assert sel.returncode == 0, sel.stderr
    dptune.select([1.0, 2.0, 3.0], 0.25, budget="shared", store=store)
    st = dptune.budget_status("shared", store=store)
    assert st["charges"] == 2 and st["spent_epsilon"] == pytest.approx(0.5)
    shown = json.loads(run("budget", "show", "shared", "--json").stdout)
    assert shown["spent"]["charges"] == 2
    assert shown["spent"]["epsilon"] == pytest.approx(st["spent_epsilon"])
    history = run("budget", "history", "shared", "--json").stdout
    assert "python dptune.select" in history and "dptune select" in history
    # The CLI refuses what Python has left too little for (exit 3, nothing on stdout).
    over = run("select", "--mechanism", "exponential", "--epsilon", "0.75", "--sensitivity", "1",
               "--budget", "shared", stdin="1\n2\n")
    assert over.returncode == 3 and over.stdout == ""


# ------------------------------------------------------------------------------------------------
# Issue 17, section 2: sizes are checked before anything is allocated.

def _in_subprocess(code):
    """Runs `code` in a fresh interpreter (an abort must not take pytest down with it)."""
    r = subprocess.run([sys.executable, "-c", "import dptune\n" + code], capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("call,name", [
    ("dptune.split_by_coin(2**63, 0.5)", "n"),
    ("dptune.split_by_coin(2**64 - 1, 0.5)", "n"),
    ("dptune.selection_cost(1.0, mechanism='top-k', k=2**62)", "k"),
])
def test_a_huge_size_is_refused_naming_it_and_the_estimate(call, name):
    """At e99dd64 `split_by_coin(2**63, 0.5)` killed the interpreter (allocation abort)."""
    code = (f"try:\n    {call}\nexcept dptune.InvalidParameter as e:\n"
            "    print('REFUSED', e)\n")
    rc, out = _in_subprocess(code)
    assert rc == 0 and "REFUSED" in out, out
    assert f"`{name}`" in out and "GiB of memory" in out, out


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, "10"])
def test_a_size_that_is_not_a_count_is_an_invalid_parameter(bad):
    with pytest.raises(dptune.InvalidParameter, match="`n`"):
        dptune.split_by_coin(bad, 0.5)


def test_sizes_that_fit_still_work():
    a, b = dptune.split_by_coin(1000, 0.5, seed=1)
    assert len(a) + len(b) == 1000
    assert dptune.selection_cost(1.0, mechanism="top-k", k=3).pure_epsilon is not None


def test_an_exhaustive_cost_beyond_what_a_tuner_dispatches_is_refused_at_once():
    """`tuning_cost(method="exhaustive", runs=2**62)` composed the guarantee 2^62 times (hours
    without a word); it is now refused like a tuning that would dispatch that many runs."""
    with pytest.raises(dptune.InvalidParameter, match="`runs`"):
        dptune.tuning_cost(dptune.Guarantee.pure(1.0), method="exhaustive", runs=2**62)
    g = dptune.tuning_cost(dptune.Guarantee.pure(0.1), method="exhaustive", runs=10)
    assert g.pure_epsilon == pytest.approx(1.0)
