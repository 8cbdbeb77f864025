"""``session/list``: one gateway ``sessions.list`` keyset call per page.

- page size: ``_meta.pageSize`` or ``_meta.limit`` (a number), default 100, clamped 1..100;
- ``cwd`` (absolute, else ``ACP session/list requires an absolute cwd.``) is passed as the
  gateway's ``workspaceDir`` filter (``spawnedCwd``, else ``spawnedWorkspaceDir``, equals it),
  so the filter runs in the store and paging stays a keyset walk;
- the cursor wraps the gateway's signed ``nextCursor`` (:mod:`clawline.acp.list_cursor`); a
  gateway that refuses the inner cursor (edited, from another store, another query) gives
  ``Invalid ACP session list cursor.``;
- rows: :func:`clawline.acp.meta.session_info`, in gateway order (``updatedAt`` descending);
  cron run keys are never listed, ``global``/``unknown`` are not either (the gateway's default).
  The bridge asks for them in that form (``acpCwd``: the gateway builds each ``SessionInfo``
  from its entry, :mod:`clawline.sessions.acp_rows`) and splices the encoded array the gateway
  answers into its own answer, decoding and encoding no row; a gateway without ``acpCwd``
  (it refuses the param) gets the plain call, and its rows are mapped here;
- the next page is read ahead (:class:`SessionLister`).
"""

from __future__ import annotations

import asyncio
import math
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from acp import RequestError

from clawline.acp.list_cursor import (
    INVALID_CURSOR,
    RELATIVE_CWD,
    UNSUPPORTED_CURSOR,
    ListCursor,
    decode_cursor,
    encode_cursor,
)
from clawline.acp.meta import session_info
from clawline.acp.rpc_errors import internal_error, invalid_params

if TYPE_CHECKING:
    from clawline.acp.upstream import Upstream

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 100
READ_AHEAD_TTL_S = 1.0
MAX_READ_AHEAD = 4
"""Batches read ahead at once (one per walk in progress)."""
READ_AHEAD_PAGES = 10
"""Pages a read-ahead asks the gateway for in one call (when it answers ACP rows)."""


def page_size(meta: Mapping[str, Any]) -> int:
    for name in ("pageSize", "limit"):
        value = meta.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        return max(1, min(MAX_PAGE_SIZE, int(value)))
    return DEFAULT_PAGE_SIZE


def _cursor_refused(error: RequestError) -> RequestError:
    """The gateway's cursor texts (``invalid cursor: …``) in OpenClaw's words."""
    text = str(error)
    if "invalid cursor: unsupported version" in text:
        return invalid_params(UNSUPPORTED_CURSOR)
    if "invalid cursor" in text:
        return invalid_params(INVALID_CURSOR)
    return error


@dataclass(frozen=True, slots=True)
class _Request:
    gateway_cursor: str | None
    cwd: str | None
    size: int


_Page = tuple[dict[str, Any], str | None]
"""One ``session/list`` result and the gateway cursor after it (``None``: the last page)."""
_Pages = list[_Page]
_Values = list[Any]


@dataclass(slots=True)
class _Ready:
    page: _Page
    started: float
    then: tuple[_Request, int] | None = None
    """The batch to read ahead once this page is served (on a batch's first page), and how
    many pages it asks for."""


@dataclass(slots=True)
class _Ahead:
    task: asyncio.Task[None]
    started: float


class SessionLister:
    """Serves ``session/list``. After a page with a ``nextCursor`` it reads the following
    pages from the gateway at once (:data:`READ_AHEAD_PAGES` in one call, when the gateway
    answers ACP rows), so a client walking the list finds them ready: the gateway's work
    overlaps the client's, and one gateway round trip serves several pages. A page read ahead
    is served only within :data:`READ_AHEAD_TTL_S` of its read (and only for the same cursor,
    filter and page size); it may then show a session as it was up to that long before the
    request. Every session the walk did not see change is still listed exactly once, and none
    twice."""

    def __init__(self, upstream: Upstream, fallback_cwd: str, *, read_ahead: bool = True) -> None:
        self._upstream = upstream
        self._fallback_cwd = fallback_cwd
        self._read_ahead = read_ahead
        self._ahead: dict[_Request, _Ahead] = {}
        self._ready: dict[_Request, _Ready] = {}
        self._spliced = True
        """Whether the gateway answers ``acpCwd`` (until it refuses the param)."""

    async def list(
        self, *, cwd: str | None, cursor: str | None, meta: Mapping[str, Any]
    ) -> dict[str, Any]:
        if cwd is not None and not posixpath.isabs(cwd):
            raise invalid_params(RELATIVE_CWD)
        inner = None if cursor is None else decode_cursor(cursor, cwd).gateway_cursor
        request = _Request(inner, cwd, page_size(meta))
        ready = await self._take(request)
        if ready is not None:
            if ready.then is not None:
                self._start(*ready.then)
            return ready.page[0]
        pages = await self._pages(request, 1)
        result, following = pages[0]
        if following is not None and self._read_ahead:
            # Batches grow (2, 4, 8, then READ_AHEAD_PAGES pages), so a walk's first pages
            # wait for a short read, and later ones are read ten to a gateway call.
            self._start(_Request(following, cwd, request.size), 2)
        return result

    async def _pages(self, request: _Request, count: int) -> _Pages:
        """One ``sessions.list`` call for ``count`` pages (one when the gateway does not answer
        ACP rows): each page's ACP result and the gateway cursor after it."""
        params: dict[str, Any] = {"limit": request.size, "includeDerivedTitles": True}
        if request.cwd is not None:
            params["workspaceDir"] = request.cwd
        if request.gateway_cursor is not None:
            params["cursor"] = request.gateway_cursor
        fallback = self._fallback_cwd
        if self._spliced:
            spliced = {
                **params,
                "limit": request.size * count,
                "acpCwd": fallback,
                "acpPageSize": request.size,
            }
            answer = await self._spliced_call(spliced)
            if answer is not None:
                return [self._spliced_page(text, after, request.cwd) for text, after in answer]
        page = await self._list(params)
        result: dict[str, Any] = {
            "sessions": [session_info(row, fallback) for row in page["sessions"]]
        }
        return [self._with_cursor(result, page.get("nextCursor"), request.cwd)]

    def _spliced_page(self, text: object, after: object, cwd: str | None) -> _Page:
        if not isinstance(text, str):
            raise internal_error("gateway: acpPages holds a page that is not JSON text")
        return self._with_cursor({"sessions": orjson.Fragment(text)}, after, cwd)

    @staticmethod
    def _with_cursor(result: dict[str, Any], following: object, cwd: str | None) -> _Page:
        if not isinstance(following, str) or not following:
            return result, None
        result["nextCursor"] = encode_cursor(ListCursor(following, cwd))
        return result, following

    async def _list(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            page: dict[str, Any] = await self._upstream.request("sessions.list", params)
        except RequestError as error:
            raise _cursor_refused(error) from None
        return page

    async def _spliced_call(self, params: dict[str, Any]) -> _Values | None:
        """The ``acpPages`` of the call, or ``None`` (from then on) when the gateway does not
        know ``acpCwd``."""
        try:
            page = await self._list(params)
        except RequestError as error:
            if "unknown key 'acpCwd'" not in str(error):
                raise
            self._spliced = False
            return None
        pages = page.get("acpPages")
        if not isinstance(pages, list) or not pages:
            raise internal_error("gateway: sessions.list answered no acpPages")
        return pages

    def _start(self, request: _Request, count: int) -> None:
        """Read the ``count`` pages that start at ``request`` in the background."""
        if request in self._ahead or request in self._ready:
            return
        while len(self._ahead) >= MAX_READ_AHEAD:
            stale = self._ahead.pop(next(iter(self._ahead)))
            stale.task.cancel()
        started = time.monotonic()
        task = asyncio.ensure_future(self._read(request, count, started))
        task.add_done_callback(_consume)
        self._ahead[request] = _Ahead(task, started)

    async def _read(self, request: _Request, count: int, started: float) -> None:
        pages = await self._pages(request, count if self._spliced else 1)
        while len(self._ready) + len(pages) > MAX_READ_AHEAD * READ_AHEAD_PAGES:
            del self._ready[next(iter(self._ready))]
        at = request
        for number, page in enumerate(pages):
            last = number == len(pages) - 1
            following = page[1]
            then = None
            after = pages[-1][1]
            if number == 0 and after is not None:
                then = _Request(after, request.cwd, request.size), min(2 * count, READ_AHEAD_PAGES)
            self._ready[at] = _Ready(page, started, then)
            if last or following is None:
                break
            at = _Request(following, request.cwd, request.size)

    async def _take(self, request: _Request) -> _Ready | None:
        ahead = self._ahead.pop(request, None)
        if ahead is not None:
            try:
                await asyncio.shield(ahead.task)
            except RequestError:
                return None  # read again, and answer that error if it happens again
        ready = self._ready.pop(request, None)
        if ready is None:
            return None
        if time.monotonic() - ready.started > READ_AHEAD_TTL_S:
            return None
        return ready

    def close(self) -> None:
        for ahead in self._ahead.values():
            ahead.task.cancel()
        self._ahead.clear()
        self._ready.clear()


def _consume(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # a failed read-ahead is read again on demand; never reported
