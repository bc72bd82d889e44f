"""Every Python snippet in the READMEs and docs runs as written (issue 15, item 2), so that
none can rot: each ```python block is executed on its own, in a fresh namespace, exactly as a
reader would paste it (no seed, no edits). test_quickstart.py checks what the two quick starts
compute; this file checks that every block runs at all."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", ROOT / "crates/dptune-py/README.md", *sorted((ROOT / "docs").glob("*.md"))]


def snippets():
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text[: m.start()].count("\n") + 1
            yield pytest.param(m.group(1), id=f"{doc.relative_to(ROOT)}:{line}")


SNIPPETS = list(snippets())


def test_the_docs_have_python_snippets():
    # The collector must find the quick starts: a broken pattern would pass every test below.
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("code", SNIPPETS)
def test_snippet_runs_as_written(code, capsys, tmp_path, monkeypatch):
    # Budget snippets use the default store: point it at a fresh file, not the user's.
    monkeypatch.setenv("DPTUNE_STORE", str(tmp_path / "budgets.sqlite"))
    exec(compile(code, "snippet", "exec"), {"__name__": "__snippet__"})
    assert capsys.readouterr().out.strip(), "a snippet should show its result"
