"""Single sign-on (`didyma login --sso`, `Didyma.login_sso`) without a platform: the PKCE pair, the loopback listener's refusals, and the device
flow's polling against scripted answers (the sign-ins through a real provider are tested in test/integration/sso-keycloak.test.ts and
sso-device.test.ts)."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from didyma import sso
from didyma.errors import DidymaError, NotAuthenticated, PermissionDenied, RateLimited, ValidationError


class Unreachable:
    """A transport that must not be reached: these sign-ins are refused before any code is redeemed."""

    def post_json(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no code should be redeemed")


def test_pkce_pair_is_an_s256_challenge_of_a_fresh_verifier() -> None:
    verifier, challenge = sso.pkce_pair()
    assert 43 <= len(verifier) <= 128
    assert challenge == base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert sso.pkce_pair()[0] != verifier


def sign_in_answered_with(query: str, capsys: pytest.CaptureFixture[str]) -> BaseException:
    """Runs a sign-in whose browser comes back with `query` (STATE stands for the sign-in's own state)."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            sso.sign_in(Unreachable(), "http://127.0.0.1:9/dashboard", "corp", None, open_browser=False, timeout=30)  # type: ignore[arg-type]
        except BaseException as error:  # noqa: BLE001 (handed to the test)
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    url = ""
    deadline = time.monotonic() + 10
    while "Sign in in your browser: " not in url:
        assert thread.is_alive() and time.monotonic() < deadline, f"the sign-in never printed its URL: {failure}"
        url += capsys.readouterr().err
        time.sleep(0.01)
    start = url.split("Sign in in your browser: ", 1)[1].split()[0]
    params = dict(pair.split("=", 1) for pair in start.split("?", 1)[1].split("&"))
    redirect = urllib.parse.unquote(params["redirect_uri"])
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"{redirect}?nothing=here", timeout=5)  # no code, no error: not the answer
    urllib.request.urlopen(f"{redirect}?{query.replace('STATE', params['state'])}", timeout=5).read()
    thread.join(10)
    return failure[0]


def test_refuses_an_answer_with_another_state(capsys: pytest.CaptureFixture[str]) -> None:
    error = sign_in_answered_with("code=abc&state=forged", capsys)
    assert isinstance(error, NotAuthenticated)
    assert "another state" in str(error)


def test_reports_the_provider_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    error = sign_in_answered_with("error=access_denied&error_description=no+groups&state=STATE", capsys)
    assert isinstance(error, NotAuthenticated)
    assert "no groups" in str(error)


def test_gives_up_when_no_browser_comes_back() -> None:
    with pytest.raises(ValidationError, match="No sign-in came back"):
        sso.sign_in(Unreachable(), "http://127.0.0.1:9/dashboard", "corp", None, open_browser=False, timeout=0.2)  # type: ignore[arg-type]


class ScriptedPlatform:
    """The platform's two device routes, answering each poll with the next of `polls` (an error to raise, or the token pair)."""

    def __init__(self, polls: list[Any], started: dict[str, Any] | None = None) -> None:
        self.polls = polls
        self.started = started or {"handle": "the-handle", "user_code": "WDJB-MJHT", "verification_uri": "https://idp.example/device", "interval": 5, "expires_in": 600}
        self.sent: list[tuple[str, Any]] = []

    def post_json(self, server: str, path: str, body: Any = None, *, authenticated: bool = True) -> Any:
        assert server == "auth" and not authenticated
        self.sent.append((path, body))
        if path == "/api/auth/sso/device":
            return self.started
        answer = self.polls.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def pending() -> DidymaError:
    return ValidationError("The sign-in is not finished yet: ask again after the interval.", "authorization_pending", 400)


def slow_down(retry_after: float | None) -> RateLimited:
    error = RateLimited("You are polling faster than the interval.", "slow_down", 429)
    error.retry_after = retry_after
    return error


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds each poll waited, on a clock that moves by them without waiting."""
    slept: list[float] = []
    monkeypatch.setattr(sso.time, "sleep", slept.append)
    monkeypatch.setattr(sso.time, "monotonic", lambda: 1000.0 + sum(slept))
    return slept


def test_device_sign_in_shows_the_code_and_polls_each_interval_until_the_tokens(capsys: pytest.CaptureFixture[str], waits: list[float]) -> None:
    platform = ScriptedPlatform([pending(), pending(), {"access": "a", "refresh": "r"}], {**ScriptedPlatform([]).started, "verification_uri_complete": "https://idp.example/device?user_code=WDJB-MJHT"})
    pair = sso.device_sign_in(platform, "corp", "research", timeout=300)  # type: ignore[arg-type]
    assert pair == {"access": "a", "refresh": "r"}
    assert platform.sent == [("/api/auth/sso/device", {"connection": "corp"})] + [("/api/auth/sso/device/token", {"handle": "the-handle", "workspace": "research"})] * 3
    assert waits == [5, 5, 5]
    said = capsys.readouterr().err
    assert "https://idp.example/device with the code WDJB-MJHT" in said
    assert "https://idp.example/device?user_code=WDJB-MJHT" in said


def test_device_sign_in_polls_more_slowly_when_told_to(waits: list[float]) -> None:
    platform = ScriptedPlatform([slow_down(10), slow_down(None), {"access": "a", "refresh": "r"}])
    sso.device_sign_in(platform, "corp", None, timeout=300)  # type: ignore[arg-type]
    assert waits == [5, 10, 15]
    assert platform.sent[1] == ("/api/auth/sso/device/token", {"handle": "the-handle"})


@pytest.mark.parametrize(
    "refusal",
    [
        ValidationError("This device sign-in has expired or was already used: start it again.", "expired_token", 400),
        PermissionDenied("The sign-in was refused at the identity provider.", "access_denied", 403),
        PermissionDenied("None of your groups at Corp gives access to this platform.", "permission_denied", 403),
    ],
)
def test_device_sign_in_stops_at_a_refusal(refusal: DidymaError, waits: list[float]) -> None:
    platform = ScriptedPlatform([pending(), refusal])
    with pytest.raises(DidymaError) as raised:
        sso.device_sign_in(platform, "corp", None, timeout=300)  # type: ignore[arg-type]
    assert raised.value is refusal
    assert len(waits) == 2


def test_device_sign_in_gives_up_when_the_code_expires(waits: list[float]) -> None:
    platform = ScriptedPlatform([pending()] * 3, {**ScriptedPlatform([]).started, "expires_in": 12})
    with pytest.raises(ValidationError, match="No sign-in was finished within 12 s"):
        sso.device_sign_in(platform, "corp", None, timeout=300)  # type: ignore[arg-type]
    assert waits == [5, 5]
