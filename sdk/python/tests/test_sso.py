"""Single sign-on (`didyma login --sso`, `Didyma.login_sso`) without a platform: the PKCE pair, and the loopback listener's refusals (the sign-in
through a real provider is tested in test/integration/sso-keycloak.test.ts)."""

from __future__ import annotations

import base64
import hashlib
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from didyma import sso
from didyma.errors import NotAuthenticated, ValidationError


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
    while "Sign in in your browser: " not in url:
        url += capsys.readouterr().err
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
