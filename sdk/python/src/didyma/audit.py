"""The audit trail (auth server): supervisors read their workspace's records, staff every record."""

from __future__ import annotations

from typing import Any

from ._transport import Transport
from .models import AuditRecord
from .paging import Page


class AuditApi:
    """Who changed what, and who was refused, newest first."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(
        self,
        *,
        actor: int | None = None,
        action: str | None = None,
        resource_type: str | None = None,
        resource_id: str | None = None,
        workspace_id: int | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        page_size: int = 100,
    ) -> Page[AuditRecord]:
        """Records matching every filter given: `actor` a user id, `action` an operationId, times in RFC 3339."""
        given: dict[str, Any] = {
            "actor": actor,
            "action": action,
            "resource_type": resource_type,
            "resource_id": resource_id,
            "workspace_id": workspace_id,
            "created_after": created_after,
            "created_before": created_before,
        }
        params = {name: value for name, value in given.items() if value is not None}
        return Page(self._t, "auth", "/api/auth/audit", AuditRecord.from_json, params=params, page_size=page_size)
