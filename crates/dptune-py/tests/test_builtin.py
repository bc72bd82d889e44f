"""``dptune.tune`` with a built-in learner and the command-line ``dptune tune`` are one job
(issue 16): the same seed and inputs give the same selection and the very same report."""

import json
import subprocess

import pytest

import dptune
from dptune import Guarantee, InvalidParameter, Method, Repeats

from cli_binary import cli_path


def cli_tune(*args):
    cli = cli_path()
    if cli is None:
        pytest.skip("the dptune CLI is not built (cargo build --release -p dptune-cli)")
    r = subprocess.run([str(cli), "tune", "--json", *map(str, args)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_default_job_selects_what_the_cli_selects():
    """The main job (DP-SGD logistic regression on Adult, Papernot-Steinke, eps = 1) with
    seed 7: the whole report is equal, so the configuration, the noisy count, the test
    accuracy of the final model and every epsilon are."""
    py = dptune.tune("dpsgd-logistic", target=Guarantee.approx(1.0, 1e-5), seed=7)
    cli = cli_tune("--seed", 7)
    assert py.report == cli
    assert py.config == cli["best"] and py.epsilon == cli["privacy"]["epsilon"] <= 1.0
    # Teeth: another seed is another run (a different noisy count at least), so the equality
    # above is not one between constant reports.
    other = dptune.tune("dpsgd_logistic", target=Guarantee.approx(1.0, 1e-5), seed=8)
    assert other.report != cli


def test_options_reach_the_job_as_the_cli_flags_do():
    """Output perturbation (replace-one), geometric repeats of mean 4, a public space, a
    split and the NOT PRIVATE comparison: every option is the CLI flag of the same name."""
    space = {"regularization": [1e-3, 1e-2, 1e-1]}
    py = dptune.tune(
        "objpert", space, target=Guarantee.approx(2.0, 1e-6, neighbours="replace_one"),
        method=Method.papernot_steinke(Repeats.geometric(mean=4)), fractions=(0.6, 0.75),
        compare=True, seed=5,
    )
    toml = "\n".join(f"[{k}]\nvalues = {v}" for k, v in space.items())
    path = _write(toml)
    cli = cli_tune("--learner", "objpert", "--space", path, "--epsilon", 2, "--delta", 1e-6,
                   "--tuner", "liu-talwar", "--mean-runs", 4, "--tune-fraction", 0.6,
                   "--train-fraction", 0.75, "--compare", "--seed", 5)
    assert py.report == cli
    assert py.report["compare"]["not_private"] is True
    assert py.report["privacy"]["neighbours"] == "replace_one"


def _write(text):
    import tempfile

    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(text)
    f.close()
    return f.name


@pytest.mark.parametrize("kwargs, name", [
    (dict(per_run=Guarantee.zcdp(0.1)), "per_run"),
    (dict(direction="minimize"), "direction"),
    (dict(method="threshold"), "method"),
    (dict(cap="auto"), "cap"),
    (dict(target=None), "target"),
    (dict(hidden=0), "hidden"),
    (dict(hidden=8), "hidden"),
    (dict(public_size=1000, count_share=0.1), "count_share"),
    (dict(data="nope"), "nope"),
    (dict(fractions=(1.5, 0.8)), "tune"),
])
def test_bad_arguments_name_the_parameter(kwargs, name):
    args = {"target": Guarantee.approx(1.0, 1e-5), "seed": 1, **kwargs}
    with pytest.raises((InvalidParameter, dptune.DataError)) as e:
        dptune.tune("dpsgd-logistic", **args)
    assert name in str(e.value)


@pytest.mark.parametrize("kwargs, name", [
    (dict(data="mnist5k", learner="objpert"), "learner"),
    (dict(learner="ridge"), "learner"),
    (dict(target=Guarantee.approx(1.0, 0.0)), "delta"),
    (dict(method=Method.exhaustive(5)), "method"),
])
def test_data_independent_refusals_come_before_the_budget_is_charged(tmp_path, kwargs, name):
    """Each refusal depends on public inputs only (the declared task, the plan), so it comes
    before the budget is charged: the store still shows nothing spent."""
    store = tmp_path / "b.sqlite"
    dptune.budget_create("b", 10.0, 1e-3, "add-remove", store=store)
    args = {"learner": "dpsgd-logistic", "target": Guarantee.approx(1.0, 1e-5), **kwargs}
    learner = args.pop("learner")
    if learner == "objpert":
        args["target"] = Guarantee.approx(1.0, 1e-5, neighbours="replace_one")
        dptune.budget_create("r", 10.0, 1e-3, "replace-one", store=store)
    with pytest.raises(InvalidParameter, match=f"`{name}`"):
        dptune.tune(learner, seed=1, budget="r" if learner == "objpert" else "b", store=store,
                    **args)
    status = dptune.budget_status("r" if learner == "objpert" else "b", store=store)
    assert status["charges"] == 0, status


def test_the_resource_check_refuses_before_the_budget_is_charged(tmp_path):
    """The command line's resource check (`dptune tune`, `--force`) applies here too: a job
    whose estimated memory exceeds this machine (an MLP of 10^9 hidden units) is refused naming
    the parameter, before the budget is charged; `force` is the override."""
    store = tmp_path / "b.sqlite"
    dptune.budget_create("b", 10.0, 1e-3, "add-remove", store=store)
    with pytest.raises(InvalidParameter, match="`hidden`.*force=True"):
        dptune.tune("dpsgd-mlp", hidden=10**9, target=Guarantee.approx(1.0, 1e-5), seed=1,
                    budget="b", store=store)
    assert dptune.budget_status("b", store=store)["charges"] == 0


def test_a_seeded_run_says_it_is_not_private():
    """A seeded run's noise is predictable from the seed: the report says `seeded` and the
    summary says NOT PRIVATE; a run on the operating system's generator says neither."""
    args = dict(target=Guarantee.approx(1.0, 1e-5, neighbours="replace_one"),
                space={"regularization": [1e-2]})
    seeded = dptune.tune("objpert", seed=3, **args)
    assert seeded.report["seeded"] is True and seeded.seeded
    assert "NOT PRIVATE: seeded run" in str(seeded)
    private = dptune.tune("objpert", **args)
    assert private.report["seeded"] is False and not private.seeded
    assert "NOT PRIVATE" not in str(private)


def test_an_unknown_learner_is_refused_by_name():
    with pytest.raises(InvalidParameter, match="learner.*dpsgd-logistic, dpsgd-mlp"):
        dptune.tune("svm", target=Guarantee.approx(1.0, 1e-5))


def test_builtin_arguments_are_refused_with_a_callable():
    def candidate(config, allowance, seed):
        return None, 0.0

    with pytest.raises(InvalidParameter, match="`data`"):
        dptune.tune(candidate, {"x": [1]}, per_run=Guarantee.zcdp(0.1), data="adult")
    with pytest.raises(InvalidParameter, match="`force`"):
        dptune.tune(candidate, {"x": [1]}, per_run=Guarantee.zcdp(0.1), force=True)
    with pytest.raises(InvalidParameter, match="`space` = None"):
        dptune.tune(candidate, per_run=Guarantee.zcdp(0.1))
