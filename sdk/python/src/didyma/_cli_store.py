"""Where the CLI keeps its login between commands: a JSON file readable by its owner only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def store_path() -> Path:
    """DIDYMA_CONFIG, else $XDG_CONFIG_HOME/didyma/cli.json, else ~/.config/didyma/cli.json."""
    explicit = os.environ.get("DIDYMA_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "didyma" / "cli.json"


def load() -> dict[str, Any]:
    path = store_path()
    if not path.exists():
        return {}
    return dict(json.loads(path.read_text()))


def save(state: dict[str, Any]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created with owner-only permissions before anything secret is written into it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(state, handle, indent=2)


def forget() -> bool:
    path = store_path()
    if path.exists():
        path.unlink()
        return True
    return False
