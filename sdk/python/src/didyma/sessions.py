"""Sessions, invocations and feedback (public server)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from ._events import SessionEvent, events_path, session_events
from ._transport import Transport, idempotency_key_or_new
from ._waiting import Deadline, Follower, StreamUnavailable, poll_until_finished
from .errors import InvocationFailed, WaitTimeout
from .models import Invocation, Session
from .paging import Page


# Seconds a `Prefer: wait` request may take past its wait: the finished invocation's read and the network.
_WAIT_MARGIN = 30.0


def _base(model_code: str, version: str) -> str:
    return f"/api/model/{model_code}/version/{version}"


def _as_body(body: Any) -> str:
    """The API carries bodies as JSON text: a string that is JSON text already goes as it is, any other
    value (plain text such as a prompt included) as its JSON text."""
    if isinstance(body, str):
        try:
            json.loads(body)
            return body
        except ValueError:
            pass
    return json.dumps(body)


class PendingInvocation:
    """A queued invocation: `wait()` follows its session's events until it is COMPLETED, ERROR or CANCELLED;
    `cancel()` stops it, `retry()` runs it again once it failed. `created` is the server's answer: the
    finished invocation when `invoke(..., wait=…)` was answered once it finished (`finished` is then true)."""

    def __init__(self, api: InvocationsApi, model_code: str, version: str, created: Invocation) -> None:
        self._api = api
        self.model_code = model_code
        self.version = version
        self.created = created
        self.id = created.id
        self.session_id = created.session_id
        # A finished answer needs no further read; a re-run makes it stale.
        self._final: Invocation | None = created if created.finished else None

    @property
    def finished(self) -> bool:
        """Whether the answer that queued it (`Prefer: wait`) already carried its final state."""
        return self._final is not None

    def refresh(self) -> Invocation:
        return self._api.get(self.model_code, self.version, self.session_id, self.id)

    def status(self) -> str:
        return self._api.progress(self.model_code, self.version, self.session_id, self.id)

    def wait(
        self,
        timeout: float = 60.0,
        *,
        initial_delay: float = 0.05,
        max_delay: float = 2.0,
        raise_on_error: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        stream: bool = True,
    ) -> Invocation:
        """The finished invocation: read once, then its session's events followed until its final status, and
        read once more. Where the server has no event stream (or `stream` is false) it polls instead, with
        exponential backoff from `initial_delay`, doubling up to `max_delay`. Raises WaitTimeout after
        `timeout` seconds, and InvocationFailed on ERROR unless `raise_on_error` is false. A CANCELLED
        invocation is returned as it is."""
        if self._final is not None:
            return self._finish(self._final, raise_on_error)
        deadline = Deadline(timeout)
        # Any status taken after the read below commits after it, so it is not visible in a position received
        # before that read (the last this client saw in the session, or none: the start of what the server
        # keeps) and comes among the events after it.
        position = self._api.last_position(self.session_id)
        current = self.refresh()
        if not current.finished and stream:
            try:
                current = self._api.follow_until_finished(self, position, deadline, sleep) or self.refresh()
            except StreamUnavailable:
                pass
        current = poll_until_finished(current, self.refresh, deadline, initial_delay, max_delay, sleep)
        if not current.finished:
            raise WaitTimeout(f"Invocation {self.id} is still {current.status} after {timeout:g} s.", current)
        return self._finish(current, raise_on_error)

    @staticmethod
    def _finish(current: Invocation, raise_on_error: bool) -> Invocation:
        if current.status == "ERROR" and raise_on_error:
            raise InvocationFailed(current)
        return current

    def feedback(self, body: Any, *, idempotency_key: str | None = None) -> Invocation:
        """Feedback on this invocation (validated against the model's feedback schema)."""
        return self._api.feedback(self.model_code, self.version, self.session_id, self.id, body, idempotency_key=idempotency_key)

    def cancel(self) -> Invocation:
        """Cancels it if it has not finished (Conflict, code "invocation_finished", when it has)."""
        return self._api.cancel(self.model_code, self.version, self.session_id, self.id)

    def retry(self) -> Invocation:
        """Runs it again after ERROR or CANCELLED (Conflict, code "invocation_not_failed", otherwise); `wait()` again after."""
        rerun = self._api.retry(self.model_code, self.version, self.session_id, self.id)
        self._final = None
        return rerun


class InvocationsApi:
    def __init__(self, transport: Transport) -> None:
        self._t = transport
        # The last event stream position seen per session, so that a later wait() reads only what came after it.
        self._positions: dict[str, str] = {}

    def last_position(self, session_id: str) -> str | None:
        """The last event stream position this client saw in the session."""
        return self._positions.get(session_id)

    def follow_until_finished(self, pending: PendingInvocation, position: str | None, deadline: Deadline, pause: Callable[[float], None]) -> Invocation | None:
        """The invocation once its session's events after `position` say it finished (None at the deadline);
        StreamUnavailable when the server has no event stream for it."""
        follower = Follower(self._t, events_path(pending.model_code, pending.version, pending.session_id), pending.id, pending.refresh, position)
        try:
            return follower.until_finished(deadline, pause)
        finally:
            if follower.position:
                self._positions[pending.session_id] = follower.position

    def create(
        self,
        model_code: str,
        version: str,
        session_id: str,
        body: Any,
        *,
        type: str = "PREDICT",
        request_type: str = "FEATURES",
        with_explanation: bool = False,
        priority: int | None = None,
        idempotency_key: str | None = None,
        callback_url: str | None = None,
        wait: float | None = None,
    ) -> PendingInvocation:
        """Queues a PREDICT (or an EXPLAIN, sent to an explainer's path); `body` is any JSON-able value, or a
        string of JSON text (plain text, such as a prompt, is sent as a JSON string).

        `wait` (seconds, rounded up to a whole number) asks the server to answer once the invocation has
        finished, for at most that long (`Prefer: wait`, cut to the server's DIDYMA_MAX_PREFER_WAIT_SECONDS,
        30 s by default): finished in time, the answer carries the finished invocation (`finished` is true,
        and `wait()` returns it without another request); otherwise, or when the server has no room for one
        more wait, it is the queued invocation, as without `wait`.

        `priority` (0 to 9, the server's default 5) orders the workspace's own queue; it never takes
        another workspace's share of the executors. A workspace at its `max_queued` gets RateLimited
        (code "quota_exceeded", `retry_after` in seconds).

        `idempotency_key` (1 to 255 printable ASCII characters; a fresh UUID when not given) makes the
        call safe to repeat: the same key with the same body within the server's retention queues
        nothing new and answers the first invocation again. The same key with another body raises
        UnprocessableEntity ("idempotency_key_reused").

        `callback_url` gets the outcome POSTed, signed as Standard Webhooks with the secret of the
        workspace's webhook endpoint that allows it (same origin, a parent path); one that no enabled
        endpoint allows raises BadRequest and nothing is queued.
        """
        payload: dict[str, Any] = {"type": type, "request": {"type": request_type, "body": _as_body(body)}}
        if callback_url is not None:
            payload["callback_url"] = callback_url
        if with_explanation:
            payload["with_explanation"] = True
        if priority is not None:
            payload["priority"] = priority
        path = f"{_base(model_code, version)}/session/{session_id}/invocation"
        key = idempotency_key_or_new(idempotency_key)
        if wait is None:
            created = Invocation.from_json(self._t.post_json("public", path, payload, idempotency_key=key))
        else:
            seconds = max(0, math.ceil(wait))
            # The server holds the answer up to `seconds`: the read may take that long, and a margin for the run's end.
            response = self._t.request("public", "POST", path, json=payload, idempotency_key=key, headers={"prefer": f"wait={seconds}"}, read_timeout=seconds + _WAIT_MARGIN)
            created = Invocation.from_json(response.json())
        return PendingInvocation(self, model_code, version, created)

    def list(
        self,
        model_code: str,
        version: str,
        session_id: str,
        page_size: int = 100,
        *,
        status: str | None = None,
        type: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
    ) -> Page[Invocation]:
        """The session's invocations, newest first; `status` and `type` (PREDICT, EXPLAIN, DATA_SUBMISSION: feedback) filter them."""
        params = {"status": status, "type": type, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "public", f"{_base(model_code, version)}/session/{session_id}/invocation", Invocation.from_json, params, page_size)

    def get(self, model_code: str, version: str, session_id: str, invocation_id: str) -> Invocation:
        return Invocation.from_json(self._t.get_json("public", f"{_base(model_code, version)}/session/{session_id}/invocation/{invocation_id}"))

    def progress(self, model_code: str, version: str, session_id: str, invocation_id: str) -> str:
        path = f"{_base(model_code, version)}/session/{session_id}/invocation/{invocation_id}/check_progress"
        return str(self._t.get_json("public", path)["status"])

    def feedback(self, model_code: str, version: str, session_id: str, invocation_id: str, body: Any, *, idempotency_key: str | None = None) -> Invocation:
        """Feedback on an invocation; `idempotency_key` as for `create` (a fresh UUID when not given)."""
        path = f"{_base(model_code, version)}/session/{session_id}/invocation/{invocation_id}/feedback"
        payload = {"request": {"body": _as_body(body)}}
        return Invocation.from_json(self._t.post_json("public", path, payload, idempotency_key=idempotency_key_or_new(idempotency_key)))

    def cancel(self, model_code: str, version: str, session_id: str, invocation_id: str) -> Invocation:
        """CANCELLED: a queued invocation never runs, a running one has its model call aborted and its result
        refused, and what it queued (its explanation) is cancelled too. Conflict ("invocation_finished") once
        it has finished."""
        path = f"{_base(model_code, version)}/session/{session_id}/invocation/{invocation_id}/cancel"
        return Invocation.from_json(self._t.post_json("public", path))

    def retry(self, model_code: str, version: str, session_id: str, invocation_id: str) -> Invocation:
        """QUEUED again, as a new attempt with its earlier attempts kept, an invocation that ended in ERROR or
        CANCELLED. Conflict ("invocation_not_failed") for one that did not, ("session_closed") in a closed session."""
        path = f"{_base(model_code, version)}/session/{session_id}/invocation/{invocation_id}/retry"
        return Invocation.from_json(self._t.post_json("public", path))


class SessionsApi:
    """The caller's sessions of one model version."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, model_code: str, version: str, *, idempotency_key: str | None = None) -> Session:
        """Opens a session; `idempotency_key` as for invocations (a fresh UUID when not given)."""
        return Session.from_json(self._t.post_json("public", f"{_base(model_code, version)}/session", idempotency_key=idempotency_key_or_new(idempotency_key)))

    def create_on_alias(self, model_code: str, alias: str, *, idempotency_key: str | None = None) -> Session:
        """Opens a session on the version the alias points at now; the session keeps that version (`model_version`)
        for its life, and its invocations go through it as through any session of that version."""
        path = f"/api/model/{model_code}/alias/{alias}/session"
        return Session.from_json(self._t.post_json("public", path, idempotency_key=idempotency_key_or_new(idempotency_key)))

    def list(
        self, model_code: str, version: str, page_size: int = 100, *, state: str | None = None, created_after: str | None = None, created_before: str | None = None
    ) -> Page[Session]:
        """The caller's sessions of the model version, newest first; `state` OPEN or CLOSED filters them."""
        params = {"state": state, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "public", f"{_base(model_code, version)}/session", Session.from_json, params, page_size)

    def set_state(self, model_code: str, version: str, session_id: str, state: str) -> Session:
        response = self._t.request("public", "PATCH", f"{_base(model_code, version)}/session/{session_id}", params={"state": state})
        return Session.from_json(response.json())

    def close(self, model_code: str, version: str, session_id: str) -> Session:
        return self.set_state(model_code, version, session_id, "CLOSED")

    def reopen(self, model_code: str, version: str, session_id: str) -> Session:
        return self.set_state(model_code, version, session_id, "OPEN")

    def events(
        self,
        model_code: str,
        version: str,
        session_id: str,
        last_event_id: str | None = None,
        *,
        reconnect: bool = True,
        pause: Callable[[float], None] = time.sleep,
    ) -> Iterator[SessionEvent]:
        """Every status change of the session's invocations, oldest first, as it happens (Server-Sent Events),
        from the start of what the server keeps or after `last_event_id`. When the connection drops or the
        server ends the stream (it shuts down), it connects again from the last id seen, unless `reconnect`
        is false. Stop by leaving the loop."""
        path = events_path(model_code, version, session_id)
        last = last_event_id
        while True:
            try:
                for event in session_events(self._t, path, last):
                    if event is not None:
                        last = event.resume_from
                        yield event
            except httpx.TransportError:
                if not reconnect:
                    raise
            if not reconnect:
                return
            pause(1.0)

    def cancel(self, model_code: str, version: str, session_id: str, status: str | None = None) -> int:
        """Cancels every invocation of the session not yet finished (only the QUEUED or IN_PROGRESS ones
        with `status`); how many were cancelled."""
        params = {"status": status} if status else None
        return int(self._t.post_json("public", f"{_base(model_code, version)}/session/{session_id}/cancel", params=params)["cancelled"])
