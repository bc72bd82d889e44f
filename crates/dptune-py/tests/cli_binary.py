"""The `dptune` command-line binary that the tests compare the Python package with."""

import os
import shutil
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[3]


def cli_path() -> Optional[Path]:
    """The `dptune` binary of this checkout's build (CARGO_TARGET_DIR or target/, release
    before debug), else the one on PATH, else None."""
    for base in (os.environ.get("CARGO_TARGET_DIR"), str(ROOT / "target")):
        for profile in ("release", "debug"):
            if base and (Path(base) / profile / "dptune").is_file():
                return Path(base) / profile / "dptune"
    found = shutil.which("dptune")
    return Path(found) if found else None
