"""List iterators: offset paging until a short page, and a `Link: rel="next"` cursor when the server sends one."""

from __future__ import annotations

import inspect
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


def paged_lists(client: Didyma) -> dict[str, Any]:
    """Every SDK call that answers a Page, by name: found, so that a new list is held to the rule too."""
    found: dict[str, Any] = {}
    for resource_name, resource in vars(client).items():
        for name in dir(resource):
            call = getattr(resource, name)
            if not name.startswith("_") and callable(call) and str(inspect.signature(call).return_annotation).startswith("Page["):
                found[f"{resource_name}.{name}"] = call
    return found


def test_every_paged_list_takes_the_same_paging_arguments() -> None:
    lists = paged_lists(Didyma(URLS))
    assert {"models.list", "sessions.list", "invocations.list", "invitations.list", "datasets.list", "webhooks.deliveries"} <= set(lists)
    # The metric catalog is a fixed set, answered whole.
    unpaged = {"metrics.list"}
    for name, call in lists.items():
        parameters = inspect.signature(call).parameters
        if name in unpaged:
            assert "page_size" not in parameters, name
            continue
        assert {"page_size", "created_after", "created_before"} <= set(parameters), name
        assert parameters["page_size"].default == 100, name
        for keyword in ("created_after", "created_before"):
            assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY, f"{name} {keyword}"


def test_lists_send_their_page_size_and_the_filters_given_only() -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return httpx.Response(200, json=[])

    client = Didyma(URLS, ApiToken("dy_test"), http=httpx.Client(transport=httpx.MockTransport(handler)))
    client.models.list().list()
    client.models.list(page_size=5, model_code="iris-classifier", created_after="2026-01-01T00:00:00Z").list()
    client.invitations.list().list()
    client.datasets.list().list()
    client.sessions.list("m", "1", state="OPEN").list()
    assert seen == [
        {"limit": "100"},
        {"limit": "5", "model_code": "iris-classifier", "created_after": "2026-01-01T00:00:00Z"},
        {"limit": "100"},
        {"limit": "100"},
        {"limit": "100", "state": "OPEN"},
    ]


def test_models_are_paged_like_every_list_and_read_flat(member: Didyma, iris: Iris) -> None:
    everything = member.models.list().list()
    paged = member.models.list(page_size=1)
    assert [m.model_code for m in paged] == [m.model_code for m in everything]
    assert paged.total == len(everything) >= 2
    listing = member.models.list(model_code=iris.code).list()
    assert {(m.model_code, m.version) for m in listing} >= {(iris.code, iris.version)}
    assert {m.model_code for m in listing} == {iris.code}
    classifier = next(m for m in listing if m.version == iris.version)
    assert classifier.model_metadata.model_code == classifier.model_code, "the old attribute keeps working"
    assert (classifier.name, classifier.has_explainer, classifier.is_explainer) == ("Iris", True, False)
    assert classifier.input_schema == member.models.get(iris.code, iris.version).input_schema
