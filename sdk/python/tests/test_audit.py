"""The audit trail through the SDK and the CLI: records of what a test just did, filtered and paged."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import pytest

from didyma import Didyma, NotFound, PermissionDenied
from test_cli import as_json, cli  # noqa: F401  (the fixture)
from conftest import Setting


def test_a_supervisor_lists_the_records_of_its_changes_filtered_and_paged(admin: Didyma) -> None:
    key = f"audit-{secrets.token_hex(4)}"
    for _ in range(3):
        with pytest.raises(NotFound):
            admin.deployments.delete(key)
    # Records are written right after each answer: a moment later they are all there.
    deadline = time.monotonic() + 5
    while True:
        records = admin.audit.list(action="deleteDeployment", resource_id=key, page_size=2)
        listed = records.list()
        if len(listed) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert [r.resource for r in listed] == [{"type": "deployment", "id": key}] * 3
    assert records.total == 3
    assert all(r.outcome == 404 and r.actor["type"] == "user" and r.trace_id is None for r in listed)


def test_a_member_may_not_read_the_trail(member: Didyma) -> None:
    with pytest.raises(PermissionDenied):
        member.audit.list().first()


def test_the_cli_lists_records(cli: Any, admin: Didyma, setting: Setting) -> None:  # noqa: F811
    cli("login", "--email", setting.admin_email, "--workspace", setting.workspace, extra={"DIDYMA_PASSWORD": setting.admin_password})
    rows = as_json(cli("--json", "audit", "list", "--action", "obtainToken", "--limit", "5"))
    assert 1 <= len(rows) <= 5 and all(row["action"] == "obtainToken" for row in rows)
    table = cli("audit", "list", "--limit", "3").stdout
    assert table.splitlines()[0].split()[:3] == ["CREATED_AT", "ACTOR", "WORKSPACE_ID"]
    assert json.dumps(rows).count("password") == 0
