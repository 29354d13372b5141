"""How the CLI shows invocations to people: each one's status, input and output, the model's output tensors
as named values, in full."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any, TextIO

from ._cli_output import plain, table, terminal_width

Line = tuple[str, str]


def show_invocations(result: Any, _args: argparse.Namespace, out: TextIO) -> None:
    """An invocation, then the explanations that followed it (`invoke --explain --wait`), one block each."""
    data = plain(result)
    for number, invocation in enumerate([data, *data.get("explanations", [])]):
        if number:
            print(file=out)
        show_invocation(invocation, out)


def show_invocation_table(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    """Invocations as a table, each response as its output on one line."""
    rows = [{**row, "response": output_summary(row.get("response") or "")} for row in plain(result)]
    table(rows, args.columns, out, terminal_width(), args.wide)


def show_invocation(invocation: dict[str, Any], out: TextIO) -> None:
    heading = [invocation["type"], invocation["id"], invocation["status"], invocation.get("model_key") or ""]
    print("  ".join(part for part in heading if part), file=out)
    lines: list[Line] = []
    body = (invocation.get("request") or {}).get("body")
    if body:
        lines.append(("input", one_line(body)))
    if invocation.get("error"):
        lines.append(("error", invocation["error"]))
    lines.extend(output_lines(invocation.get("response") or ""))
    width = max((len(name) for name, _ in lines), default=0)
    for name, text in lines:
        print(f"  {name.ljust(width)}  {text}".rstrip(), file=out)


def one_line(text: str) -> str:
    """JSON text without its spaces and line breaks (any other text as it is)."""
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return text.replace("\n", " ")


def output_lines(response: str) -> list[Line]:
    """A model's response as named lines: one per output tensor (Open Inference Protocol), else the JSON in full."""
    if not response:
        return []
    try:
        parsed = json.loads(response)
    except ValueError:
        return [("output", response)]
    if isinstance(parsed, dict) and isinstance(parsed.get("outputs"), list):
        lines: list[Line] = [("file", describe_file(parsed["file"]))] if isinstance(parsed.get("file"), dict) else []
        for tensor in parsed["outputs"]:
            rows = tensor_rows(tensor)
            lines.extend((str(tensor.get("name", "output")) if i == 0 else "", row) for i, row in enumerate(rows))
        return lines
    text = json.dumps(parsed, indent=2, ensure_ascii=False).splitlines()
    return [("output" if i == 0 else "", row) for i, row in enumerate(text)]


def output_summary(response: str) -> str:
    """The output on one line, for a table's cell: each tensor's values after its name."""
    lines = output_lines(response)
    if not lines:
        return ""
    if lines[0][0] == "output":
        return one_line(response)
    return "; ".join(f"{name} {text}" for name, text in lines if name)


def describe_file(record: dict[str, Any]) -> str:
    return f"{record.get('file_name', '')} ({record.get('size', '?')} bytes, file {record.get('file_id', '')})"


def tensor_rows(tensor: dict[str, Any]) -> list[str]:
    """The tensor's values, one line per row of its last dimension, each value after its label when the
    tensor's parameters name them (class names, feature names)."""
    values = list(flatten(tensor.get("data", [])))
    if (tensor.get("parameters") or {}).get("content_type") == "base64":
        return [f"<{len(str(v)) * 3 // 4} bytes>" for v in values]
    shape = [int(d) for d in tensor.get("shape") or [] if isinstance(d, int) and d >= 0]
    size = shape[-1] if len(shape) > 1 and shape[-1] > 0 else len(values)
    labels = labels_of(tensor.get("parameters") or {}, size) if len(shape) > 1 else None
    rows = [values[i : i + size] for i in range(0, len(values), size or 1)] or [[]]
    if labels:
        return ["  ".join(f"{label} {number(v)}" for label, v in zip(labels, row)) for row in rows]
    return ["  ".join(number(v) for v in row) for row in rows]


def labels_of(parameters: dict[str, Any], size: int) -> list[str] | None:
    """Names for the `size` values of a row, from the first parameter that has exactly that many."""
    for value in parameters.values():
        names = value.split(",") if isinstance(value, str) else value
        if isinstance(names, list) and len(names) == size and size > 1 and all(isinstance(n, str) for n in names):
            return [n.strip() for n in names]
    return None


def flatten(data: Any) -> Iterator[Any]:
    if isinstance(data, list):
        for item in data:
            yield from flatten(item)
    else:
        yield data


def number(value: Any) -> str:
    """A value as people read it: floats to four significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value)

