"""How the CLI prints: aligned tables that fit the terminal and key/value lines for people, JSON for scripts."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

# Without a terminal to fit (output captured by a program), a table cell is cut at this width.
CELL_WIDTH = 60
# Fitting a table never cuts a column narrower than this.
MIN_WIDTH = 6


def plain(value: Any) -> Any:
    """A JSON-able form of an SDK record (its API fields) or of anything JSON-able."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_") and f.name != "raw"}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def text_of(value: Any) -> str:
    """A value on one line: text as it is, a flat object as `name=value` pairs, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.replace("\n", " ")
    data = plain(value)
    if isinstance(data, dict) and data and all(isinstance(v, (str, int, float)) for v in data.values()):
        return " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in data.items())
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def terminal_width() -> int | None:
    """The width tables are fitted to: COLUMNS, else the terminal's that standard output or standard error
    writes to (output piped into `head` still shows on that terminal), else None."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for stream in (sys.stdout, sys.stderr):
        try:
            return os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            continue
    return None


# Besides ids: the names the next command takes, and related_to (an invocation id).
IDENTIFIERS = ("id", "model_code", "version", "deployment_key", "storage_key", "related_to")


def is_identifier(column: str) -> bool:
    """Ids and keys are what the next command needs: a table never cuts them."""
    return column in IDENTIFIERS or column.endswith("_id")


def fit(widths: list[int], columns: Sequence[str], room: int) -> list[int]:
    """Column widths whose row fits in `room` characters: the widest column other than the identifiers loses a
    character at a time, none below MIN_WIDTH; identifiers stay whole (a table that cannot fit stays wider)."""
    fitted = list(widths)
    excess = sum(fitted) + 2 * (len(fitted) - 1) - room
    while excess > 0:
        shrinkable = [i for i, c in enumerate(columns) if fitted[i] > MIN_WIDTH and not is_identifier(c)]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: fitted[i])
        fitted[widest] -= 1
        excess -= 1
    return fitted


def capped(widths: list[int], columns: Sequence[str], headings: Sequence[str]) -> list[int]:
    """Without a terminal: every cell but an identifier's cut at CELL_WIDTH."""
    return [w if is_identifier(c) else min(w, max(CELL_WIDTH, len(h))) for w, c, h in zip(widths, columns, headings)]


def table(rows: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO = sys.stdout, width: int | None = None, wide: bool = False) -> None:
    """Rows under upper-case headings, fitted to `width` (cells cut with "…"), or cells cut at CELL_WIDTH without
    one; `wide`: nothing cut."""
    body = [[text_of(row.get(c)) for c in columns] for row in rows]
    headings = [c.upper() for c in columns]
    natural = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headings)]
    if wide:
        widths = natural
    else:
        widths = fit(natural, columns, width) if width else capped(natural, columns, headings)
    for line in [headings, *body]:
        print("  ".join(cut(v, w).ljust(w) for v, w in zip(line, widths)).rstrip(), file=out)


def emit(value: Any, as_json: bool, columns: Sequence[str] | None = None, out: TextIO = sys.stdout, wide: bool = False) -> None:
    """`value` as JSON, or as a table of `columns` (a list; `wide`: uncut) or as key/value lines, values in full
    (one record)."""
    data = plain(value)
    if as_json:
        json.dump(data, out, indent=2)
        out.write("\n")
    elif isinstance(data, list):
        table(data, columns or (list(data[0].keys()) if data else []), out, terminal_width(), wide)
    elif isinstance(data, dict):
        keys = columns or list(data.keys())
        width = max((len(k) for k in keys), default=0)
        for key in keys:
            print(f"{key.ljust(width)}  {text_of(data.get(key))}".rstrip(), file=out)
    elif data is not None:
        print(data, file=out)
