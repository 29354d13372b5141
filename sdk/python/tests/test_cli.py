"""The `didyma` command line against the running platform: tables, --json and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet
import pytest

import didyma
from conftest import IRIS, Iris, Setting, invite_member
from didyma import Didyma, ServerUrls


@pytest.fixture()
def cli(tmp_path: Path, urls: ServerUrls) -> Any:
    env = {
        **os.environ,
        "DIDYMA_CONFIG": str(tmp_path / "cli.json"),
        "DIDYMA_AUTH_URL": urls.auth,
        "DIDYMA_PRIVATE_URL": urls.private,
        "DIDYMA_PUBLIC_URL": urls.public,
    }
    env.pop("DIDYMA_TOKEN", None)
    # The package as this test imports it, installed or from its source folder.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(didyma.__file__).parents[1]), os.environ.get("PYTHONPATH")]))

    def run(*args: str, code: int = 0, stdin: str | None = None, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "didyma", *args], env={**env, **(extra or {})}, input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == code, f"didyma {' '.join(args)} → {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    return run


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def test_without_a_login_commands_exit_3(cli: Any) -> None:
    assert "didyma login" in cli("models", "list", code=3).stderr
    assert "Python client" in cli("--version").stdout


def test_the_walkthrough_from_the_command_line(cli: Any, admin: Didyma, setting: Setting, iris: Iris, tmp_path: Path) -> None:
    email, password = invite_member(admin)
    claims = as_json(cli("--json", "login", "--email", email, "--workspace", setting.workspace, extra={"DIDYMA_PASSWORD": password}))
    assert claims["workspace"] == setting.workspace
    saved = json.loads((tmp_path / "cli.json").read_text())
    assert password not in json.dumps(saved)
    assert oct((tmp_path / "cli.json").stat().st_mode & 0o777) == "0o600"

    table = cli("models", "list").stdout
    assert table.splitlines()[0].split()[:2] == ["MODEL_CODE", "VERSION"]
    assert "iris-classifier" in table

    session = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    done = as_json(cli("--json", "invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--explain", "--wait"))
    assert done["status"] == "COMPLETED"
    other = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    key = ["--idempotency-key", f"cli-{other['id']}"]
    once = as_json(cli("--json", "invoke", iris.code, iris.version, other["id"], json.dumps(IRIS), *key))
    assert as_json(cli("--json", "invoke", iris.code, iris.version, other["id"], json.dumps(IRIS), *key))["id"] == once["id"]
    cli("invoke", iris.code, iris.version, other["id"], json.dumps({**IRIS, "petal_width": 2.0}), *key, code=7)
    feedback = as_json(cli("--json", "feedback", iris.code, iris.version, session["id"], done["id"], "-", stdin='{"correct": true}'))
    assert feedback["related_to"] == done["id"]

    cli("export", "session", iris.code, iris.version, session["id"], "--storage", iris.storage_key, code=6)
    cli("sessions", "close", iris.code, iris.version, session["id"])
    cli("invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), code=6)
    dataset = as_json(cli("--json", "export", "session", iris.code, iris.version, session["id"], "--storage", iris.storage_key))
    assert dataset["row_count"] == 1
    listed = cli("datasets", "list").stdout
    assert dataset["id"] in listed and listed.startswith("ID")
    out = as_json(cli("--json", "datasets", "download", dataset["id"], "-o", "rows.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert out["rows"] == 1 and rows[0]["invocation_id"] == done["id"]
    assert rows[0]["feedback"][0]["body"] == '{"correct": true}'
    cli("export", "session", iris.code, iris.version, session["id"], "--storage", iris.storage_key, "--format", "csv", code=2)
    parquet = as_json(cli("--json", "datasets", "export", iris.code, iris.version, session["id"], "--storage", iris.storage_key, "--format", "parquet"))
    assert parquet["table"]["format"] == "parquet"
    out = as_json(cli("--json", "datasets", "download", parquet["id"], "--table"))
    assert (out["file"], out["format"]) == (f"{parquet['name']}-v{parquet['version']}.table.parquet", "parquet")
    [table_row] = pyarrow.parquet.read_table(tmp_path / out["file"]).to_pylist()
    assert (table_row["invocation_id"], table_row["feedback_correct"], table_row["input_sepal_length"]) == (done["id"], True, IRIS["sepal_length"])

    invocations = as_json(cli("--json", "sessions", "invocations", iris.code, iris.version, session["id"]))
    assert [i["type"] for i in invocations] == ["DATA_SUBMISSION", "EXPLAIN", "PREDICT"]


def test_exit_codes_say_what_went_wrong(cli: Any, setting: Setting, iris: Iris) -> None:
    cli("login", "--email", setting.admin_email, "--password", "wrong", "--workspace", setting.workspace, code=3)
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    cli("models", "get", "no-such-model", "1", code=5)
    cli("models", "register", '{"model_code": "x"}', code=7)
    cli("models", "register", "{not json", code=7)
    cli("sessions", "close", iris.code, iris.version, "00000000-0000-4000-8000-000000000000", code=5)
    cli("deployments", "list")
    cli("deployments", "create", '{"deployment_key": "x"}', code=7)
    cli("metrics", "query", "total_models", "no-equals-sign", code=7)
    cli("no-such-command", code=2)
    assert cli("logout").returncode == 0
    cli("whoami", code=3)


def test_api_token_and_client_credential_logins(cli: Any, setting: Setting) -> None:
    assert as_json(cli("--json", "login", "--api-token", setting.api_token))["workspace"] == setting.workspace
    cli("models", "list")
    cli("whoami", extra={"DIDYMA_TOKEN": "dy_revoked"}, code=3)
    # Generated ids may start with "-": given as --option=value, and the secret from the environment.
    login = ["--json", "login", f"--client-id={setting.client_id}", "--workspace", setting.workspace]
    assert as_json(cli(*login, extra={"DIDYMA_CLIENT_SECRET": setting.client_secret}))["workspace"] == setting.workspace
    cli("sessions", "list", "iris-classifier", "no-such-version", code=5)


def test_people_read_logins_results_and_tables_in_their_terminal(cli: Any, admin: Didyma, setting: Setting, iris: Iris) -> None:
    email, password = invite_member(admin)
    said = cli("login", "--email", email, "--workspace", setting.workspace, extra={"DIDYMA_PASSWORD": password}).stdout
    claims = as_json(cli("whoami", "--json"))
    assert f"{email} (id {claims['user_id']})" in said and setting.workspace in said and "saved in" in said
    assert re.search(r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(in 1[45] minutes\)", said), said
    assert str(claims["exp"]) not in said and str(claims["iat"]) not in said, "no epoch seconds"

    session = as_json(cli("sessions", "open", iris.code, iris.version, "--json"))
    shown = cli("invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--explain", "--wait").stdout
    prediction, explanation = shown.split("\n\n")
    assert prediction.startswith("PREDICT ") and "COMPLETED" in prediction.splitlines()[0]
    assert re.search(r"^  probabilities +setosa [\d.e-]+  versicolor [\d.e-]+  virginica [\d.e-]+$", prediction, re.M), prediction
    assert re.search(r"^  predicted_class +setosa$", prediction, re.M), prediction
    assert explanation.startswith("EXPLAIN ") and f"{iris.explainer}:{iris.version}" in explanation.splitlines()[0]
    assert re.search(r"^  contributions +sepal_length \S+  sepal_width \S+  petal_length \S+  petal_width \S+$", explanation, re.M), explanation
    assert "…" not in shown and '"outputs"' not in shown, "values in full, not the raw answer"

    listed = cli("sessions", "invocations", iris.code, iris.version, session["id"], extra={"COLUMNS": "100"}).stdout.splitlines()
    invocations = as_json(cli("sessions", "invocations", iris.code, iris.version, session["id"], "--json"))
    # Two whole ids (id, related_to) and five columns at their narrowest: wider than 100, ids never cut.
    assert max(len(line) for line in listed) <= 112
    assert [line.split()[0] for line in listed[1:]] == [i["id"] for i in invocations]
    assert invocations[0]["related_to"] in listed[1], "the explanation names its prediction in full"
    assert listed[-1].startswith(invocations[-1]["id"])
    wide = cli("sessions", "invocations", iris.code, iris.version, session["id"], "--wide", extra={"COLUMNS": "100"}).stdout
    assert "…" not in wide and "predicted_class setosa; probabilities" in wide, "--wide cuts nothing"
    assert listed[-1].endswith("  predi…"), "the output summed up, not the raw answer, and cut before any id"
    sessions = cli("sessions", "list", iris.code, iris.version, extra={"COLUMNS": "70"}).stdout.splitlines()
    assert max(len(line) for line in sessions) <= 70 and any(line.startswith(session["id"]) for line in sessions)
