"""An idempotent request is sent once more when its connection closed before any answer; others are not."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from didyma import ServerUrls
from didyma._transport import Transport


class ClosesFirstConnection:
    """A server that reads the first request and closes its connection without a byte of answer, then answers 200."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.requests: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    head += chunk
                self.requests.append(head)
                if len(self.requests) == 1:
                    continue
                body = b'{"ok": true}'
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        self._listener.close()


@pytest.fixture()
def server() -> Iterator[ClosesFirstConnection]:
    peer = ClosesFirstConnection()
    yield peer
    peer.close()


def transport_to(url: str) -> Transport:
    return Transport(ServerUrls(url, url, url), timeout=5.0)


def test_a_get_is_sent_again_on_a_new_connection(server: ClosesFirstConnection) -> None:
    response = transport_to(server.url).request("public", "GET", "/api/x", authenticated=False)
    assert response.json() == {"ok": True}
    assert [request.split(b"\r\n")[0] for request in server.requests] == [b"GET /api/x HTTP/1.1"] * 2


def test_a_post_with_an_idempotency_key_is_sent_again_with_the_same_key(server: ClosesFirstConnection) -> None:
    response = transport_to(server.url).request("public", "POST", "/api/x", json={"a": 1}, authenticated=False, idempotency_key="key-1")
    assert response.status_code == 200
    assert len(server.requests) == 2
    assert all(b"idempotency-key: key-1" in request.lower() for request in server.requests)


def test_a_post_without_a_key_is_not_sent_again(server: ClosesFirstConnection) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        transport_to(server.url).request("public", "POST", "/api/x", json={"a": 1}, authenticated=False)
    assert len(server.requests) == 1
