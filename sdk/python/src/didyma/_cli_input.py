"""What the CLI reads from its arguments: bodies inline, from a file or standard input, and JSON payloads."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .errors import ValidationError


def read_body(value: str) -> str:
    """A body given inline, as `@file`, or `-` for standard input."""
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@"):
        return Path(value[1:]).read_text()
    return value


def read_json(value: str) -> Any:
    try:
        return json.loads(read_body(value))
    except ValueError as error:
        raise ValidationError(f"Not valid JSON: {error}", "validation_error", 400) from error


def fields_of(data: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON object's fields when they are `required` and perhaps some `optional`; else a ValidationError naming the difference."""
    if not isinstance(data, dict):
        raise ValidationError("Expected a JSON object.", "validation_error", 400)
    missing, unknown = [k for k in required if k not in data], sorted(set(data) - set(required) - set(optional))
    if missing or unknown:
        raise ValidationError(f"Expected the fields {', '.join(required)}; missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}.", "validation_error", 400)
    return data
