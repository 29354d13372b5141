"""The package is typed (py.typed): it must stay clean under mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SDK = Path(__file__).resolve().parents[1]


def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy"), "--config-file", str(SDK / "pyproject.toml")],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "No module named mypy" not in done.stderr, "mypy is missing: scripts/services/python.sh installs it into the test virtualenv"
    assert done.returncode == 0, done.stdout + done.stderr
