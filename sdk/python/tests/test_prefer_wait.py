"""`invoke(..., wait=…)`: the prediction in one call (`Prefer: wait`), against a stand-in server and the platform."""

from __future__ import annotations

import httpx
import pytest

from conftest import IRIS, Iris, SlowModels
from didyma import Didyma, InvocationFailed
from didyma.auth import ApiToken
from test_wait import URLS, invocation


def client_answering(status: int, body: dict[str, object], seen: list[httpx.Request]) -> Didyma:
    """The POST answers `status` with `body`; reads of the invocation answer it COMPLETED."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST":
            return httpx.Response(status, json=body)
        return httpx.Response(200, json=invocation("COMPLETED"))

    return Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))


def test_a_finished_answer_is_the_result_without_another_request() -> None:
    seen: list[httpx.Request] = []
    pending = client_answering(200, invocation("COMPLETED", response='{"outputs": []}'), seen).invoke("m", "1", "s1", {}, wait=2.5)
    assert pending.finished
    assert pending.wait().status == "COMPLETED"
    assert [(r.method, r.headers.get("prefer")) for r in seen] == [("POST", "wait=3")]


def test_a_queued_answer_is_waited_on_as_without_wait() -> None:
    seen: list[httpx.Request] = []
    pending = client_answering(202, invocation("QUEUED"), seen).invoke("m", "1", "s1", {}, wait=1)
    assert not pending.finished
    assert pending.wait(stream=False).status == "COMPLETED"
    assert [r.method for r in seen] == ["POST", "GET"]


def test_a_finished_error_raises_as_wait_does() -> None:
    pending = client_answering(200, invocation("ERROR", error="model exploded"), []).invoke("m", "1", "s1", {}, wait=5)
    with pytest.raises(InvocationFailed):
        pending.wait()
    assert pending.wait(raise_on_error=False).status == "ERROR"


def test_without_wait_no_preference_is_sent() -> None:
    seen: list[httpx.Request] = []
    client_answering(201, invocation("QUEUED"), seen).invoke("m", "1", "s1", {})
    assert seen[0].headers.get("prefer") is None


def test_the_platform_answers_a_prediction_in_one_call(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    pending = member.invoke(iris.code, iris.version, session.id, IRIS, wait=30)
    assert pending.finished and pending.created.status == "COMPLETED"
    assert pending.created.output()["outputs"]


def test_the_platform_answers_the_queued_invocation_when_the_wait_ends_first(member: Didyma, slow: SlowModels) -> None:
    session = member.open_session(slow.iris, slow.version)
    pending = member.invoke(slow.iris, slow.version, session.id, IRIS, wait=0)
    assert not pending.finished and pending.created.status == "QUEUED"
    assert pending.wait(timeout=60).status == "COMPLETED"
