"""The README's Python quick start runs as written and releases a configuration."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_quick_start_runs(capsys):
    text = README.read_text()
    block = re.search(r"```python\n(import numpy as np, dptune.*?)```", text, re.S).group(1)
    assert len(block.strip().splitlines()) <= 17
    ns = {}
    exec(compile(block.replace("geometric(0.1))", "geometric(0.1), seed=3)"), "README", "exec"), ns)
    best = ns["best"]
    assert best.config is not None and 0.01 <= best.config["clip"] <= 10.0
    assert best.score > 0.5
    assert best.guarantee.epsilon(1e-6) > 0
    assert "clip" in capsys.readouterr().out
