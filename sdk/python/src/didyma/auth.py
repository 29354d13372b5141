"""Ways to authenticate: a password login (with refresh), an API token, OAuth client credentials."""

from __future__ import annotations

import base64
import json
import time
from typing import TYPE_CHECKING, Protocol

from .errors import NotAuthenticated

if TYPE_CHECKING:
    from ._transport import Transport

# Renew this long before the access token expires, so a request never carries one that dies in flight.
_EARLY_SECONDS = 30.0


def token_expiry(token: str) -> float | None:
    """The `exp` of a JWT (read, not verified: the server verifies), or None for an opaque token."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        exp = json.loads(base64.urlsafe_b64decode(padded)).get("exp")
    except (ValueError, AttributeError):
        return None
    return float(exp) if isinstance(exp, (int, float)) else None


class Credentials(Protocol):
    """Gives the bearer token for the next request, and forgets it when the server refused it."""

    def access_token(self, transport: Transport) -> str: ...

    def invalidate(self) -> None: ...


class ApiToken:
    """An API token (`dy_…`) made in the dashboard: bound to one user and workspace, used as it is."""

    def __init__(self, token: str) -> None:
        self.token = token

    def access_token(self, transport: Transport) -> str:
        return self.token

    def invalidate(self) -> None:
        """An API token cannot be renewed: a refusal is final."""


class TokenPair:
    """An access and refresh token pair: the access token is renewed with the refresh token before it expires.

    With `email` and `password` the pair logs in again when the refresh token is refused too (expired, or
    rotated by another client). `on_refresh` sees every new pair, e.g. to save it.
    """

    def __init__(
        self,
        access: str | None = None,
        refresh: str | None = None,
        *,
        email: str | None = None,
        password: str | None = None,
        workspace: str | None = None,
        on_refresh: object = None,
    ) -> None:
        self.access = access
        self.refresh = refresh
        self.email = email
        self.password = password
        self.workspace = workspace
        self.on_refresh = on_refresh

    def access_token(self, transport: Transport) -> str:
        if self.access and not self._expiring(self.access):
            return self.access
        if self.refresh and not self._expiring(self.refresh):
            try:
                return self._take(transport.post_json("auth", "/api/auth/token/refresh", {"refresh": self.refresh}, authenticated=False))
            except NotAuthenticated:
                if self.password is None:
                    raise
        if self.email is None or self.password is None:
            raise NotAuthenticated("The session has expired: log in again.", "not_authenticated", 401)
        body: dict[str, object] = {"email": self.email, "password": self.password}
        if self.workspace is not None:
            body["workspace"] = self.workspace
        return self._take(transport.post_json("auth", "/api/auth/token/obtain", body, authenticated=False))

    def invalidate(self) -> None:
        self.access = None

    def _take(self, pair: dict[str, str]) -> str:
        self.access, self.refresh = pair["access"], pair["refresh"]
        if callable(self.on_refresh):
            self.on_refresh(self)
        return self.access

    @staticmethod
    def _expiring(token: str) -> bool:
        exp = token_expiry(token)
        return exp is not None and exp - _EARLY_SECONDS <= time.time()


class ClientCredentials:
    """An OAuth application's client id and secret (made in the dashboard): the token acts as its service user."""

    def __init__(self, client_id: str, client_secret: str, workspace: str) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.workspace = workspace
        self._token: str | None = None
        self._expires_at = 0.0

    def access_token(self, transport: Transport) -> str:
        if self._token and self._expires_at - _EARLY_SECONDS > time.time():
            return self._token
        form = {"grant_type": "client_credentials", "client_id": self.client_id, "client_secret": self.client_secret, "workspace": self.workspace}
        answer = transport.request("auth", "POST", "/o/token/", data=form, authenticated=False).json()
        self._token = str(answer["access_token"])
        self._expires_at = time.time() + float(answer.get("expires_in", 300))
        return self._token

    def invalidate(self) -> None:
        self._token = None
