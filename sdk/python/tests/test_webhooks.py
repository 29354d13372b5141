"""Webhook endpoints through the SDK and the command line: a signed delivery a receiver verifies,
redelivery with the same id, callbacks an endpoint allows."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting
from didyma import Didyma, InvalidSignature, ValidationError, verify_signature
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)


class Receiver:
    """A webhook receiver on loopback that answers 200 and keeps what it got."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["content-length"]))
                received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def about(self, invocation_id: str) -> list[tuple[str, dict[str, str], bytes]]:
        return [r for r in self.received if json.loads(r[2])["data"].get("invocation_id") == invocation_id]


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def until(check: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_delivery_verifies_with_the_secret_shown_once_and_redelivers_with_the_same_id(admin: Didyma, member: Didyma, iris: Iris, receiver: Receiver) -> None:
    endpoint = admin.webhooks.create(f"{receiver.url}/hooks", ["invocation.completed"], description="sdk test")
    try:
        assert endpoint.secret.startswith("whsec_")
        assert admin.webhooks.get(endpoint.id).raw.get("secret") is None
        session = member.open_session(iris.code, iris.version)
        done = member.invoke(iris.code, iris.version, session.id, IRIS).wait(timeout=60)
        path, headers, body = until(lambda: receiver.about(done.id), "the delivery")[0]
        assert path == "/hooks"
        verify_signature(endpoint.secret, headers, body)
        with pytest.raises(InvalidSignature):
            verify_signature(endpoint.secret, headers, body + b" ")
        assert json.loads(body)["data"]["status"] == "COMPLETED"

        delivery = until(lambda: next((d for d in admin.webhooks.deliveries(endpoint.id, "delivered") if d.id == headers["webhook-id"]), None), "the delivery listed")
        assert delivery.attempts[0].status_code == 204 and delivery.payload["data"]["invocation_id"] == done.id
        again = admin.webhooks.redeliver(endpoint.id, delivery.id)
        assert again.id == delivery.id and again.status == "pending"
        until(lambda: len(receiver.about(done.id)) == 2, "the redelivery")
        assert receiver.about(done.id)[1][1]["webhook-id"] == delivery.id
    finally:
        admin.webhooks.delete(endpoint.id)


def test_a_callback_url_needs_an_endpoint_that_allows_it(admin: Didyma, iris: Iris, receiver: Receiver) -> None:
    endpoint = admin.webhooks.create(f"{receiver.url}/callbacks", ["dataset.exported"])
    try:
        session = admin.open_session(iris.code, iris.version)
        with pytest.raises(ValidationError) as refused:
            admin.invoke(iris.code, iris.version, session.id, IRIS, callback_url=f"{receiver.url}/other")
        assert "callback_url" in str(refused.value)
        done = admin.invoke(iris.code, iris.version, session.id, IRIS, callback_url=f"{receiver.url}/callbacks/7").wait(timeout=60)
        assert done.callback_url == f"{receiver.url}/callbacks/7"
        path, headers, body = until(lambda: receiver.about(done.id), "the callback")[0]
        assert path == "/callbacks/7"
        verify_signature(endpoint.secret, headers, body)
    finally:
        admin.webhooks.delete(endpoint.id)


def test_the_command_line_manages_endpoints_and_lists_deliveries(cli: Any, setting: Setting, receiver: Receiver) -> None:  # noqa: F811
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    created = as_json(cli("--json", "webhooks", "create", f"{receiver.url}/cli", "--event", "dataset.exported", "--description", "from the CLI"))
    assert created["secret"].startswith("whsec_") and created["events"] == ["dataset.exported"]
    endpoint_id = str(created["id"])
    try:
        assert "secret" not in as_json(cli("--json", "webhooks", "get", endpoint_id))
        assert endpoint_id in cli("webhooks", "list").stdout
        assert as_json(cli("--json", "webhooks", "update", endpoint_id, "--disable"))["enabled"] is False
        assert as_json(cli("--json", "webhooks", "deliveries", endpoint_id)) == []
        rotated = as_json(cli("--json", "webhooks", "rotate-secret", endpoint_id))
        assert rotated["secret"] != created["secret"]
    finally:
        cli("webhooks", "delete", endpoint_id)
    cli("webhooks", "get", endpoint_id, code=5)
