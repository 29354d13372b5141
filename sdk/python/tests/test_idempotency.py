"""Idempotency-Key: the SDK sends one key per logical call, the same on its own retry, and a repeated
call with the caller's key answers the first invocation instead of queuing another."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from conftest import IRIS, Iris
from didyma import Didyma, ServerUrls, UnprocessableEntity
from didyma._transport import Transport

INVOCATION = {
    "id": "i1",
    "order": 0,
    "type": "PREDICT",
    "request": {"session_id": "s1", "request_type": "FEATURES", "body": "{}"},
    "status": "QUEUED",
    "response": "",
    "model_key": "",
}


class Renewable:
    """Credentials whose first token the server refuses, as an expired access token."""

    def __init__(self) -> None:
        self.tokens = iter(["stale", "fresh"])
        self.current = next(self.tokens)

    def access_token(self, transport: Transport) -> str:
        return self.current

    def invalidate(self) -> None:
        self.current = next(self.tokens)


def offline(handler: httpx.MockTransport) -> Didyma:
    urls = ServerUrls("http://auth.test", "http://private.test", "http://public.test")
    return Didyma(urls, Renewable(), http=httpx.Client(transport=handler))


def test_one_generated_key_per_call_sent_again_on_the_retry_after_a_refresh() -> None:
    seen: list[tuple[str, str | None]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.headers["authorization"], request.headers.get("idempotency-key")))
        if request.headers["authorization"] == "Bearer stale":
            return httpx.Response(401, json={"message": "expired", "message_code": "not_authenticated"})
        return httpx.Response(201, json=INVOCATION)

    with offline(httpx.MockTransport(answer)) as client:
        client.invoke("m", "1", "s1", IRIS)
        client.invoke("m", "1", "s1", IRIS)
    (first_auth, first_key), (retry_auth, retry_key), (_, other_key) = seen
    assert (first_auth, retry_auth) == ("Bearer stale", "Bearer fresh")
    assert first_key is not None and uuid.UUID(first_key)
    assert retry_key == first_key, "the retry is the same logical call"
    assert other_key is not None and other_key != first_key, "each call has its own key"


def test_the_callers_key_is_sent_as_given_and_a_reused_key_is_unprocessable() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["request"]["body"] != json.dumps(IRIS):
            return httpx.Response(422, json={"message": "reused", "message_code": "idempotency_key_reused"})
        assert request.headers["idempotency-key"] == "order-42"
        return httpx.Response(201, json=INVOCATION)

    with offline(httpx.MockTransport(answer)) as client:
        client.transport.credentials.invalidate()
        assert client.invoke("m", "1", "s1", IRIS, idempotency_key="order-42").id == "i1"
        with pytest.raises(UnprocessableEntity) as error:
            client.invoke("m", "1", "s1", {"other": 1}, idempotency_key="order-42")
    assert (error.value.status, error.value.message_code) == (422, "idempotency_key_reused")


def test_a_repeated_invoke_with_one_key_queues_one_invocation(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version, idempotency_key=str(uuid.uuid4()))
    key = str(uuid.uuid4())
    first = member.invoke(iris.code, iris.version, session.id, IRIS, idempotency_key=key)
    again = member.invoke(iris.code, iris.version, session.id, IRIS, idempotency_key=key)
    assert again.id == first.id
    assert [i.id for i in member.invocations.list(iris.code, iris.version, session.id)] == [first.id]
    with pytest.raises(UnprocessableEntity):
        member.invoke(iris.code, iris.version, session.id, {**IRIS, "petal_width": 2.0}, idempotency_key=key)
