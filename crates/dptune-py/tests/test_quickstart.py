"""The README's Python quick starts run as written and release a configuration."""

import re
from pathlib import Path

import numpy as np

import dptune

README = Path(__file__).resolve().parents[1] / "README.md"


def block(first_line):
    text = README.read_text()
    return re.search(r"```python\n(" + re.escape(first_line) + r".*?)```", text, re.S).group(1)


def run(code):
    ns = {}
    seeded = code.replace("with_mean(10)))", "with_mean(10)), seed=3)")
    assert seeded != code
    exec(compile(seeded, "README", "exec"), ns)
    return ns


def test_scikit_learn_quick_start_is_ten_lines_and_learns(capsys):
    code = block("import dptune\n")
    assert len(code.strip().splitlines()) <= 10
    ns = run(code)
    best, X, y = ns["best"], ns["X"], ns["y"]
    assert best.config is not None and 0.001 <= best.config["C"] <= 10.0
    # Non-private evaluation, for the test only: the private model learns (non-private
    # scikit-learn logistic regression: 0.85 on these records). The noise comes from the
    # operating system: with per_run zCDP 0.05 over 100 repetitions the accuracy was at least
    # 0.8156 (median 0.823); with the target ε = 2 (per-run ρ = 0.0345) over 40 repetitions at
    # least 0.8162 (median 0.823, spread about 0.002), so the false-failure probability is
    # negligible.
    assert best.model.score(X, y) > 0.8
    assert best.score > 0.75 * len(ns["run"].y_val)
    # The target is the whole tuning's allowance: met, and nearly all of it used.
    assert best.guarantee.fits_within(dptune.Guarantee.approx(2.0, 1e-6))
    assert 1.99 < best.guarantee.epsilon(1e-6) <= 2.0
    out = capsys.readouterr().out
    assert "'C'" in out and out.startswith("eps = 2 at delta = 1e-06 for the whole tuning")


def test_own_candidate_quick_start_runs(capsys):
    code = block("import numpy as np, dptune\n")
    # A candidate that really is DP (exact noise, training and scoring accounted): ~20 lines.
    assert len(code.strip().splitlines()) <= 20
    ns = run(code)
    best = ns["best"]
    assert best.config is not None and 0.01 <= best.config["clip"] <= 10.0
    # The score is a noisy count of correct predictions on the validation side.
    assert best.score > 0.6 * len(ns["val"])
    assert 1.99 < best.guarantee.epsilon(1e-6) <= 2.0
    assert "clip" in capsys.readouterr().out
    assert np.intersect1d(ns["train"], ns["val"]).size == 0


def test_the_top_level_readme_shows_the_same_quick_start():
    top = (README.parents[2] / "README.md").read_text()
    assert "```python\n" + block("import dptune\n") + "```" in top
