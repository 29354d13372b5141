"""Webhook endpoints of the workspace and their deliveries (supervisors, private server), and the
signature check a receiver makes (Standard Webhooks)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._transport import Transport
from .models import WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret
from .paging import Page

EVENTS = ("invocation.completed", "invocation.failed", "invocation.cancelled", "dataset.exported")


class WebhooksApi:
    """Endpoints (URL, events, secret) and what was delivered to them, with every attempt."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, url: str, events: Sequence[str] = EVENTS[:3], *, description: str | None = None, enabled: bool = True) -> WebhookEndpointWithSecret:
        """Registers an endpoint; the answer's `secret` is shown this once: keep it to verify signatures."""
        body: dict[str, Any] = {"url": url, "events": list(events), "enabled": enabled}
        if description is not None:
            body["description"] = description
        return WebhookEndpointWithSecret.from_json(self._t.post_json("private", "/api/webhook", body))

    def list(self, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[WebhookEndpoint]:
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", "/api/webhook", WebhookEndpoint.from_json, params, page_size)

    def get(self, endpoint_id: int) -> WebhookEndpoint:
        return WebhookEndpoint.from_json(self._t.get_json("private", f"/api/webhook/{endpoint_id}"))

    def update(self, endpoint_id: int, *, url: str | None = None, events: Sequence[str] | None = None, description: str | None = None, enabled: bool | None = None) -> WebhookEndpoint:
        """Changes what is given; a disabled endpoint gets no new deliveries and allows no callback."""
        changes = {"url": url, "events": None if events is None else [*events], "description": description, "enabled": enabled}
        body = {name: value for name, value in changes.items() if value is not None}
        return WebhookEndpoint.from_json(self._t.request("private", "PATCH", f"/api/webhook/{endpoint_id}", json=body).json())

    def delete(self, endpoint_id: int) -> None:
        self._t.request("private", "DELETE", f"/api/webhook/{endpoint_id}")

    def rotate_secret(self, endpoint_id: int) -> WebhookEndpointWithSecret:
        """A new secret, shown this once; attempts from now on are signed with it."""
        return WebhookEndpointWithSecret.from_json(self._t.post_json("private", f"/api/webhook/{endpoint_id}/rotate_secret"))

    def deliveries(
        self, endpoint_id: int, status: str | None = None, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None
    ) -> Page[WebhookDelivery]:
        """Deliveries of the endpoint, newest first, each with its attempts; `status` pending, delivered or failed."""
        params = {"status": status or None, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", f"/api/webhook/{endpoint_id}/delivery", WebhookDelivery.from_json, params=params, page_size=page_size)

    def delivery(self, endpoint_id: int, delivery_id: str) -> WebhookDelivery:
        return WebhookDelivery.from_json(self._t.get_json("private", f"/api/webhook/{endpoint_id}/delivery/{delivery_id}"))

    def redeliver(self, endpoint_id: int, delivery_id: str) -> WebhookDelivery:
        """Sends it again with the same `webhook-id` (Conflict while an attempt is in flight)."""
        return WebhookDelivery.from_json(self._t.post_json("private", f"/api/webhook/{endpoint_id}/delivery/{delivery_id}/redeliver"))


class InvalidSignature(Exception):
    """The request is not one the platform signed with this secret, or it is too old."""


def verify_signature(secret: str, headers: Mapping[str, str], body: bytes | str, *, tolerance_seconds: int = 300, now: float | None = None) -> None:
    """Checks a delivery on the receiver: raises InvalidSignature unless one of the `webhook-signature`
    values is the HMAC-SHA256 of `webhook-id.webhook-timestamp.body` under `secret` and the timestamp
    is within `tolerance_seconds` of now. `body` must be the raw bytes received, not re-serialised JSON."""
    lower = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, timestamp, signatures = lower["webhook-id"], lower["webhook-timestamp"], lower["webhook-signature"]
        sent_at = int(timestamp)
    except (KeyError, ValueError) as missing:
        raise InvalidSignature("missing or malformed webhook-id, webhook-timestamp or webhook-signature") from missing
    if abs((time.time() if now is None else now) - sent_at) > tolerance_seconds:
        raise InvalidSignature("webhook-timestamp is too far from now")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    expected = base64.b64encode(hmac.new(key, f"{message_id}.{timestamp}.{text}".encode(), hashlib.sha256).digest()).decode()
    offered = [value.split(",", 1)[1] for value in signatures.split() if value.startswith("v1,")]
    if not any(hmac.compare_digest(expected, candidate) for candidate in offered):
        raise InvalidSignature("no signature matches")
