"""HTTP to the three servers: base URLs, the bearer token, one retry after a refresh, typed errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import httpx

from .errors import error_from_response

Server = Literal["auth", "private", "public"]


@dataclass(frozen=True)
class ServerUrls:
    """Where the auth, private and public servers answer (`didyma dev`: ports 8080, 8081, 8082)."""

    auth: str
    private: str
    public: str

    def of(self, server: Server) -> str:
        return str(getattr(self, server)).rstrip("/")


class Transport:
    """Sends requests to one of the servers with the caller's credentials."""

    def __init__(self, urls: ServerUrls, credentials: Any = None, *, timeout: float = 30.0, http: httpx.Client | None = None) -> None:
        self.urls = urls
        self.credentials = credentials
        self.http = http or httpx.Client(timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self.http.close()

    def request(
        self,
        server: Server,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        data: dict[str, str] | None = None,
        files: Any = None,
        authenticated: bool = True,
        url: str | None = None,
    ) -> httpx.Response:
        """The answer, or the typed error of an answer of 400 or more. A 401 renews the credentials once."""
        target = url or self.urls.of(server) + path
        clean = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        for attempt in (1, 2):
            headers = {"accept": "application/json"}
            if authenticated:
                if self.credentials is None:
                    from .errors import NotAuthenticated

                    raise NotAuthenticated("No credentials: log in first.", "not_authenticated", 401)
                headers["authorization"] = f"Bearer {self.credentials.access_token(self)}"
            response = self.http.request(method, target, json=json, params=clean or None, data=data, files=files, headers=headers)
            if response.status_code == 401 and authenticated and attempt == 1:
                self.credentials.invalidate()
                continue
            if response.status_code >= 400:
                raise error_from_response(response)
            return response
        raise AssertionError("unreachable")

    def get_json(self, server: Server, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request(server, "GET", path, params=params).json()

    def post_json(self, server: Server, path: str, body: Any = None, *, authenticated: bool = True, params: dict[str, Any] | None = None) -> Any:
        response = self.request(server, "POST", path, json=body, authenticated=authenticated, params=params)
        return response.json() if response.content else None


def _param(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
