"""How the CLI prints: aligned tables for people, JSON for scripts."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO


def plain(value: Any) -> Any:
    """A JSON-able form of an SDK record (its API fields) or of anything JSON-able."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_") and f.name != "raw"}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def cell(value: Any, width: int = 60) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(plain(value), separators=(",", ":"))
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO = sys.stdout) -> None:
    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    print("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths)).rstrip(), file=out)
    for r in body:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip(), file=out)


def emit(value: Any, as_json: bool, columns: Sequence[str] | None = None, out: TextIO = sys.stdout) -> None:
    """`value` as JSON, or as a table of `columns` (a list) or of key/value lines (one record)."""
    data = plain(value)
    if as_json:
        json.dump(data, out, indent=2)
        out.write("\n")
    elif isinstance(data, list):
        table(data, columns or (list(data[0].keys()) if data else []), out)
    elif isinstance(data, dict):
        keys = columns or list(data.keys())
        width = max((len(k) for k in keys), default=0)
        for key in keys:
            print(f"{key.ljust(width)}  {cell(data.get(key), 200)}", file=out)
    elif data is not None:
        print(data, file=out)
