"""``session/list``: one gateway ``sessions.list`` keyset call per page.

- page size: ``_meta.pageSize`` or ``_meta.limit`` (a number), default 100, clamped 1..100;
- ``cwd`` (absolute, else ``ACP session/list requires an absolute cwd.``) is passed as the
  gateway's ``workspaceDir`` filter (``spawnedCwd``, else ``spawnedWorkspaceDir``, equals it),
  so the filter runs in the store and paging stays a keyset walk;
- the cursor wraps the gateway's signed ``nextCursor`` (:mod:`clawline.acp.list_cursor`); a
  gateway that refuses the inner cursor (edited, from another store, another query) gives
  ``Invalid ACP session list cursor.``;
- rows: :func:`clawline.acp.meta.session_info`, in gateway order (``updatedAt`` descending);
  cron run keys are never listed, ``global``/``unknown`` are not either (the gateway's default);
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
from clawline.acp.rpc_errors import invalid_params

if TYPE_CHECKING:
    from clawline.acp.upstream import Upstream

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 100
READ_AHEAD_TTL_S = 1.0
MAX_READ_AHEAD = 4
"""Pages read ahead at once (one per walk in progress)."""


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


@dataclass(slots=True)
class _Ahead:
    task: asyncio.Task[tuple[dict[str, Any], str | None]]
    started: float


class SessionLister:
    """Serves ``session/list``. After a page with a ``nextCursor`` it reads the next page from
    the gateway at once (one page ahead), so a client walking the list finds it ready: the
    gateway's work overlaps the client's. A page read ahead is served only within
    :data:`READ_AHEAD_TTL_S` (and only for the same cursor, filter and page size); it may then
    show a session as it was up to that long before the request. Every session the walk did not
    see change is still listed exactly once, and none twice."""

    def __init__(self, upstream: Upstream, fallback_cwd: str, *, read_ahead: bool = True) -> None:
        self._upstream = upstream
        self._fallback_cwd = fallback_cwd
        self._read_ahead = read_ahead
        self._ahead: dict[_Request, _Ahead] = {}

    async def list(
        self, *, cwd: str | None, cursor: str | None, meta: Mapping[str, Any]
    ) -> dict[str, Any]:
        if cwd is not None and not posixpath.isabs(cwd):
            raise invalid_params(RELATIVE_CWD)
        inner = None if cursor is None else decode_cursor(cursor, cwd).gateway_cursor
        request = _Request(inner, cwd, page_size(meta))
        ready = await self._take(request)
        result, following = ready if ready is not None else await self._page(request)
        if following is not None and self._read_ahead:
            self._start(_Request(following, cwd, request.size))
        return result

    async def _page(self, request: _Request) -> tuple[dict[str, Any], str | None]:
        """One ``sessions.list`` call: the ACP result and the gateway's next cursor."""
        params: dict[str, Any] = {"limit": request.size, "includeDerivedTitles": True}
        if request.cwd is not None:
            params["workspaceDir"] = request.cwd
        if request.gateway_cursor is not None:
            params["cursor"] = request.gateway_cursor
        try:
            page = await self._upstream.request("sessions.list", params)
        except RequestError as error:
            raise _cursor_refused(error) from None
        fallback = self._fallback_cwd
        result: dict[str, Any] = {
            "sessions": [session_info(row, fallback) for row in page["sessions"]]
        }
        following = page.get("nextCursor")
        if not isinstance(following, str) or not following:
            return result, None
        result["nextCursor"] = encode_cursor(ListCursor(following, request.cwd))
        return result, following

    def _start(self, request: _Request) -> None:
        while len(self._ahead) >= MAX_READ_AHEAD:
            _, stale = self._ahead.popitem()
            stale.task.cancel()
        task = asyncio.ensure_future(self._page(request))
        task.add_done_callback(_consume)
        self._ahead[request] = _Ahead(task, time.monotonic())

    async def _take(self, request: _Request) -> tuple[dict[str, Any], str | None] | None:
        ahead = self._ahead.pop(request, None)
        if ahead is None:
            return None
        if time.monotonic() - ahead.started > READ_AHEAD_TTL_S:
            ahead.task.cancel()
            return None
        try:
            return await asyncio.shield(ahead.task)
        except RequestError:
            return None  # read again, and answer that error if it happens again

    def close(self) -> None:
        for ahead in self._ahead.values():
            ahead.task.cancel()
        self._ahead.clear()


def _consume(task: asyncio.Task[tuple[dict[str, Any], str | None]]) -> None:
    if not task.cancelled():
        task.exception()  # a failed read-ahead is read again on demand; never reported
