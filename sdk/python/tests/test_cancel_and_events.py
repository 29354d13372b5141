"""Cancel and the session event stream through the SDK and the command line."""

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


def test_a_session_s_events_follow_an_invocation_and_resume_from_the_last_id(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    done = member.invoke(iris.code, iris.version, session.id, IRIS).wait(timeout=60)
    seen = []
    for event in member.sessions.events(iris.code, iris.version, session.id):
        seen.append(event)
        if event.invocation_id == done.id and event.status == "COMPLETED":
            break
    assert [e.status for e in seen if e.invocation_id == done.id] == ["QUEUED", "IN_PROGRESS", "COMPLETED"]
    resume_from = seen[-1].resume_from
    assert resume_from
    second = member.invoke(iris.code, iris.version, session.id, IRIS).wait(timeout=60)
    after = []
    for event in member.sessions.events(iris.code, iris.version, session.id, last_event_id=resume_from):
        after.append(event)
        if event.invocation_id == second.id and event.status == "COMPLETED":
            break
    assert [e.invocation_id for e in after if e.invocation_id == done.id] == []
    assert [e.status for e in after if e.invocation_id == second.id] == ["QUEUED", "IN_PROGRESS", "COMPLETED"]


def test_the_command_line_prints_a_session_s_events(cli: Any, member: Didyma, setting: Setting, iris: Iris) -> None:  # noqa: F811
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    session = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    done = as_json(cli("--json", "invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--wait"))
    lines = cli("--json", "sessions", "events", iris.code, iris.version, session["id"], "--max", "3").stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert [(e["invocation_id"], e["status"]) for e in events] == [(done["id"], s) for s in ("QUEUED", "IN_PROGRESS", "COMPLETED")]
    assert events[-1]["resume_from"]
    table = cli("sessions", "events", iris.code, iris.version, session["id"], "--max", "1").stdout
    assert done["id"] in table and "QUEUED" in table
