"""Iterators over the API's paged lists.

A list answer may carry `Link: <…>; rel="next"` (a keyset cursor) and `X-Total-Count`; the iterator
follows the link when there is one, and otherwise asks for the next `offset` until a short page.

Every paged list of the SDK takes the same paging arguments: `page_size` (items per request, at most
1000), and `created_after` / `created_before` (RFC 3339 instants), besides the filters of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar
from urllib.parse import urljoin

from ._transport import Server, Transport

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 100


class Page(Generic[T]):
    """An iterable over every item of a list, fetched page by page as it is consumed."""

    def __init__(
        self,
        transport: Transport,
        server: Server,
        path: str,
        convert: Callable[[dict[str, Any]], T],
        params: dict[str, Any] | None = None,
        page_size: int | None = DEFAULT_PAGE_SIZE,
    ) -> None:
        self._transport = transport
        self._server = server
        self._path = path
        self._convert = convert
        # A filter given as None is not sent: the list is not filtered by it.
        self._params = {name: value for name, value in (params or {}).items() if value is not None}
        self._page_size = page_size
        self.total: int | None = None

    def __iter__(self) -> Iterator[T]:
        # Without a page size the first request sends no paging parameter (lists that take none).
        params: dict[str, Any] | None = {**self._params, **({"limit": self._page_size} if self._page_size else {})}
        url: str | None = None
        offset = 0
        while True:
            response = self._transport.request(self._server, "GET", self._path, params=params, url=url)
            items = response.json()
            total = response.headers.get("x-total-count")
            self.total = int(total) if total and total.isdigit() else self.total
            for item in items:
                yield self._convert(item)
            offset += len(items)
            following = response.links.get("next", {}).get("url")
            if following:
                # The link carries every parameter (the cursor included): send it as it is.
                url, params = urljoin(self._transport.urls.of(self._server) + "/", following), None
                continue
            if not self._more(len(items), offset):
                return
            url, params = None, {**self._params, "limit": self._page_size or len(items), "offset": offset}

    def _more(self, count: int, offset: int) -> bool:
        if count == 0:
            return False
        if self.total is not None:
            return offset < self.total
        return self._page_size is not None and count >= self._page_size

    def list(self) -> list[T]:
        """Every item, in the server's order."""
        return list(self)

    def first(self) -> T | None:
        """The first item, or None for an empty list (one page is read)."""
        return next(iter(self), None)
