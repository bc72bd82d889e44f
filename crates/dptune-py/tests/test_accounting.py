"""dptune.accounting: the PLD accountant of `dptune account compose` / `account dpsgd` in Python
(issue 14, deliverable 5). Every golden case within the Rust golden test's tolerance, and every
number equal to the CLI's (when this checkout's `dptune` binary is built)."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import dptune
from dptune.accounting import Composition, compose, dpsgd

from cli_binary import cli_path

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = json.loads((ROOT / "crates/dptune/tests/data/pld.json").read_text())["cases"]
IDS = [c["id"] for c in GOLDEN]


def cli_json(*args):
    cli = cli_path()
    if cli is None:
        pytest.skip("the dptune CLI is not built (cargo build --release -p dptune-cli)")
    r = subprocess.run([str(cli), "--json", *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def violations(case, eps):
    """The Rust golden test's tolerance (tests/golden_pld.rs), as a list of what fails."""
    x = case["expected"]
    out = []
    if eps < max(x["eps_lower_bound"], x.get("eps_lower_bound_prv", 0.0)):
        out.append("below the optimistic lower bound (invalid)")
    if eps > x["eps_dp_accounting_pld"] * (1 + 1e-3):
        out.append("above dp_accounting's PLD by more than 1e-3")
    exact = x.get("eps_exact")
    if exact is not None and not exact <= eps <= exact * (1 + 1e-3):
        out.append("not within 1e-3 above the exact epsilon")
    return out


def test_the_golden_file_has_its_cases():
    assert len(GOLDEN) == 7


@pytest.mark.parametrize("case", GOLDEN, ids=IDS)
def test_every_golden_case_is_valid_and_tight(case):
    c = compose(case["inputs"])
    assert isinstance(c, Composition)
    eps = c.epsilon_pld()
    assert violations(case, eps) == []
    # The reported epsilon is the best valid route; on every golden case the PLD wins.
    assert c.epsilon() <= eps
    assert c.route() == "pld"
    assert c.guarantee.epsilon(case["inputs"]["delta"]) == c.epsilon()
    rdp = case["expected"].get("eps_rdp_dp_accounting")
    if rdp is not None:
        assert c.epsilon() < rdp


def test_the_golden_check_rejects_an_optimistic_composition():
    # 10% fewer DP-SGD steps than the case states: an epsilon below the truth, which the
    # tolerance check must reject (else the test above could not fail).
    case = GOLDEN[0]
    wrong = json.loads(json.dumps(case["inputs"]))
    wrong["parts"][0]["times"] = int(wrong["parts"][0]["times"] * 0.9)
    assert violations(case, compose(wrong).epsilon_pld()) != []
    # And a coarser grid than dp_accounting's is too pessimistic to pass the tight side.
    assert violations(case, compose(case["inputs"], interval=1e-2).epsilon_pld()) != []


@pytest.mark.parametrize("case", GOLDEN, ids=IDS)
def test_compose_equals_the_cli(case, tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case["inputs"]))
    want = cli_json("account", "compose", path)
    # The same text from a path, as JSON text, and as the mapping it came from.
    assert compose(path).report() == want
    assert compose(path.read_text()).report() == want
    assert compose(case["inputs"]).report() == want


def test_a_coarser_grid_equals_the_cli(tmp_path):
    case = GOLDEN[-1]
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case["inputs"]))
    want = cli_json("account", "compose", path, "--interval", "0.001")
    got = compose(case["inputs"], interval=1e-3).report()
    assert got == want
    assert got["epsilon"] > compose(case["inputs"]).epsilon()


def test_the_profile_is_the_cli_profile(tmp_path):
    case = GOLDEN[-1]
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case["inputs"]))
    want = cli_json("account", "profile", path, "--from", "0", "--to", "5", "--points", "11")
    eps = np.array(want["epsilon"])
    assert np.allclose(eps, np.linspace(0.0, 5.0, 11), rtol=0, atol=1e-15)
    got = compose(path).profile(eps)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (11,)
    assert got.tolist() == want["delta_pld"]


def test_the_profile_inverts_epsilon():
    c = compose(GOLDEN[0]["inputs"])
    eps = c.epsilon_pld(1e-5)
    d = c.profile(np.array([eps - 0.01, eps, eps + 0.5]))
    # δ(ε(δ)) <= δ, and just below ε(δ) the profile exceeds δ (ε is the smallest such).
    assert d[1] <= 1e-5 < d[0]
    assert d[2] < d[1]
    # delta() is the tightest route at ε; the PLD is one of them.
    assert c.delta(eps) <= d[1]
    # Lists and integer arrays are accepted too.
    assert c.profile([1, 2]).tolist() == c.profile(np.array([1.0, 2.0])).tolist()


def test_the_queries_default_to_the_specification_delta():
    inputs = GOLDEN[1]["inputs"]
    c = compose(inputs)
    assert c.target_delta == inputs["delta"] == 1e-6
    assert c.epsilon() == c.epsilon(1e-6)
    assert c.epsilon(1e-5) < c.epsilon(1e-6)
    assert c.report(1e-5)["delta"] == 1e-5
    assert c.interval == 1e-4 and c.grid_points > 0


def test_a_pure_part_can_win_the_route():
    # One 1-DP part on a coarse loss grid (width 0.3): the PLD rounds the loss 1 up to 1.2, so
    # the pure bound (exactly 1) wins and is named; on the default grid the PLD wins.
    spec = {"parts": [{"mechanism": "pure", "eps": 1.0}], "delta": 1e-12,
            "neighbours": "replace_one"}
    c = compose(spec, interval=0.3)
    assert c.route() == "pure" and c.epsilon() == 1.0
    assert c.epsilon_pld() > 1.0
    assert compose(spec).route() == "pld"
    assert c.guarantee.neighbours == "replace_one"


# Issue 14's numbers (dp_accounting 0.6.0 PLD vs RDP), and the golden DP-SGD cases.
DPSGD = [
    (0.01, 1.0, 1000, 1e-5, 1.829, 2.101),
    (0.001, 0.8, 3000, 1e-5, 0.464, 1.227),
]


@pytest.mark.parametrize("q,z,steps,delta,pld,rdp", DPSGD)
def test_dpsgd_reports_the_pld_epsilon_beside_rdp(q, z, steps, delta, pld, rdp):
    r = dpsgd(q, z, steps, delta)
    assert r["epsilon"] == r["epsilon_pld"] and r["route"] == "pld"
    # No larger than dp_accounting's PLD (the numbers, rounded to 3 decimals).
    assert 0.9 * pld < r["epsilon"] <= pld * (1 + 2e-3)
    assert r["epsilon"] < r["epsilon_rdp"] <= r["epsilon_default_grid"]
    assert abs(r["epsilon_default_grid"] - rdp) < 2e-3 * rdp
    # The same number as the composition of its parts.
    parts = {"parts": [{"mechanism": "gaussian", "sigma": z, "q": q, "times": steps}],
             "delta": delta, "neighbours": "add_remove"}
    assert compose(parts).epsilon_pld() == r["epsilon"]


@pytest.mark.parametrize("q,z,steps,delta", [(0.01, 1.0, 1000, 1e-5), (0.1, 2.0, 500, 1e-6),
                                             (0.004, 1.1, 10000, 1e-5), (1.0, 5.0, 20, 1e-5)])
def test_dpsgd_equals_the_cli(q, z, steps, delta):
    want = cli_json("account", "dpsgd", "--sampling-rate", q, "--noise-multiplier", z,
                    "--steps", steps, "--delta", delta)
    assert dpsgd(q, z, steps, delta) == want


def test_bad_specifications_name_the_parameter(tmp_path):
    ok = {"mechanism": "gaussian", "sigma": 1.0}

    def spec(*parts, neighbours="add_remove"):
        return {"parts": list(parts), "delta": 1e-5, "neighbours": neighbours}

    cases = [
        (spec({"mechanism": "gauss", "sigma": 1.0}), "`mechanism`"),
        (spec({"mechanism": "gaussian"}), "`sigma`"),
        (spec({**ok, "b": 1.0}), "`parts`"),
        (spec({**ok, "q": 0.01}, neighbours="replace_one"), "`q`"),
        (spec(ok, neighbours="both"), "`neighbours`"),
        (spec(), "`parts`"),
        (spec({**ok, "times": 0}), "`times`"),
        ({**spec(ok), "extra": 1}, "`spec`"),
        ("{not json", "`spec`"),
        ("case.json", "`spec`"),  # a str is JSON text, never a path
        (tmp_path / "missing.json", "`spec`"),
        (42, "`spec`"),
    ]
    for bad, name in cases:
        with pytest.raises(dptune.InvalidParameter, match=name):
            compose(bad)
    with pytest.raises(dptune.InvalidParameter, match="`interval`"):
        compose(spec(ok), interval=2.0)
    c = compose(spec(ok))
    with pytest.raises(dptune.InvalidParameter, match="`epsilon`"):
        c.profile([-1.0])
    with pytest.raises(dptune.InvalidParameter, match="`delta`"):
        c.epsilon(1.5)
    with pytest.raises(dptune.InvalidParameter, match="`epsilons`"):
        c.profile(np.zeros((2, 2)))
    with pytest.raises(dptune.InvalidParameter, match="`sampling_rate`"):
        dpsgd(1.5, 1.0, 10, 1e-5)
    with pytest.raises(dptune.InvalidParameter, match="`steps`"):
        dpsgd(0.01, 1.0, 0, 1e-5)


def test_numpy_scalars_in_a_mapping():
    a = compose({"parts": [{"mechanism": "gaussian", "sigma": np.float64(2.0), "times": np.int64(10)}],
                 "delta": 1e-5, "neighbours": "add_remove"})
    b = compose(GOLDEN[3]["inputs"])
    assert a.report() == b.report()


def test_reexported_from_the_package():
    assert dptune.accounting.compose is compose
    assert dptune.accounting.dpsgd is dpsgd
