"""Waiting for an invocation to finish: over its session's event stream, or by polling where there is none."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing

import httpx

from ._events import session_events
from ._transport import Transport
from .errors import DidymaError, NotAnEventStream
from .models import Invocation

FINAL_STATUSES = frozenset({"COMPLETED", "ERROR", "CANCELLED"})
# What a server without an event stream, or a proxy that cannot pass one on, answers instead; and 429,
# the caller's or its workspace's streams at their cap: a wait then polls rather than fails.
NO_STREAM_STATUSES = frozenset({404, 405, 406, 429, 501, 502, 503, 504})
# Longer than the server's 15 s heartbeat: a connection silent this long is dead.
SILENCE_LIMIT_S = 20.0
# A read may end this long after the deadline before the connection is opened again with a shorter read timeout.
OVERRUN_S = 1.0
# What the server's `retry:` asks between connections.
RECONNECT_PAUSE_S = 1.0


class StreamUnavailable(Exception):
    """The server has no event stream for this session (or it never arrives): wait() polls instead."""


class StreamEnded(Exception):
    """The server ended the stream (it is shutting down): connect again after the pause it asks for."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self._at = time.monotonic() + seconds

    def left(self) -> float:
        return self._at - time.monotonic()


class Follower:
    """Follows a session's events, over as many connections as it takes, until one invocation finishes."""

    def __init__(self, transport: Transport, path: str, invocation_id: str, fetch: Callable[[], Invocation], position: str | None) -> None:
        self._transport = transport
        self._path = path
        self._invocation_id = invocation_id
        self._fetch = fetch
        self.position = position

    def until_finished(self, deadline: Deadline, pause: Callable[[float], None]) -> Invocation | None:
        """The finished invocation, fetched once its final status arrives; None at the deadline."""
        while (left := deadline.left()) > 0:
            try:
                done = self._one_connection(deadline, min(left, SILENCE_LIMIT_S))
            except (httpx.TransportError, StreamEnded):
                done = None
                pause(max(0.0, min(RECONNECT_PAUSE_S, deadline.left())))
            if done is not None:
                return done
        return None

    def _one_connection(self, deadline: Deadline, read_timeout: float) -> Invocation | None:
        """The finished invocation, or None to connect again: at once when the deadline is too near for this
        connection's read timeout, after a pause when the server ended the stream (it is shutting down)."""
        heard = False
        try:
            with closing(session_events(self._transport, self._path, self.position, read_timeout=read_timeout)) as events:
                for event in events:
                    heard = True
                    if event is not None:
                        self.position = event.resume_from or self.position
                        if event.invocation_id == self._invocation_id and event.status in FINAL_STATUSES:
                            # An earlier attempt's final status (before a retry) comes too: the invocation itself says.
                            current = self._fetch()
                            if current.finished:
                                return current
                    if read_timeout - deadline.left() > OVERRUN_S:
                        return None
        except httpx.ReadTimeout as timeout:
            if not heard and deadline.left() > 0:
                raise StreamUnavailable("the event stream sent nothing, not even its first line") from timeout
            raise
        except NotAnEventStream as error:
            raise StreamUnavailable(error.message) from error
        except DidymaError as error:
            if error.status in NO_STREAM_STATUSES:
                raise StreamUnavailable(error.message) from error
            raise
        raise StreamEnded()


def poll_until_finished(
    current: Invocation, fetch: Callable[[], Invocation], deadline: Deadline, initial_delay: float, max_delay: float, sleep: Callable[[float], None]
) -> Invocation:
    """Reads again with exponential backoff (from `initial_delay`, doubling up to `max_delay`) until the
    invocation finished or the deadline passed; the last state read."""
    delay = initial_delay
    while not current.finished and (left := deadline.left()) > 0:
        sleep(min(delay, left))
        delay = min(delay * 2, max_delay)
        current = fetch()
    return current
