"""The search-space grammar is the library's (dptune::tune::grammar): a space written as the
command-line tool's TOML file and the same space written as a Python dict are one space, and
a tuning plan drawn from either with one seed dispatches the same configurations."""

import tomllib

import pytest

import dptune
from dptune import _core

# The command-line tool reads the tables in name order; the dict below is in that order too.
TOML = """
[epochs]
int = [1, 5]
[learning_rate]
log_uniform = [0.001, 1.0]
[momentum]
uniform = [0.0, 0.9]
[optimizer]
values = ["sgd", "adam", 3]
"""

DICT = {
    "epochs": ("int", 1, 5),
    "learning_rate": ("log-uniform", 1e-3, 1.0),
    "momentum": ("uniform", 0.0, 0.9),
    "optimizer": ["sgd", "adam", 3],
}


def tasks(space, seed=7):
    plan = _core._plan_tuning(
        space,
        dptune.Guarantee.pure(0.1),
        repeats=dptune.Repeats.geometric(0.1),
        seed=seed,
    )
    return plan.tasks()


def test_toml_and_dict_give_the_same_configurations_for_one_seed():
    from_toml = tasks(tomllib.loads(TOML))
    from_dict = tasks(DICT)
    assert from_toml == from_dict
    assert len(from_dict) >= 1
    # The comparison can fail: another seed, or another space, draws other configurations.
    assert tasks(DICT, seed=8) != from_dict
    other = dict(DICT, momentum=("uniform", 0.0, 0.5))
    assert tasks(other) != from_dict


@pytest.mark.parametrize(
    "space, reason",
    [
        ({"lr": {"between": [1, 2]}}, "unknown kind `between`"),
        ({"lr": {"uniform": [0, 1], "int": [0, 1]}}, "give exactly one of"),
        ({"lr": {"uniform": [0, 1, 2]}}, r"`uniform` needs \[low, high\]"),
        ({"lr": ("int", 1, 2.5)}, "`int` bounds must be integers"),
        ({"lr": ("uniform", 1.0, 0.0)}, "low <= high"),
        ({"lr": ("uniform", 1.0)}, r"a range is \(kind, low, high\)"),
        ({"lr": 3}, "a domain is a list of choices"),
    ],
)
def test_mistakes_are_refused_naming_the_hyperparameter(space, reason):
    with pytest.raises(dptune.InvalidParameter, match=reason) as e:
        tasks(space)
    assert "lr" in str(e.value) or "search_space" in str(e.value)
