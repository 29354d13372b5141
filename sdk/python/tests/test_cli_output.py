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


def test_a_table_fits_the_terminal_cutting_other_columns_never_ids() -> None:
    lines = printed_table(80)
    assert max(len(line) for line in lines) <= 80
    assert all(SESSION in line for line in lines[1:]), "the id the next command needs stays whole"
    assert "…" in lines[1]
    assert printed_table(None)[1].split() == [SESSION, "OPEN", "model_code=iris-classifier", "model_version=1", "2026-01-01T12:00:00.000Z"]
    narrow = printed_table(30)
    assert all(SESSION in line for line in narrow[1:]), "a narrow terminal cuts the other columns to six, never an id"
    assert narrow[1].split()[1:] == ["OPEN", "model…", "2026-…"]


INVOCATIONS = [
    {"id": SESSION, "order": 12, "type": "PREDICT", "status": "COMPLETED", "related_to": SESSION.replace("3f", "4e"), "response": "x" * 90, "error": None}
]


def test_every_id_column_stays_whole_at_80_columns_even_when_the_row_cannot_fit() -> None:
    out = io.StringIO()
    table(INVOCATIONS, ["id", "order", "type", "status", "related_to", "response", "error"], out, 80)
    row = out.getvalue().splitlines()[1]
    assert SESSION in row and SESSION.replace("3f", "4e") in row
    assert "x" * 7 not in row, "the response is what gives way"


def test_wide_cuts_nothing_with_or_without_a_terminal() -> None:
    for width in (30, 80, None):
        out = io.StringIO()
        table(INVOCATIONS, ["id", "response"], out, width, wide=True)
        assert out.getvalue().splitlines()[1] == f"{SESSION}  {'x' * 90}"
    out = io.StringIO()
    table(INVOCATIONS, ["id", "response"], out, None)
    assert out.getvalue().splitlines()[1] == f"{SESSION}  {'x' * 59}…", "without a terminal other cells are cut at 60"


def test_wide_is_accepted_before_and_after_a_list_command() -> None:
    parser = build_parser()
    assert parser.parse_args(["--wide", "sessions", "list", "m", "1"]).wide is True
    assert parser.parse_args(["sessions", "list", "m", "1", "--wide"]).wide is True
    assert parser.parse_args(["sessions", "invocations", "m", "1", "s", "--wide"]).wide is True
    assert parser.parse_args(["sessions", "list", "m", "1"]).wide is False


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


def login_without_a_terminal(tmp_path: Path, *options: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DIDYMA_PASSWORD", "DIDYMA_TOKEN")}
    env.update(DIDYMA_CONFIG=str(tmp_path / "cli.json"), PYTHONPATH=str(Path(didyma.__file__).parents[1]))
    # Port 9 (discard) refuses connections: nothing here reaches a platform.
    argv = [sys.executable, "-m", "didyma", "--auth-url", "http://127.0.0.1:9", "login", "--email", "a@example.com", *options]
    return subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=60, start_new_session=True)


def test_login_without_a_terminal_or_a_password_says_how_to_give_one(tmp_path: Path) -> None:
    done = login_without_a_terminal(tmp_path)
    assert done.returncode == 7, done.stderr
    assert done.stderr.splitlines() == ["didyma: validation_error: No password and no terminal to ask for one: set DIDYMA_PASSWORD, or pipe it in with --password-stdin."]
    assert not (tmp_path / "cli.json").exists()


def test_password_stdin_reads_the_first_line_and_refuses_an_empty_one(tmp_path: Path) -> None:
    empty = login_without_a_terminal(tmp_path, "--password-stdin")
    assert (empty.returncode, empty.stderr.strip()) == (7, "didyma: validation_error: --password-stdin read no password: standard input was empty.")
    given = login_without_a_terminal(tmp_path, "--password-stdin", stdin="secret\n")
    assert given.returncode == 10 and given.stderr.startswith("didyma: cannot reach the platform"), "with a password, the login goes on to the server"
