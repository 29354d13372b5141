"""`didyma webhooks …`: the workspace's webhook endpoints and their deliveries (supervisors)."""

from __future__ import annotations

import argparse
from typing import Any

from ._cli_registrar import Registrar
from .client import Didyma
from .webhooks import EVENTS

ENDPOINT_COLUMNS = ["id", "url", "events", "enabled", "description", "created_at"]
DELIVERY_COLUMNS = ["id", "event_type", "status", "attempt_count", "last_status_code", "last_error", "created_at"]


def create(args: argparse.Namespace, c: Didyma) -> Any:
    return c.webhooks.create(args.url, args.event or EVENTS[:3], description=args.description, enabled=not args.disabled)


def update(args: argparse.Namespace, c: Didyma) -> Any:
    return c.webhooks.update(args.endpoint_id, url=args.url, events=args.event, description=args.description, enabled=args.enabled)


def add_webhooks(r: Registrar) -> None:
    hooks = r.group("webhooks", "webhook endpoints of the workspace and their deliveries (supervisors)")
    r.command(hooks, "list", lambda a, c: c.webhooks.list().list(), "the workspace's endpoints", ENDPOINT_COLUMNS)
    p = r.command(hooks, "create", create, "register an endpoint; its secret is printed this once", [*ENDPOINT_COLUMNS, "secret"], args=["url"])
    p.add_argument("--event", action="append", choices=EVENTS, help="an event it receives (repeat; default: the three invocation outcomes)")
    p.add_argument("--description")
    p.add_argument("--disabled", action="store_true", help="register it disabled")
    r.command(hooks, "get", lambda a, c: c.webhooks.get(a.endpoint_id), "one endpoint", ENDPOINT_COLUMNS).add_argument("endpoint_id", type=int)
    p = r.command(hooks, "update", update, "change an endpoint; only the options given change", ENDPOINT_COLUMNS)
    p.add_argument("endpoint_id", type=int)
    p.add_argument("--url")
    p.add_argument("--event", action="append", choices=EVENTS, help="the events it receives (repeat; replaces them all)")
    p.add_argument("--description")
    p.add_argument("--enable", dest="enabled", action="store_const", const=True)
    p.add_argument("--disable", dest="enabled", action="store_const", const=False)
    r.command(hooks, "delete", lambda a, c: c.webhooks.delete(a.endpoint_id), "delete an endpoint and its deliveries").add_argument("endpoint_id", type=int)
    rotate = lambda a, c: c.webhooks.rotate_secret(a.endpoint_id)
    r.command(hooks, "rotate-secret", rotate, "a new secret, printed this once", ["id", "url", "secret"]).add_argument("endpoint_id", type=int)
    p = r.command(hooks, "deliveries", lambda a, c: c.webhooks.deliveries(a.endpoint_id, a.status).list(), "an endpoint's deliveries, newest first", DELIVERY_COLUMNS)
    p.add_argument("endpoint_id", type=int)
    p.add_argument("--status", choices=["pending", "delivered", "failed"])
    p = r.command(hooks, "delivery", lambda a, c: c.webhooks.delivery(a.endpoint_id, a.delivery_id), "one delivery with its attempts")
    p.add_argument("endpoint_id", type=int)
    p.add_argument("delivery_id")
    p = r.command(hooks, "redeliver", lambda a, c: c.webhooks.redeliver(a.endpoint_id, a.delivery_id), "send a delivery again, same webhook-id", DELIVERY_COLUMNS)
    p.add_argument("endpoint_id", type=int)
    p.add_argument("delivery_id")
