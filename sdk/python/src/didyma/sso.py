"""Single sign-on for `Didyma.login_sso` and `didyma login --sso`: a sign-in through the platform's identity provider in the browser, which comes back to a
listener of this process on the loopback interface (RFC 8252) with a one-time code, redeemed with a PKCE verifier; or, with `device`, a sign-in on
another device (RFC 8628) for a machine without a browser, which this process polls the platform for."""

from __future__ import annotations

import base64
import hashlib
import secrets
import sys
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from ._transport import Transport
from .errors import DidymaError, NotAuthenticated, RateLimited, ValidationError


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")
    return verifier, challenge


class _Listener(HTTPServer):
    """The loopback listener the browser comes back to; it keeps the first query that carries a code or an error."""

    answer: dict[str, str] | None = None


class _Callback(BaseHTTPRequestHandler):
    server: _Listener

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        query = {name: values[0] for name, values in parse_qs(urlparse(self.path).query).items()}
        if "code" not in query and "error" not in query:
            self.send_error(404)
            return
        self.server.answer = query
        body = b"didyma: signed in. You can close this window and go back to the terminal.\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
        """Quiet: the terminal shows the sign-in's outcome, not the listener's requests."""


def sign_in(transport: Transport, dashboard_url: str, connection: str, workspace: str | None, *, open_browser: bool, timeout: float) -> dict[str, str]:
    """Signs in through the connection in the browser and returns the token pair the platform issues."""
    listener = _Listener(("127.0.0.1", 0), _Callback)
    try:
        redirect_uri = f"http://127.0.0.1:{listener.server_address[1]}/callback"
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = urlencode({"redirect_uri": redirect_uri, "code_challenge": challenge, "code_challenge_method": "S256", "state": state})
        url = f"{dashboard_url.rstrip('/')}/sso/{connection}?{query}"
        print(f"Sign in in your browser: {url}", file=sys.stderr, flush=True)
        if open_browser:
            webbrowser.open(url)
        answer = _wait(listener, timeout)
    finally:
        listener.server_close()
    if answer.get("state") != state:
        raise NotAuthenticated("The sign-in came back with another state: start it again.", "not_authenticated", 401)
    if "error" in answer:
        raise NotAuthenticated(f"The sign-in was refused: {answer.get('error_description') or answer['error']}.", "not_authenticated", 401)
    body: dict[str, str] = {"code": answer["code"], "code_verifier": verifier, "redirect_uri": redirect_uri}
    if workspace:
        body["workspace"] = workspace
    return dict(transport.post_json("auth", "/api/auth/sso/token", body, authenticated=False))


def _wait(listener: _Listener, timeout: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while listener.answer is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ValidationError(f"No sign-in came back within {timeout:.0f} s: run `didyma login --sso` again.", "validation_error")
        listener.timeout = left
        listener.handle_request()
    return listener.answer


def device_sign_in(transport: Transport, connection: str, workspace: str | None, *, timeout: float) -> dict[str, str]:
    """Signs in through the connection on any device with a browser (RFC 8628): prints where to go and the code to enter, then polls the
    platform every interval until the person is done there, and returns the token pair the platform issues."""
    started = transport.post_json("auth", "/api/auth/sso/device", {"connection": connection}, authenticated=False)
    complete = started.get("verification_uri_complete")
    print(f"Sign in at {started['verification_uri']} with the code {started['user_code']}", file=sys.stderr, flush=True)
    if complete:
        print(f"or open: {complete}", file=sys.stderr, flush=True)
    body = {"handle": started["handle"], **({"workspace": workspace} if workspace else {})}
    interval = float(started["interval"])
    deadline = time.monotonic() + min(timeout, float(started["expires_in"]))
    while time.monotonic() + interval <= deadline:
        time.sleep(interval)
        try:
            return dict(transport.post_json("auth", "/api/auth/sso/device/token", body, authenticated=False))
        except DidymaError as error:
            interval = _next_interval(error, interval)
    raise ValidationError(f"No sign-in was finished within {min(timeout, float(started['expires_in'])):.0f} s: run `didyma login --sso {connection} --device` again.", "validation_error")


def _next_interval(error: DidymaError, interval: float) -> float:
    """The interval to wait before the next poll, or the error again when the sign-in is over (expired, refused, or any other error)."""
    if error.message_code == "authorization_pending":
        return interval
    if error.message_code == "slow_down":
        # RFC 8628 §3.5: five seconds more; the platform's Retry-After says the same.
        return error.retry_after if isinstance(error, RateLimited) and error.retry_after else interval + 5
    raise error
