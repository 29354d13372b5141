"""Cancel through the SDK and the command line: what has finished stays as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting
from didyma import Conflict, Didyma
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)


def test_a_finished_invocation_cannot_be_cancelled_and_a_done_session_has_nothing_to_cancel(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    pending = member.invoke(iris.code, iris.version, session.id, IRIS)
    done = pending.wait(timeout=60)
    assert done.finished and done.status == "COMPLETED"
    with pytest.raises(Conflict) as refused:
        pending.cancel()
    assert refused.value.message_code == "invocation_finished"
    assert member.sessions.cancel(iris.code, iris.version, session.id) == 0
    assert member.sessions.cancel(iris.code, iris.version, session.id, status="QUEUED") == 0


def test_the_command_line_cancels_and_says_why_it_cannot(cli: Any, member: Didyma, setting: Setting, iris: Iris) -> None:  # noqa: F811
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    session = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    created = as_json(cli("--json", "invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--wait"))
    assert created["status"] == "COMPLETED"
    cli("cancel", iris.code, iris.version, session["id"], created["id"], code=6)
    assert as_json(cli("--json", "sessions", "cancel", iris.code, iris.version, session["id"])) == {"cancelled": 0}
