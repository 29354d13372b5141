"""Invocation and feedback bodies: the API carries JSON text, and the SDK sends any value as its JSON text."""

from __future__ import annotations

import json

import httpx

from conftest import IRIS, SlowModels
from didyma import Didyma, ServerUrls
from didyma.auth import ApiToken

URLS = ServerUrls("http://auth.test", "http://private.test", "http://public.test")
INVOCATION = {"id": "i1", "order": 0, "type": "PREDICT", "request": {"session_id": "s1", "body": "{}"}, "status": "QUEUED", "response": "", "model_key": ""}


def test_each_body_is_sent_as_json_text() -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["request"]["body"])
        return httpx.Response(201, json=INVOCATION)

    with Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler))) as client:
        for body in ("Which species has the widest petals?", json.dumps(IRIS), IRIS, 42, ["a", 1]):
            client.invoke("m", "1", "s1", body, request_type="PROMPT")
        client.feedback("m", "1", "s1", "i1", "looks right")
    assert sent == ['"Which species has the widest petals?"', json.dumps(IRIS), json.dumps(IRIS), "42", '["a", 1]', '"looks right"']


def test_a_plain_string_is_taken_by_the_platform(member: Didyma, slow: SlowModels) -> None:
    session = member.open_session(slow.iris, slow.version)
    pending = member.invoke(slow.iris, slow.version, session.id, "a prompt, not JSON", request_type="PROMPT")
    assert json.loads(pending.created.request["body"]) == "a prompt, not JSON"
    # Run to its end (the Iris model has no use for a prompt), so that nothing of it is left for later tests.
    assert pending.wait(timeout=60, raise_on_error=False).finished
