"""What the command line shows people, offline: tables fitted to the terminal, model outputs as named values,
logins in local time, `--json` anywhere, and a quiet exit when the reader of its output goes."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import didyma
from didyma._cli_commands import build_parser
from didyma._cli_login import claim_lines, relative
from didyma._cli_output import table, terminal_width
from didyma._cli_results import output_summary, show_invocations

SESSION = "3f2a0c5e-1111-2222-3333-444455556666"
ROWS = [{"id": SESSION, "state": "OPEN", "model_key": {"model_code": "iris-classifier", "model_version": "1"}, "created_at": "2026-01-01T12:00:00.000Z"}]
PREDICTION = {
    "model_name": "iris-classifier",
    "outputs": [
        {"name": "predicted_class", "datatype": "BYTES", "shape": [1], "data": ["setosa"]},
        {"name": "probabilities", "datatype": "FP64", "shape": [1, 3], "data": [0.97361, 0.02638, 0.0000123], "parameters": {"classes": ["setosa", "versicolor", "virginica"]}},
    ],
}
EXPLANATION = {
    "outputs": [
        {"name": "contributions", "datatype": "FP64", "shape": [1, 4], "data": [0.1, -0.2, 1.5, 0.7], "parameters": {"features": "sepal_length,sepal_width,petal_length,petal_width"}},
        {"name": "intercept", "datatype": "FP64", "shape": [1], "data": [0.33]},
    ]
}


def invocation(id: str, type: str, response: object, **more: object) -> dict[str, object]:
    return {"id": id, "type": type, "status": "COMPLETED", "model_key": "", "request": {"body": '{"sepal_length":5.1}'}, "response": json.dumps(response), "error": None, **more}


def printed_table(width: int | None) -> list[str]:
    out = io.StringIO()
    table(ROWS * 2, ["id", "state", "model_key", "created_at"], out, width)
    return out.getvalue().splitlines()


def test_a_table_fits_the_terminal_cutting_other_columns_before_ids() -> None:
    lines = printed_table(80)
    assert max(len(line) for line in lines) <= 80
    assert all(SESSION in line for line in lines[1:]), "the id the next command needs stays whole"
    assert "…" in lines[1]
    assert printed_table(None)[1].split() == [SESSION, "OPEN", "model_code=iris-classifier", "model_version=1", "2026-01-01T12:00:00.000Z"]
    assert max(len(line) for line in printed_table(30)) <= 40, "a narrow terminal cuts ids too, never a column below six"


def test_the_width_is_columns_else_the_terminal_of_standard_output_or_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "93")
    assert terminal_width() == 93
    monkeypatch.delenv("COLUMNS")
    # Under pytest neither stream is a terminal: nothing to fit.
    assert terminal_width() is None


def test_a_prediction_and_its_explanation_are_shown_as_named_values_in_full() -> None:
    explained = invocation("e1", "EXPLAIN", EXPLANATION, model_key="iris-explainer:1")
    out = io.StringIO()
    show_invocations({**invocation("p1", "PREDICT", PREDICTION), "explanations": [explained]}, argparse.Namespace(), out)
    assert out.getvalue().splitlines() == [
        "PREDICT  p1  COMPLETED",
        '  input            {"sepal_length":5.1}',
        "  predicted_class  setosa",
        "  probabilities    setosa 0.9736  versicolor 0.02638  virginica 1.23e-05",
        "",
        "EXPLAIN  e1  COMPLETED  iris-explainer:1",
        '  input          {"sepal_length":5.1}',
        "  contributions  sepal_length 0.1  sepal_width -0.2  petal_length 1.5  petal_width 0.7",
        "  intercept      0.33",
    ]


def test_outputs_of_other_servers_are_shown_whole_and_summed_up_on_one_line_in_tables() -> None:
    response = {"predictions": [[1, 2], [3, 4]], "note": "x" * 300}
    out = io.StringIO()
    show_invocations(invocation("m1", "PREDICT", response), argparse.Namespace(), out)
    lines = out.getvalue().splitlines()[2:]
    assert lines[0].startswith("  output  {")
    assert json.loads("\n".join(line[len("  output  ") :] for line in lines)) == response, "all of it, uncut"
    assert output_summary(json.dumps(PREDICTION)) == "predicted_class setosa; probabilities setosa 0.9736  versicolor 0.02638  virginica 1.23e-05"
    assert output_summary("plain text") == "plain text"


def test_a_login_is_told_in_local_time_and_from_now() -> None:
    now = 1_800_000_000.0
    claims = {"user_id": 7, "workspace": "research", "permissions": ["user", "supervisor"], "exp": int(now) + 900, "iat": int(now) - 5, "jti": "j", "token_type": "access"}
    lines = dict(claim_lines(claims, {"kind": "password", "email": "ada@example.test"}, now))
    assert lines["user"] == "ada@example.test (id 7)"
    assert (lines["workspace"], lines["roles"]) == ("research", "user, supervisor")
    assert lines["valid"].startswith("until 2027-01-15 ") and "(in 15 minutes), then renewed by the saved login" in lines["valid"]
    assert str(claims["exp"]) not in json.dumps(lines), "no epoch seconds"
    assert [relative(s) for s in (30, -30, 3600 * 23.9, -86400 * 3)] == ["in under a minute", "just now", "in 24 hours", "3 days ago"]


@pytest.mark.parametrize(
    "argv",
    [["--json", "models", "list"], ["models", "list", "--json"], ["models", "--json", "list"], ["invoke", "m", "1", "s", "{}", "--json", "--wait"]],
)
def test_json_is_taken_before_or_after_the_command(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).json is True


def test_without_json_it_is_off() -> None:
    assert build_parser().parse_args(["models", "list"]).json is False


def test_a_reader_that_closes_early_gets_no_broken_pipe_error(tmp_path: Path) -> None:
    env = {**os.environ, "DIDYMA_CONFIG": str(tmp_path / "cli.json"), "PYTHONPATH": str(Path(didyma.__file__).parents[1])}
    child = subprocess.Popen([sys.executable, "-m", "didyma", "logout"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    # Closed before the command writes, as `head` does once it has its lines.
    child.stdout.close()
    errors = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0, errors
    assert errors == ""
