"""Weights, limits and priorities through the SDK and the command line."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting
from didyma import Didyma, PermissionDenied, ValidationError
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)


def workspace_id(client: Didyma, name: str) -> int:
    return next(w.id for w in client.workspaces.list() if w.name == name)


def test_staff_set_a_workspace_quota_field_by_field_and_clear_a_limit_with_none(admin: Didyma) -> None:
    ws = admin.workspaces.create(f"quota-{secrets.token_hex(4)}")
    quota = admin.workspaces.quota(ws.id)
    assert (quota.share_weight, quota.max_in_flight, quota.max_queued) == (1, None, None)
    quota = admin.workspaces.set_quota(ws.id, share_weight=4, max_in_flight=2, max_queued=50)
    assert (quota.share_weight, quota.max_in_flight, quota.max_queued) == (4, 2, 50)
    quota = admin.workspaces.set_quota(ws.id, max_queued=None)
    assert (quota.share_weight, quota.max_in_flight, quota.max_queued) == (4, 2, None)
    with pytest.raises(ValidationError) as refused:
        admin.workspaces.set_quota(ws.id, share_weight=0)
    assert "share_weight" in str(refused.value)


def test_a_plain_member_can_neither_read_nor_set_the_quota(member: Didyma, admin: Didyma, setting: Setting) -> None:
    own = workspace_id(member, setting.workspace)
    assert admin.workspaces.quota(own).workspace_id == own
    with pytest.raises(PermissionDenied):
        member.workspaces.quota(own)
    with pytest.raises(PermissionDenied):
        member.workspaces.set_quota(own, share_weight=2)


def test_a_deployment_takes_and_changes_its_limit_of_concurrent_calls(admin: Didyma, setting: Setting) -> None:
    demo = setting.demo_url
    key = f"limited-{secrets.token_hex(4)}"
    created = admin.deployments.create(key, "didyma.registry.OpenInferenceRegistryConnector", {"model_registry_url": demo}, "didyma.proxy.OpenInferenceServerProxy", {"server_proxy_url": demo}, max_concurrent_calls=2)
    try:
        assert created.max_concurrent_calls == 2
        assert admin.deployments.set_max_concurrent_calls(key, 8).max_concurrent_calls == 8
        assert admin.deployments.get(key).max_concurrent_calls == 8
        assert admin.deployments.set_max_concurrent_calls(key, None).max_concurrent_calls is None
    finally:
        admin.deployments.delete(key)


def test_an_invocation_runs_at_the_priority_it_asks(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    done = member.invoke(iris.code, iris.version, session.id, IRIS, priority=9).wait(timeout=60)
    assert done.status == "COMPLETED"
    with pytest.raises(ValidationError):
        member.invoke(iris.code, iris.version, session.id, IRIS, priority=10)


def test_the_command_line_shows_and_sets_quotas_limits_and_priority(cli: Any, admin: Didyma, setting: Setting, iris: Iris) -> None:  # noqa: F811
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    ws = admin.workspaces.create(f"quota-cli-{secrets.token_hex(4)}")
    set_ = as_json(cli("--json", "workspaces", "set-quota", str(ws.id), "--weight", "3", "--max-queued", "20", "--max-in-flight", "none"))
    assert set_ == {"workspace_id": ws.id, "share_weight": 3, "max_in_flight": None, "max_queued": 20}
    shown = [line.split() for line in cli("workspaces", "quota", str(ws.id)).stdout.splitlines()]
    assert shown[:2] == [["workspace_id", str(ws.id)], ["share_weight", "3"]]
    cli("workspaces", "set-quota", str(ws.id), "--weight", "0", code=7)
    cli("workspaces", "set-quota", str(ws.id), code=7)

    demo = setting.demo_url
    key = f"cli-limited-{secrets.token_hex(4)}"
    payload = {
        "deployment_key": key,
        "registry_connector_class": "didyma.registry.OpenInferenceRegistryConnector",
        "registry_connector_init": {"model_registry_url": demo},
        "server_proxy_class": "didyma.proxy.OpenInferenceServerProxy",
        "server_proxy_init": {"server_proxy_url": demo},
        "max_concurrent_calls": 3,
    }
    assert as_json(cli("--json", "deployments", "create", json.dumps(payload)))["max_concurrent_calls"] == 3
    assert as_json(cli("--json", "deployments", "set-limit", key, "none"))["max_concurrent_calls"] is None
    cli("deployments", "delete", key)

    session = as_json(cli("--json", "sessions", "open", iris.code, iris.version))
    done = as_json(cli("--json", "invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--priority", "8", "--wait"))
    assert done["status"] == "COMPLETED"
    cli("invoke", iris.code, iris.version, session["id"], json.dumps(IRIS), "--priority", "12", code=2)
