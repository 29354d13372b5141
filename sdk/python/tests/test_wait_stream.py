"""`wait()` over the session's event stream, against the platform: it reads the invocation once before and
once after, and never polls while it waits, whatever the outcome, on time, and through a cut connection."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import httpx
import pytest

from conftest import IRIS, Setting, SlowModels
from didyma import Didyma, Invocation, InvocationFailed, WaitTimeout
from relay import Relay


class Recorded:
    """A client of the platform that keeps the path of every request it sends."""

    def __init__(self, setting: Setting, public_url: str | None = None) -> None:
        self.requests: list[httpx.Request] = []
        http = httpx.Client(timeout=30, event_hooks={"request": [self.requests.append]})
        u = setting.urls
        self.client = Didyma.login(setting.admin_email, setting.admin_password, setting.workspace, auth_url=u.auth, private_url=u.private, public_url=public_url or u.public, http=http)

    def kinds_since(self, start: int) -> list[str]:
        """What each request from `start` on asked for: `events`, `check_progress`, or `invocation` (a read)."""
        ends = [request.url.path.rsplit("/", 1)[-1] for request in self.requests[start:]]
        return [end if end in ("events", "check_progress") else "invocation" for end in ends]

    def events_requests(self) -> list[httpx.Request]:
        return [request for request in self.requests if request.url.path.endswith("/events")]

    def wait_in_background(self, model: str, version: str, **wait: float) -> tuple[int, Future[Invocation]]:
        """Invokes `model` in a new session and waits for it in another thread: where the wait's requests start, and its outcome."""
        session = self.client.open_session(model, version)
        pending = self.client.invoke(model, version, session.id, IRIS)
        start = len(self.requests)
        return start, ThreadPoolExecutor(1).submit(pending.wait, **wait)

    def until_following(self, timeout: float = 10.0) -> None:
        """Returns once the wait has asked for the event stream."""
        deadline = time.monotonic() + timeout
        while not self.events_requests():
            assert time.monotonic() < deadline, "wait() never asked for the event stream"
            time.sleep(0.02)


@pytest.fixture
def recorded(setting: Setting) -> Iterator[Recorded]:
    client = Recorded(setting)
    yield client
    client.client.close()


def test_an_invocation_that_completes_is_awaited_over_the_stream(recorded: Recorded, slow: SlowModels) -> None:
    start, waiting = recorded.wait_in_background(slow.iris, slow.version, timeout=60)
    done = waiting.result(timeout=90)
    assert done.status == "COMPLETED" and done.output() is not None
    assert recorded.kinds_since(start) == ["invocation", "events", "invocation"]


def test_an_invocation_that_fails_raises_and_is_not_polled(recorded: Recorded, slow: SlowModels) -> None:
    start, waiting = recorded.wait_in_background(slow.failing, slow.version, timeout=60)
    with pytest.raises(InvocationFailed) as failed:
        waiting.result(timeout=90)
    assert failed.value.invocation.status == "ERROR"
    assert recorded.kinds_since(start) == ["invocation", "events", "invocation"]


def test_an_invocation_cancelled_while_awaited_is_returned(recorded: Recorded, admin: Didyma, slow: SlowModels) -> None:
    session = recorded.client.open_session(slow.iris, slow.version)
    pending = recorded.client.invoke(slow.iris, slow.version, session.id, IRIS)
    start = len(recorded.requests)
    waiting = ThreadPoolExecutor(1).submit(pending.wait, timeout=60)
    recorded.until_following()
    admin.invocations.cancel(slow.iris, slow.version, session.id, pending.id)
    assert waiting.result(timeout=30).status == "CANCELLED"
    assert recorded.kinds_since(start) == ["invocation", "events", "invocation"]


def test_the_timeout_raises_with_the_state_read_at_the_deadline(recorded: Recorded, slow: SlowModels) -> None:
    start, waiting = recorded.wait_in_background(slow.iris, slow.version, timeout=0.5)
    began = time.monotonic()
    with pytest.raises(WaitTimeout) as late:
        waiting.result(timeout=30)
    assert time.monotonic() - began < 1.9, "wait() overran its timeout"
    assert late.value.last.status in ("QUEUED", "IN_PROGRESS")
    assert recorded.kinds_since(start) == ["invocation", "events", "invocation"]


def test_a_cut_connection_is_followed_again_from_the_last_event(setting: Setting, admin: Didyma, slow: SlowModels) -> None:
    relay = Relay(setting.urls.public)
    recorded = Recorded(setting, public_url=relay.url)
    try:
        session = recorded.client.open_session(slow.iris, slow.version)
        pending = recorded.client.invoke(slow.iris, slow.version, session.id, IRIS)
        waiting = ThreadPoolExecutor(1).submit(pending.wait, timeout=60)
        recorded.until_following()
        time.sleep(0.5)  # the stream's first batch arrives
        relay.cut()
        assert not admin.invocations.get(slow.iris, slow.version, session.id, pending.id).finished
        assert waiting.result(timeout=60).status == "COMPLETED"
        streams = recorded.events_requests()
        assert len(streams) == 2 and streams[0].headers.get("last-event-id") is None and streams[1].headers.get("last-event-id")
        assert "check_progress" not in recorded.kinds_since(0)
    finally:
        recorded.client.close()
        relay.close()
