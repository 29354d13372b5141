"""The auth server's resources: tokens, workspaces, invitations, API tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._transport import Transport
from .models import ApiToken, Invitation, TokenData, Workspace, WorkspaceQuota
from .paging import Page


class _Unchanged:
    """The default of a quota field left as it is (None already means "no limit")."""

    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()


class AuthApi:
    """Verification of the current token and the public keys."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def verify(self) -> TokenData:
        """The claims of the token in use (user, workspace, permissions)."""
        return TokenData.from_json(self._t.get_json("auth", "/api/auth/token/verify")["token_data"])

    def sso_connections(self) -> list[dict[str, Any]]:
        """The single sign-on connections the platform is configured with, never their client secrets (staff)."""
        return list(self._t.get_json("auth", "/api/auth/sso/connection"))

    def jwks(self) -> dict[str, Any]:
        return dict(self._t.request("auth", "GET", "/api/auth/jwks.json", authenticated=False).json())


class WorkspacesApi:
    """Workspaces: any user lists their own; staff users manage all of them."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[Workspace]:
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "auth", "/api/auth/workspace", Workspace.from_json, params, page_size)

    def create(self, name: str, disabled: bool = False) -> Workspace:
        return Workspace.from_json(self._t.post_json("auth", "/api/auth/workspace", {"name": name, "disabled": disabled}))

    def get(self, workspace_id: int) -> Workspace:
        return Workspace.from_json(self._t.get_json("auth", f"/api/auth/workspace/{workspace_id}"))

    def update(self, workspace_id: int, disabled: bool) -> Workspace:
        return Workspace.from_json(self._t.request("auth", "PUT", f"/api/auth/workspace/{workspace_id}", json={"disabled": disabled}).json())

    def delete(self, workspace_id: int) -> None:
        self._t.request("auth", "DELETE", f"/api/auth/workspace/{workspace_id}")

    def quota(self, workspace_id: int) -> WorkspaceQuota:
        """The workspace's weight and limits (staff, or a supervisor of that workspace)."""
        return WorkspaceQuota.from_json(self._t.get_json("auth", f"/api/auth/workspace/{workspace_id}/quota"))

    def set_quota(
        self,
        workspace_id: int,
        *,
        share_weight: int = UNCHANGED,
        max_in_flight: int | None = UNCHANGED,
        max_queued: int | None = UNCHANGED,
    ) -> WorkspaceQuota:
        """Changes only the fields given (staff); None removes a limit."""
        given = {"share_weight": share_weight, "max_in_flight": max_in_flight, "max_queued": max_queued}
        body = {name: value for name, value in given.items() if value is not UNCHANGED}
        return WorkspaceQuota.from_json(self._t.request("auth", "PATCH", f"/api/auth/workspace/{workspace_id}/quota", json=body).json())

    def upload_logo(self, workspace_id: int, image: str | Path | bytes, content_type: str = "image/png", file_name: str = "logo.png") -> None:
        data = image if isinstance(image, bytes) else Path(image).read_bytes()
        self._t.request("auth", "PUT", f"/api/auth/workspace/{workspace_id}/logo", files={"logo": (file_name, data, content_type)})

    def download_logo(self, workspace_id: int) -> bytes:
        return self._t.request("auth", "GET", f"/api/auth/workspace/{workspace_id}/logo").content


class InvitationsApi:
    """Invitations (supervisors of their workspace, staff anywhere) and registration through one."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, email: str, role: str = "user", workspace_id: int | None = None) -> Invitation:
        body: dict[str, Any] = {"email": email, "role": role}
        if workspace_id is not None:
            body["workspace_id"] = workspace_id
        return Invitation.from_json(self._t.post_json("auth", "/api/auth/invitation", body))

    def list(self, page_size: int = 100, *, workspace_id: int | None = None, created_after: str | None = None, created_before: str | None = None) -> Page[Invitation]:
        """Pending invitations, newest first (staff: of every workspace, or of `workspace_id`)."""
        params = {"workspace_id": workspace_id, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "auth", "/api/auth/invitation", Invitation.from_json, params, page_size)

    def revoke(self, invitation_id: int) -> None:
        self._t.request("auth", "DELETE", f"/api/auth/invitation/id/{invitation_id}")

    def describe(self, token: str) -> dict[str, Any]:
        """What the registration form shows: e-mail, workspace, role, and whether the address is registered."""
        return dict(self._t.request("auth", "GET", f"/api/auth/invitation/{token}", authenticated=False).json())

    def accept(self, token: str) -> dict[str, Any]:
        """Accepts as the logged-in user (already registered, same e-mail)."""
        return dict(self._t.post_json("auth", f"/api/auth/invitation/{token}/accept") or {})

    def register(self, token: str, name: str, surname: str, password: str, preferred_language: str = "en") -> dict[str, Any]:
        """Registers a new user from an invitation; the terms of service and privacy policy are accepted."""
        body = {
            "token": token,
            "name": name,
            "surname": surname,
            "password": password,
            "preferred_language": preferred_language,
            "accept_terms": True,
            "accept_privacy": True,
        }
        return dict(self._t.post_json("auth", "/api/auth/register", body, authenticated=False) or {})


class ApiTokensApi:
    """API tokens of a workspace (made in the dashboard; listed, revoked and deleted here)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self, workspace_id: int, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[ApiToken]:
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "auth", f"/api/auth/workspace/{workspace_id}/token", ApiToken.from_json, params, page_size)

    def get(self, workspace_id: int, token_id: int) -> ApiToken:
        return ApiToken.from_json(self._t.get_json("auth", f"/api/auth/workspace/{workspace_id}/token/{token_id}"))

    def set_active(self, workspace_id: int, token_id: int, is_active: bool) -> ApiToken:
        path = f"/api/auth/workspace/{workspace_id}/token/{token_id}"
        return ApiToken.from_json(self._t.request("auth", "PATCH", path, json={"is_active": is_active}).json())

    def delete(self, workspace_id: int, token_id: int) -> None:
        self._t.request("auth", "DELETE", f"/api/auth/workspace/{workspace_id}/token/{token_id}")
