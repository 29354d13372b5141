"""Retry policies, attempts and re-runs through the SDK and the command line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting
from didyma import Conflict, Didyma, RetryPolicy
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)


def test_a_failed_invocation_runs_again_with_its_attempts_kept(admin: Didyma, iris: Iris) -> None:
    card = admin.files.upload(iris.storage_key, b"# Fails", file_name="fails.md", content_type="text/markdown", server="private")
    payload = {
        "model_code": "always-fails",
        "version": iris.version,
        "name": "Always fails",
        "description": "Fails on purpose",
        "input_schema": {"type": "json"},
        "output_schema": {"type": "json"},
        "model_card_file_id": card.file_id,
    }
    model = admin.models.register(payload, retry_policy=RetryPolicy(max_attempts=2, backoff_ms=0))
    assert model.retry_policy is not None
    assert (model.retry_policy.max_attempts, model.retry_policy.backoff_ms, model.retry_policy.retry_on) == (2, 0, ["unreachable", "timeout", "server_error"])

    session = admin.open_session("always-fails", iris.version)
    pending = admin.invoke("always-fails", iris.version, session.id, {"x": 1})
    failed = pending.wait(timeout=60, raise_on_error=False)
    assert failed.status == "ERROR"
    first = admin.invocations.get("always-fails", iris.version, session.id, pending.id).attempts
    assert first is not None and [(a.attempt, a.outcome) for a in first] == [(1, "ERROR")]

    requeued = pending.retry()
    assert requeued.status == "QUEUED" and requeued.error is None and len(requeued.attempts or []) == 1
    again = pending.wait(timeout=60, raise_on_error=False)
    assert again.status == "ERROR"
    attempts = admin.invocations.get("always-fails", iris.version, session.id, pending.id).attempts or []
    assert [(a.attempt, a.outcome) for a in attempts] == [(1, "ERROR"), (2, "ERROR")]
    assert all(a.executor and a.ended_at for a in attempts)
    assert all(listed.attempts is None for listed in admin.invocations.list("always-fails", iris.version, session.id))


def test_a_completed_invocation_is_not_run_again(cli: Any, member: Didyma, setting: Setting, iris: Iris) -> None:  # noqa: F811
    session = member.open_session(iris.code, iris.version)
    pending = member.invoke(iris.code, iris.version, session.id, IRIS)
    assert pending.wait(timeout=60).status == "COMPLETED"
    with pytest.raises(Conflict) as refused:
        pending.retry()
    assert refused.value.message_code == "invocation_not_failed"

    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    opened = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    created = as_json(cli("--json", "invoke", iris.code, iris.version, opened["id"], json.dumps(IRIS), "--wait"))
    cli("retry", iris.code, iris.version, opened["id"], created["id"], code=6)
