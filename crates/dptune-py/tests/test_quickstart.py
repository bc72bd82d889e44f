"""The README's Python quick start runs as written and releases a configuration."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_quick_start_runs(capsys):
    text = README.read_text()
    block = re.search(r"```python\n(import numpy as np, dptune.*?)```", text, re.S).group(1)
    # A candidate that really is DP (exact noise, training and scoring accounted) takes ~20 lines.
    assert len(block.strip().splitlines()) <= 20
    ns = {}
    exec(compile(block.replace("geometric(0.1))", "geometric(0.1), seed=3)"), "README", "exec"), ns)
    best = ns["best"]
    assert best.config is not None and 0.01 <= best.config["clip"] <= 10.0
    # The score is a noisy count of correct predictions on the 284 validation records.
    assert best.score > 0.6 * 284
    assert best.guarantee.epsilon(1e-6) > 0
    assert "clip" in capsys.readouterr().out
