"""Walking the ``session/list`` pages of any ACP agent (docs/acp-client.md).

The walker sends exactly ``session/list {}`` and then ``{"cursor": nextCursor}``, validates each
page as raw JSON and returns the rows of all pages in order (duplicates kept: deduplication is
the caller's projection). The family operation caps the walk at :data:`MAX_FAMILY_PAGES`;
``clawline acp ls`` walks without a cap. Both refuse a cursor that is not a non-blank string or
that an earlier page already returned, so a looping agent cannot keep a walk going forever.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from clawline.acp_client.agent_calls import AcpClientError

MAX_FAMILY_PAGES = 128
INVALID_PAGE = "Invalid ACP session/list response"
INVALID_CURSOR = "Invalid ACP session/list cursor"

SessionRow = dict[str, Any]
"""One ``SessionInfo`` as the agent sent it (validated: ``sessionId`` and ``cwd`` are non-empty
strings, ClawX's rule)."""

# ECMAScript WhiteSpace and LineTerminator: what String.prototype.trim removes. Python's
# str.strip differs (it keeps U+FEFF and removes U+001C..U+001F and U+0085).
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def is_blank(text: str) -> bool:
    return js_trim(text) == ""


def too_many_pages(limit: int) -> str:
    return f"ACP session/list exceeded {limit} pages"


class SessionListSource(Protocol):
    async def request(self, method: str, params: Mapping[str, Any]) -> object: ...


def _page_rows(page: object) -> list[SessionRow]:
    if type(page) is not dict:
        raise AcpClientError(INVALID_PAGE)
    sessions = page.get("sessions")
    if type(sessions) is not list:
        raise AcpClientError(INVALID_PAGE)
    for row in sessions:
        if (
            type(row) is not dict
            or type(row.get("sessionId")) is not str
            or row["sessionId"] == ""
            or type(row.get("cwd")) is not str
            or row["cwd"] == ""
        ):
            raise AcpClientError(INVALID_PAGE)
    return sessions


def _next_cursor(page: dict[str, Any], seen: set[str]) -> str | None:
    cursor = page.get("nextCursor")
    if cursor is None:
        return None
    if type(cursor) is not str or is_blank(cursor) or cursor in seen:
        raise AcpClientError(INVALID_CURSOR)
    seen.add(cursor)
    return cursor


async def walk_session_list(
    source: SessionListSource, *, max_pages: int | None = MAX_FAMILY_PAGES
) -> list[SessionRow]:
    """Every row of every page. With ``max_pages`` set, a page beyond it is never requested: the
    walk fails with ``ACP session/list exceeded N pages`` after exactly ``max_pages`` calls."""
    rows: list[SessionRow] = []
    seen: set[str] = set()
    params: dict[str, Any] = {}
    calls = 0
    while True:
        page = await source.request("session/list", params)
        calls += 1
        rows.extend(_page_rows(page))
        assert type(page) is dict
        cursor = _next_cursor(page, seen)
        if cursor is None:
            return rows
        if max_pages is not None and calls >= max_pages:
            raise AcpClientError(too_many_pages(max_pages))
        params = {"cursor": cursor}
