"""`invoke(...).wait()`: backoff between polls, a timeout, and ERROR as an exception."""

from __future__ import annotations

import json

import httpx
import pytest

from didyma import Didyma, InvocationFailed, ServerUrls, WaitTimeout
from didyma.auth import ApiToken

URLS = ServerUrls("http://auth.test", "http://private.test", "http://public.test")


def invocation(status: str, **extra: object) -> dict[str, object]:
    return {"id": "i1", "order": 0, "type": "PREDICT", "request": {"session_id": "s1", "request_type": "FEATURES", "body": "{}"}, "status": status, "response": "", "model_key": "", **extra}


def client_answering(statuses: list[str]) -> Didyma:
    answers = iter(statuses)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(201, json=invocation("QUEUED"))
        status = next(answers)
        return httpx.Response(200, json=invocation(status, **({"error": "model exploded"} if status == "ERROR" else {})))

    return Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))


def test_polls_with_doubling_delays_up_to_the_ceiling() -> None:
    delays: list[float] = []
    done = client_answering(["QUEUED", "IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", "COMPLETED"]).invoke("m", "1", "s1", {}).wait(initial_delay=0.1, max_delay=0.3, sleep=delays.append)
    assert done.status == "COMPLETED"
    assert delays == [0.1, 0.2, 0.3, 0.3]


def test_an_error_raises_with_the_final_invocation() -> None:
    with pytest.raises(InvocationFailed) as error:
        client_answering(["IN_PROGRESS", "ERROR"]).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert error.value.invocation.status == "ERROR"
    assert error.value.message == "model exploded"


def test_gives_up_after_the_timeout_with_the_last_state() -> None:
    with pytest.raises(WaitTimeout) as error:
        client_answering(["QUEUED"] * 5).invoke("m", "1", "s1", {}).wait(timeout=0, sleep=lambda _: None)
    assert error.value.last.status == "QUEUED"


def test_a_json_body_is_sent_as_its_text() -> None:
    sent: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(201, json=invocation("QUEUED"))

    client = Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))
    client.invoke("m", "1", "s1", {"a": 1}, with_explanation=True)
    assert sent == [{"type": "PREDICT", "request": {"type": "FEATURES", "body": '{"a": 1}'}, "with_explanation": True}]


def test_client_credentials_post_the_form_of_the_grant_once() -> None:
    forms: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/o/token/":
            forms.append(request.content.decode())
            return httpx.Response(200, json={"access_token": "tok", "token_type": "Bearer", "expires_in": 900, "scope": ""})
        assert request.headers["authorization"] == "Bearer tok"
        return httpx.Response(200, json=[])

    client = Didyma.with_client_credentials("app", "secret", "default", auth_url=URLS.auth, private_url=URLS.private, public_url=URLS.public, http=httpx.Client(transport=httpx.MockTransport(handler)))
    client.models.list().list()
    client.models.list().list()
    assert forms == ["grant_type=client_credentials&client_id=app&client_secret=secret&workspace=default"]
