"""A session's event stream (Server-Sent Events): its events, one connection at a time."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ._transport import Transport


@dataclass(frozen=True)
class SessionEvent:
    """One status an invocation of the session took. `resume_from` is what to give as `last_event_id`
    to go on after it on another connection (it may repeat an event, never miss one)."""

    id: str
    invocation_id: str
    status: str
    created_at: str
    resume_from: str | None


def events_path(model_code: str, version: str, session_id: str) -> str:
    return f"/api/model/{model_code}/version/{version}/session/{session_id}/events"


def server_sent(lines: Iterable[str]) -> Iterator[tuple[str | None, dict[str, Any]] | None]:
    """The `invocation` events of a Server-Sent Events stream, their `id:` (on the last of a batch only) and
    data, and None for every other line, so that a reader can look at its clock between events."""
    event: dict[str, str] = {}
    for line in lines:
        if line:
            if not line.startswith(":") and ":" in line:
                name, _, value = line.partition(":")
                event[name] = value[1:] if value.startswith(" ") else value
            yield None
            continue
        if event.get("event") == "invocation" and "data" in event:
            yield event.get("id"), json.loads(event["data"])
        else:
            yield None
        event = {}


def session_events(transport: Transport, path: str, last_event_id: str | None, *, read_timeout: float | None = None) -> Generator[SessionEvent | None, None, None]:
    """The events of one connection after `last_event_id` (None: from the start of what the server keeps),
    each with the position to resume from after it, and None for the lines between them (heartbeats)."""
    last = last_event_id
    headers = {"last-event-id": last} if last else None
    for item in server_sent(transport.stream_lines("public", path, headers=headers, read_timeout=read_timeout)):
        if item is None:
            yield None
            continue
        event_id, data = item
        last = event_id or last
        yield SessionEvent(data["id"], data["invocation_id"], data["status"], data["created_at"], last)
