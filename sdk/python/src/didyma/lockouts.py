"""Log-in lock-outs (auth server, staff): read and lift an account's or an OAuth client id's."""

from __future__ import annotations

from urllib.parse import quote

from ._transport import Transport
from .models import LoginLock


class LockoutsApi:
    """Failures are counted per (account, source): one source past its limit is refused on that account only."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def account(self, email: str) -> LoginLock:
        """The account's failures, delay and locked-out sources (each an opaque id)."""
        return LoginLock.from_json(self._t.get_json("auth", f"/api/auth/lockout/account/{quote(email, safe='')}"))

    def lift_account(self, email: str) -> None:
        """Every source's failures on the account start again from nothing."""
        self._t.request("auth", "DELETE", f"/api/auth/lockout/account/{quote(email, safe='')}")

    def client(self, client_id: str) -> LoginLock:
        """The client-credentials lock-out of an OAuth client id."""
        return LoginLock.from_json(self._t.get_json("auth", f"/api/auth/lockout/client/{quote(client_id, safe='')}"))

    def lift_client(self, client_id: str) -> None:
        """Every source's failures on the client id start again from nothing."""
        self._t.request("auth", "DELETE", f"/api/auth/lockout/client/{quote(client_id, safe='')}")
