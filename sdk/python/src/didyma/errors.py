"""Errors the SDK raises: one class per kind of API error, each carrying the API's `message_code`."""

from __future__ import annotations

from typing import Any

import httpx


class DidymaError(Exception):
    """An error answer of the API (`{message, message_code, details?}`), or a failure of the SDK itself."""

    status: int | None
    message: str
    message_code: str
    details: Any

    def __init__(self, message: str, message_code: str = "error", status: int | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.message_code = message_code
        self.status = status
        self.details = details

    def __str__(self) -> str:
        prefix = f"{self.status} " if self.status is not None else ""
        return f"{prefix}{self.message_code}: {self.message}"


class ValidationError(DidymaError):
    """400: the request was refused as invalid; the message names the field."""


class NotAuthenticated(DidymaError):
    """401: no valid credentials (and a refresh did not help)."""


class PermissionDenied(DidymaError):
    """403: authenticated, but not allowed (role, or another workspace's token)."""


class NotFound(DidymaError):
    """404: no such resource in the caller's workspace (or not the caller's)."""


class Conflict(DidymaError):
    """409: a duplicate, or a state that forbids the call (a CLOSED session, an OPEN one to export)."""


class Gone(DidymaError):
    """410: an expired upload id."""


class UnprocessableEntity(DidymaError):
    """422: an Idempotency-Key already used for a different request ("idempotency_key_reused")."""


class PayloadTooLarge(DidymaError):
    """413: the body or file is over the server's limit."""


class UnsupportedMediaType(DidymaError):
    """415: the media type is not accepted."""


class RateLimited(DidymaError):
    """429: too many attempts; `retry_after` is in seconds."""

    retry_after: float | None = None


class BackendError(DidymaError):
    """502: a backend of the platform (model server, Prometheus, storage) failed."""


class ServiceUnavailable(DidymaError):
    """503: a dependency of the platform is down."""


class NotAnEventStream(DidymaError):
    """An answer to a request for an event stream that is not one (a proxy's page, an older server)."""


class InvocationFailed(DidymaError):
    """An invocation ended in ERROR; `invocation` is its final state."""

    def __init__(self, invocation: Any) -> None:
        super().__init__(invocation.error or "The invocation failed.", "invocation_failed")
        self.invocation = invocation


class WaitTimeout(DidymaError):
    """`wait()` gave up before the invocation finished; `last` is the last state read."""

    def __init__(self, message: str, last: Any) -> None:
        super().__init__(message, "timeout")
        self.last = last


class IntegrityError(DidymaError):
    """A downloaded dataset does not match the checksum its manifest records."""


_BY_STATUS: dict[int, type[DidymaError]] = {
    400: ValidationError,
    401: NotAuthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: UnprocessableEntity,
    429: RateLimited,
    502: BackendError,
    503: ServiceUnavailable,
}


def error_from_response(response: httpx.Response) -> DidymaError:
    """The typed error for an answer of status 400 or more."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message, code, details = body["message"], str(body.get("message_code", "error")), body.get("details")
    else:
        message, code, details = (response.text or response.reason_phrase or "error").strip()[:500], "error", None
    cls = _BY_STATUS.get(response.status_code, DidymaError)
    error = cls(message, code, response.status_code, details)
    if isinstance(error, RateLimited):
        retry = response.headers.get("retry-after")
        error.retry_after = float(retry) if retry and retry.replace(".", "", 1).isdigit() else None
    return error
