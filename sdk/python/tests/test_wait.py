"""`invoke(...).wait()` against a stand-in server: the event stream, polling where there is none, a timeout,
and ERROR as an exception."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from didyma import Didyma, InvocationFailed, ServerUrls, WaitTimeout
from didyma.auth import ApiToken

URLS = ServerUrls("http://auth.test", "http://private.test", "http://public.test")


def invocation(status: str, **extra: object) -> dict[str, object]:
    return {"id": "i1", "order": 0, "type": "PREDICT", "request": {"session_id": "s1", "request_type": "FEATURES", "body": "{}"}, "status": status, "response": "", "model_key": "", **extra}


def event(status: str, event_id: str | None = None, invocation_id: str = "i1") -> str:
    data = json.dumps({"id": "1", "invocation_id": invocation_id, "status": status, "created_at": "2026-01-01T00:00:00Z"})
    return f"{'id: ' + event_id + chr(10) if event_id else ''}event: invocation\ndata: {data}\n\n"


def client_answering(statuses: list[str], streams: list[httpx.Response] | None = None, seen: list[httpx.Request] | None = None) -> Didyma:
    """Reads of the invocation answer `statuses` in turn; requests for the event stream answer `streams`
    in turn (none: 404, as a server without one)."""
    answers = iter(statuses)
    stream_answers = iter(streams or [])

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if request.method == "POST":
            return httpx.Response(201, json=invocation("QUEUED"))
        if request.url.path.endswith("/events"):
            return next(stream_answers, httpx.Response(404, json={"message": "Not found.", "message_code": "not_found"}))
        status = next(answers)
        return httpx.Response(200, json=invocation(status, **({"error": "model exploded"} if status == "ERROR" else {})))

    return Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))


def sse(*frames: str) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content="retry: 1000\n\n" + "".join(frames))


def test_follows_the_stream_to_the_final_status_and_reads_the_invocation_once_more() -> None:
    seen: list[httpx.Request] = []
    stream = sse(event("QUEUED", "1:1:"), event("IN_PROGRESS", "2:2:"), event("QUEUED", invocation_id="other"), event("COMPLETED", "3:3:"))
    done = client_answering(["QUEUED", "COMPLETED"], [stream], seen).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert done.status == "COMPLETED"
    assert [(r.method, r.url.path.rsplit("/", 1)[-1]) for r in seen] == [("POST", "invocation"), ("GET", "i1"), ("GET", "events"), ("GET", "i1")]


def test_an_earlier_attempt_s_final_status_does_not_end_the_wait() -> None:
    stream = sse(event("ERROR"), event("QUEUED", "1:1:"), event("COMPLETED", "2:2:"))
    done = client_answering(["QUEUED", "QUEUED", "COMPLETED"], [stream]).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert done.status == "COMPLETED"


def test_a_stream_that_ends_is_followed_again_from_its_last_id() -> None:
    seen: list[httpx.Request] = []
    pauses: list[float] = []
    first, second = sse(event("QUEUED", "5:5:")), sse(event("CANCELLED", "6:6:"))
    done = client_answering(["QUEUED", "CANCELLED"], [first, second], seen).invoke("m", "1", "s1", {}).wait(sleep=pauses.append)
    assert done.status == "CANCELLED"
    streams = [r for r in seen if r.url.path.endswith("/events")]
    assert [r.headers.get("last-event-id") for r in streams] == [None, "5:5:"]
    assert pauses == [1.0]


def test_a_later_wait_in_the_session_goes_on_from_the_last_position_seen() -> None:
    seen: list[httpx.Request] = []
    client = client_answering(["QUEUED", "COMPLETED", "QUEUED", "COMPLETED"], [sse(event("COMPLETED", "7:7:")), sse(event("COMPLETED", "8:8:"))], seen)
    client.invoke("m", "1", "s1", {}).wait()
    client.invoke("m", "1", "s1", {}).wait()
    assert [r.headers.get("last-event-id") for r in seen if r.url.path.endswith("/events")] == [None, "7:7:"]


def test_an_answer_that_is_not_an_event_stream_makes_it_poll() -> None:
    page = httpx.Response(200, headers={"content-type": "text/html"}, content="<html>")
    done = client_answering(["QUEUED", "COMPLETED"], [page]).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert done.status == "COMPLETED"


def test_streams_at_their_cap_make_it_poll() -> None:
    capped = httpx.Response(429, headers={"retry-after": "10"}, json={"message": "You have 10 event streams open on this server, the most one user may.", "message_code": "quota_exceeded"})
    done = client_answering(["QUEUED", "COMPLETED"], [capped]).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert done.status == "COMPLETED"


class Silent(httpx.SyncByteStream):
    """A stream that never sends a line: its first read times out, as behind a proxy that holds it back."""

    def __iter__(self) -> Iterator[bytes]:
        raise httpx.ReadTimeout("nothing came")


def test_a_stream_that_sends_nothing_makes_it_poll() -> None:
    held_back = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Silent())
    delays: list[float] = []
    done = client_answering(["QUEUED", "COMPLETED"], [held_back]).invoke("m", "1", "s1", {}).wait(initial_delay=0.1, sleep=delays.append)
    assert done.status == "COMPLETED" and delays == [0.1]


def test_a_finished_invocation_is_returned_without_the_stream() -> None:
    seen: list[httpx.Request] = []
    assert client_answering(["COMPLETED"], [], seen).invoke("m", "1", "s1", {}).wait().status == "COMPLETED"
    assert not [r for r in seen if r.url.path.endswith("/events")]


def test_without_an_event_stream_it_polls_with_doubling_delays_up_to_the_ceiling() -> None:
    delays: list[float] = []
    done = client_answering(["QUEUED", "IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", "COMPLETED"]).invoke("m", "1", "s1", {}).wait(initial_delay=0.1, max_delay=0.3, sleep=delays.append)
    assert done.status == "COMPLETED"
    assert delays == [0.1, 0.2, 0.3, 0.3]


def test_an_error_raises_with_the_final_invocation() -> None:
    with pytest.raises(InvocationFailed) as error:
        client_answering(["IN_PROGRESS", "ERROR"], [sse(event("ERROR", "1:1:"))]).invoke("m", "1", "s1", {}).wait(sleep=lambda _: None)
    assert error.value.invocation.status == "ERROR"
    assert error.value.message == "model exploded"


def test_gives_up_after_the_timeout_with_the_last_state() -> None:
    with pytest.raises(WaitTimeout) as error:
        client_answering(["QUEUED"] * 5).invoke("m", "1", "s1", {}).wait(timeout=0, sleep=lambda _: None)
    assert error.value.last.status == "QUEUED"


def test_stream_false_polls() -> None:
    seen: list[httpx.Request] = []
    done = client_answering(["QUEUED", "COMPLETED"], [sse(event("COMPLETED", "1:1:"))], seen).invoke("m", "1", "s1", {}).wait(stream=False, sleep=lambda _: None)
    assert done.status == "COMPLETED"
    assert not [r for r in seen if r.url.path.endswith("/events")]


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
