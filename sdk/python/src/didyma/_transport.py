"""HTTP to the three servers: base URLs, the bearer token, one retry after a refresh, typed errors."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any, Literal

import httpx

from .errors import NotAnEventStream, error_from_response

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
        idempotency_key: str | None = None,
        headers: dict[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> httpx.Response:
        """The answer, or the typed error of an answer of 400 or more. A 401 renews the credentials once,
        and the retry carries the same `idempotency_key` (sent as the Idempotency-Key header). `read_timeout`
        replaces the client's for an answer the server holds back on purpose (`Prefer: wait`)."""
        target = url or self.urls.of(server) + path
        clean = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        timeout: Any = httpx.USE_CLIENT_DEFAULT if read_timeout is None else httpx.Timeout(self.http.timeout.connect, read=read_timeout)
        for attempt in (1, 2):
            sent = {"accept": "application/json", **(headers or {})}
            if idempotency_key is not None:
                sent["idempotency-key"] = idempotency_key
            if authenticated:
                if self.credentials is None:
                    from .errors import NotAuthenticated

                    raise NotAuthenticated("No credentials: log in first.", "not_authenticated", 401)
                sent["authorization"] = f"Bearer {self.credentials.access_token(self)}"
            resendable = files is None and (method in ("GET", "HEAD") or idempotency_key is not None)
            response = self._send(method, target, resendable, json=json, params=clean or None, data=data, files=files, headers=sent, timeout=timeout)
            if response.status_code == 401 and authenticated and attempt == 1:
                self.credentials.invalidate()
                continue
            if response.status_code >= 400:
                raise error_from_response(response)
            return response
        raise AssertionError("unreachable")

    def _send(self, method: str, target: str, resendable: bool, **options: Any) -> httpx.Response:
        """One request, sent once more on a new connection when it is idempotent and its connection closed before
        any answer: a server that stops (a rolling upgrade) closes its idle kept-alive connections, and one may
        close as the request goes out, which HTTP lets a client recover from (RFC 9112, section 9.3.1)."""
        try:
            return self.http.request(method, target, **options)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if not resendable:
                raise
            return self.http.request(method, target, **options)

    def stream_lines(self, server: Server, path: str, *, headers: dict[str, str] | None = None, read_timeout: float | None = None) -> Iterator[str]:
        """The lines of an answer that stays open (Server-Sent Events), as they come, each read waiting at most
        `read_timeout` seconds (None: for ever); the typed error of an answer of 400 or more, NotAnEventStream
        for an answer of another type. A 401 renews the credentials once."""
        target = self.urls.of(server) + path
        timeout = httpx.Timeout(self.http.timeout.connect, read=read_timeout)
        for attempt in (1, 2):
            if self.credentials is None:
                from .errors import NotAuthenticated

                raise NotAuthenticated("No credentials: log in first.", "not_authenticated", 401)
            sent = {"accept": "text/event-stream", **(headers or {}), "authorization": f"Bearer {self.credentials.access_token(self)}"}
            with self.http.stream("GET", target, headers=sent, timeout=timeout) as response:
                if response.status_code == 401 and attempt == 1:
                    self.credentials.invalidate()
                    continue
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response)
                if not response.headers.get("content-type", "").startswith("text/event-stream"):
                    raise NotAnEventStream(f"{path} answered {response.headers.get('content-type') or 'no content type'}, not an event stream.", "not_event_stream", response.status_code)
                yield from response.iter_lines()
                return

    def get_json(self, server: Server, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request(server, "GET", path, params=params).json()

    def post_json(
        self, server: Server, path: str, body: Any = None, *, authenticated: bool = True, params: dict[str, Any] | None = None, idempotency_key: str | None = None
    ) -> Any:
        response = self.request(server, "POST", path, json=body, authenticated=authenticated, params=params, idempotency_key=idempotency_key)
        return response.json() if response.content else None


def idempotency_key_or_new(key: str | None) -> str:
    """The caller's Idempotency-Key, or a fresh one for this logical call (its retries send it again)."""
    return key if key is not None else str(uuid.uuid4())


def _param(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
