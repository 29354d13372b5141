"""List iterators: offset paging until a short page, and a `Link: rel="next"` cursor when the server sends one."""

from __future__ import annotations

from typing import Any

import httpx

from conftest import Iris
from didyma import Didyma, ServerUrls
from didyma._transport import Transport
from didyma.auth import ApiToken
from didyma.paging import Page

URLS = ServerUrls("http://auth.test", "http://private.test", "http://public.test")


def test_sessions_are_read_page_by_page_in_the_server_order(member: Didyma, iris: Iris) -> None:
    opened = [member.open_session(iris.code, iris.version).id for _ in range(7)]
    everything = member.sessions.list(iris.code, iris.version).list()
    paged = member.sessions.list(iris.code, iris.version, page_size=3)
    assert [s.id for s in paged] == [s.id for s in everything]
    assert set(opened) <= {s.id for s in everything}
    assert paged.total == len(everything)


def fake_server(handler: Any) -> Transport:
    return Transport(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))


def test_follows_the_link_header_and_sends_its_cursor_as_given() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if "after" not in request.url.params:
            return httpx.Response(200, json=[{"n": 1}, {"n": 2}], headers={"Link": '</api/items?limit=2&after=abc>; rel="next"', "X-Total-Count": "3"})
        return httpx.Response(200, json=[{"n": 3}], headers={"X-Total-Count": "3"})

    page = Page(fake_server(handler), "public", "/api/items", lambda item: item["n"], page_size=2)
    assert page.list() == [1, 2, 3]
    assert seen == ["http://public.test/api/items?limit=2", "http://public.test/api/items?limit=2&after=abc"]


def test_without_a_link_asks_for_the_next_offset_until_a_short_page() -> None:
    items = list(range(7))
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        seen.append(params)
        offset, limit = int(params.get("offset", 0)), int(params["limit"])
        return httpx.Response(200, json=items[offset : offset + limit])

    assert Page(fake_server(handler), "public", "/api/items", lambda n: n, page_size=3).list() == items
    assert [s.get("offset") for s in seen] == [None, "3", "6"]


def test_a_list_without_paging_parameters_is_asked_once_unless_the_total_says_more() -> None:
    calls: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(dict(request.url.params))
        return httpx.Response(200, json=[1, 2])

    assert Page(fake_server(handler), "public", "/api/model", lambda n: n, page_size=None).list() == [1, 2]
    assert calls == [{}]
