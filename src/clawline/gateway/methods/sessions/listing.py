"""``sessions.list``: filter, sort and page in the store; build rows for the returned page only.

Two ways to page:

- by offset (OpenClaw): ``offset``/``limit`` → ``hasMore`` = ``offset + count < totalCount``,
  ``nextOffset`` when there is more;
- by keyset (clawline): ``cursor`` from the previous page's ``nextCursor`` → ``hasMore`` =
  ``nextCursor != null``. A cursor starts strictly after the last row it saw, so rows updated
  during a walk are neither skipped nor repeated; it cannot be combined with an offset.

The first page (no cursor, offset 0) carries both ``nextOffset`` and ``nextCursor``.

A page holds at most :data:`MAX_LIST_LIMIT` rows; a larger ``limit`` is refused
(:class:`PageTooLarge`) with a message that says to walk by ``cursor``.

``acpCwd`` (for ``clawline acp``): rows in ACP ``SessionInfo`` form, built from the entries
and answered as ``acpPages``: ``[[<JSON text of a SessionInfo array>, <cursor after it>], …]``
(pages of ``acpPageSize`` rows), which the bridge splices into its answers
(:mod:`clawline.sessions.acp_rows`); a keyset page then costs no count and no children or
run-state reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from clawline import keys
from clawline.gateway.frames import GatewayError
from clawline.gateway.methods.sessions.common import session_defaults
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.records.session import SessionEntry
from clawline.sessions.acp_rows import encode_acp_rows
from clawline.sessions.catalog import MAX_LIST_LIMIT, SessionCatalog
from clawline.sessions.changes import MAX_STORED_INT
from clawline.sessions.listing_rows import RowBuilder, RowCache, RowOptions, first_user_texts
from clawline.store.base import SessionQuery
from clawline.store.cursor import MAX_CURSOR_LENGTH, CursorCodec, Position
from clawline.types import JSON

methods = MethodRegistry()

DEFAULT_LIMIT = 100
SORT_BY = "updatedAt"
ACTIVE_SCAN_CHUNK = 1000
MAX_ACTIVE_SCAN = 50_000
"""``activeOnly`` filters on run state, which only the run manager knows, so it walks the
filtered rows in keyset order; it examines at most this many rows per call."""

_KEY = P.string(max_len=keys.MAX_KEY_LENGTH)
_FLAG = P.boolean()

LIST_SCHEMA = {
    "limit": P.integer(min=1),
    "offset": P.integer(min=0, max=MAX_STORED_INT),
    "activeMinutes": P.integer(min=1),
    "activeOnly": _FLAG,
    "sortBy": P.string(max_len=64),
    "label": P.string(max_len=1024),
    "spawnedBy": _KEY,
    "agentId": P.string(max_len=128),
    "search": P.string(max_len=1024),
    "workspaceDir": P.string(max_len=4096),
    "includeGlobal": _FLAG,
    "includeUnknown": _FLAG,
    "includeDerivedTitles": _FLAG,
    "includeLastMessage": _FLAG,
    "excludeSubagents": _FLAG,
    "excludeCron": _FLAG,
    "cursor": P.string(nullable=True, max_len=MAX_CURSOR_LENGTH),
    "rootSessionKey": _KEY,
    "configuredAgentsOnly": _FLAG,
    "excludeSystem": _FLAG,
    "archived": P.anything(),
    "archivedFilter": P.string(choices=("active", "all", "archived")),
    "acpCwd": P.string(max_len=4096),
    "acpPageSize": P.integer(min=1, max=MAX_LIST_LIMIT),
}


class PageTooLarge(GatewayError):
    """A ``limit`` above :data:`MAX_LIST_LIMIT`: longer listings are walked by cursor."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"sessions.list: limit {limit} is above the largest page ({MAX_LIST_LIMIT} rows);"
            " walk a longer listing by cursor: pass each page's nextCursor as cursor until it"
            " is null",
            details={"maxLimit": MAX_LIST_LIMIT},
        )


@dataclass(frozen=True, slots=True)
class ListPlan:
    query: SessionQuery
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: str | None = None
    active_only: bool = False
    archived_only: bool = False
    """``archived: true`` or ``archivedFilter: "archived"``: clawline archives no session, so
    such a listing is empty (``excludeSystem`` needs nothing either: there are no system
    sessions)."""
    agents: frozenset[str] | None = None
    """``configuredAgentsOnly``: the agents whose sessions are kept (rows of no agent, such as
    ``global``, stay as the include flags say); ``None`` keeps every agent's."""
    options: RowOptions = field(default_factory=RowOptions)
    acp_cwd: str | None = None
    """``acpCwd``: answer ACP ``SessionInfo`` rows, with this cwd for rows that have none."""
    acp_page_size: int | None = None
    """``acpPageSize``: split those rows in pages of this many (``None``: one page)."""

    @property
    def scans(self) -> bool:
        """Whether rows are filtered outside the store, by walking them."""
        return self.active_only or self.agents is not None


@dataclass(frozen=True, slots=True)
class ListOutcome:
    rows: orjson.Fragment
    """The JSON array of the rows, already encoded (see :meth:`RowBuilder.build_array`); with
    ``acpCwd``, the JSON text of the ``SessionInfo`` array (a string)."""
    count: int
    total: int
    has_more: bool
    next_offset: int | None
    next_cursor: str | None


def _text(params: dict[str, Any], name: str) -> str | None:
    """A string param trimmed; blank counts as absent."""
    value = params.get(name)
    if value is None:
        return None
    trimmed = str(value).strip()
    return trimmed or None


def build_query(call: Call, params: dict[str, Any]) -> SessionQuery:
    catalog = call.gateway.catalog
    agent = _text(params, "agentId")
    spawned_by = _text(params, "spawnedBy")
    root = _text(params, "rootSessionKey")
    minutes = params.get("activeMinutes")
    since = None
    if minutes is not None:
        since = max(0, call.gateway.clock.now_ms() - minutes * 60_000)
    return SessionQuery(
        agent_id=None if agent is None else keys.normalize_agent_id(agent),
        updated_since=since,
        label=_text(params, "label"),
        spawned_by=None if spawned_by is None else catalog.canonical(spawned_by),
        root=None if root is None else catalog.canonical(root),
        cwd=_text(params, "workspaceDir"),
        exclude_subagents=bool(params.get("excludeSubagents")),
        exclude_cron=bool(params.get("excludeCron")),
        include_global=bool(params.get("includeGlobal")),
        include_unknown=bool(params.get("includeUnknown")),
        search=_text(params, "search"),
    )


def _cursor_at(catalog: SessionCatalog, query: SessionQuery, entry: SessionEntry) -> str:
    codec = CursorCodec(catalog.store.secret())
    return codec.encode(Position.of(entry), query.fingerprint())


def _by_offset(
    catalog: SessionCatalog, plan: ListPlan
) -> tuple[list[SessionEntry], int, str | None]:
    """The page at ``plan.offset``, the number of matching rows, and a cursor after the page
    when rows follow it."""
    store = catalog.store
    if plan.offset == 0:
        page = catalog.page(plan.query, limit=plan.limit)
        if page.next_cursor is None:
            return page.entries, len(page.entries), None
        return page.entries, store.count(plan.query), page.next_cursor
    entries = store.page_at_offset(plan.query, plan.offset, plan.limit)
    total = store.count(plan.query)
    following = None
    if entries and plan.offset + len(entries) < total:
        following = _cursor_at(catalog, plan.query, entries[-1])
    return entries, total, following


def _kept_by(plan: ListPlan, is_active: Callable[[str], bool]) -> Callable[[str], bool]:
    agents = plan.agents

    def kept(key: str) -> bool:
        if plan.active_only and not is_active(key):
            return False
        if agents is None:
            return True
        parsed = keys.parse_agent_session_key(key)
        return parsed is None or parsed.agent_id in agents

    return kept


def _active_scan(
    catalog: SessionCatalog, plan: ListPlan, is_active: Callable[[str], bool]
) -> tuple[list[SessionEntry], int, SessionEntry | None]:
    """Walk the filtered rows in keyset order (from ``plan.cursor``), keeping those the plan's
    outside filters keep (an active run, a configured agent). Returns the page, the matches
    seen, and — when the scan budget ran out — the last row examined (the walk resumes after
    it)."""
    kept = _kept_by(plan, is_active)
    page_entries: list[SessionEntry] = []
    matches = 0
    scanned = 0
    cursor = plan.cursor
    while True:
        page = catalog.page(plan.query, limit=ACTIVE_SCAN_CHUNK, cursor=cursor)
        for entry in page.entries:
            if not kept(entry.key):
                continue
            matches += 1
            if matches > plan.offset and len(page_entries) < plan.limit:
                page_entries.append(entry)
        scanned += len(page.entries)
        if page.next_cursor is None:
            return page_entries, matches, None
        if scanned >= MAX_ACTIVE_SCAN:
            return page_entries, matches, page.entries[-1]
        cursor = page.next_cursor


def run_listing(
    catalog: SessionCatalog,
    plan: ListPlan,
    is_active: Callable[[str], bool],
    cache: RowCache | None = None,
) -> ListOutcome:
    """Page, count and build rows (blocking: runs on the store thread)."""
    if plan.acp_cwd is not None and not plan.scans and plan.offset == 0:
        # The bridge's walk: a keyset page, nothing counted, no children or run state read.
        page = catalog.page(plan.query, limit=plan.limit, cursor=plan.cursor)
        return _acp_outcome(
            catalog,
            plan,
            page.entries,
            -1,
            page.next_cursor is not None,
            None,
            page.next_cursor,
            cache,
        )
    keyset = plan.cursor is not None
    stopped_at: SessionEntry | None = None
    next_cursor: str | None = None
    if plan.scans:
        entries, total, stopped_at = _active_scan(catalog, plan, is_active)
        more_matches = total > plan.offset + len(entries)
        if more_matches and entries:
            next_cursor = _cursor_at(catalog, plan.query, entries[-1])
        elif stopped_at is not None:
            # Every row up to ``stopped_at`` was examined: the walk goes on after it.
            next_cursor = _cursor_at(catalog, plan.query, stopped_at)
        has_more = next_cursor is not None
    elif keyset:
        page = catalog.page(plan.query, limit=plan.limit, cursor=plan.cursor)
        entries, next_cursor = page.entries, page.next_cursor
        total = catalog.store.count(plan.query)
        has_more = next_cursor is not None
    else:
        entries, total, next_cursor = _by_offset(catalog, plan)
        has_more = plan.offset + len(entries) < total
        if not has_more:
            next_cursor = None
    next_offset = plan.offset + len(entries) if has_more and not keyset else None
    if plan.acp_cwd is not None:
        return _acp_outcome(
            catalog, plan, entries, total, has_more, next_offset, next_cursor, cache
        )
    rows = RowBuilder(catalog.store, is_active, cache).build_array(entries, plan.options)
    return ListOutcome(rows, len(entries), total, has_more, next_offset, next_cursor)


def _acp_outcome(
    catalog: SessionCatalog,
    plan: ListPlan,
    entries: list[SessionEntry],
    total: int,
    has_more: bool,
    next_offset: int | None,
    next_cursor: str | None,
    cache: RowCache | None,
) -> ListOutcome:
    """``acpPages``: the page split in pages of ``plan.acp_page_size`` rows, each the JSON text
    of its ``SessionInfo`` array and the cursor after it (the last: ``next_cursor``)."""
    assert plan.acp_cwd is not None
    firsts = first_user_texts(catalog.store, entries) if plan.options.derived_titles else None
    size = plan.acp_page_size or max(1, len(entries))
    pages: list[tuple[str, str | None]] = []
    for start in range(0, len(entries), size):
        end = min(start + size, len(entries))
        text = encode_acp_rows(
            entries[start:end],
            None if firsts is None else firsts[start:end],
            plan.acp_cwd,
            cache,
        )
        after = (
            next_cursor
            if end == len(entries)
            else _cursor_at(catalog, plan.query, entries[end - 1])
        )
        pages.append((text, after))
    if not pages:
        pages.append(("[]", next_cursor))
    return ListOutcome(
        orjson.Fragment(orjson.dumps(pages)),
        len(entries),
        total,
        has_more,
        next_offset,
        next_cursor,
    )


def plan_from(call: Call) -> ListPlan:
    params = call.params
    sort_by = params.get("sortBy")
    if sort_by is not None and sort_by != SORT_BY:
        raise GatewayError(f'sessions.list sortBy "{sort_by}" is not supported (use "{SORT_BY}")')
    offset = params.get("offset", 0)
    cursor = params.get("cursor")
    if cursor is not None and offset:
        raise GatewayError(
            "sessions.list: cursor and offset cannot be combined (a cursor already says where "
            "the page starts; send offset 0 or leave it out)"
        )
    limit = params.get("limit", DEFAULT_LIMIT)
    if limit > MAX_LIST_LIMIT:
        raise PageTooLarge(limit)
    archived = params.get("archived")
    if archived is not None and not (isinstance(archived, bool) or archived == "all"):
        raise GatewayError('invalid sessions.list params: archived must be a boolean or "all"')
    return ListPlan(
        query=build_query(call, params),
        archived_only=archived is True or params.get("archivedFilter") == "archived",
        limit=limit,
        offset=offset,
        cursor=cursor,
        active_only=bool(params.get("activeOnly")),
        agents=_configured_agents(call) if params.get("configuredAgentsOnly") else None,
        options=RowOptions(
            derived_titles=bool(params.get("includeDerivedTitles")),
            last_message=bool(params.get("includeLastMessage")),
        ),
        acp_cwd=params.get("acpCwd"),
        acp_page_size=params.get("acpPageSize"),
    )


def _configured_agents(call: Call) -> frozenset[str] | None:
    """The agents of ``[[agents.list]]``, else the default agent alone. A request naming its
    ``agentId`` is not narrowed further (OpenClaw's rule)."""
    if _text(call.params, "agentId") is not None:
        return None
    configured = call.gateway.runs.config.agent_ids()
    return frozenset(configured or [call.gateway.catalog.default_agent_id])


@methods.method("sessions.list", scope=READ, schema=LIST_SCHEMA)
async def sessions_list(call: Call) -> JSON:
    plan = plan_from(call)
    gateway = call.gateway
    if plan.archived_only:
        empty = orjson.Fragment(b'[["[]",null]]' if plan.acp_cwd is not None else b"[]")
        outcome = ListOutcome(empty, 0, 0, False, None, None)
    else:
        outcome = await gateway.workers.run(
            run_listing, gateway.catalog, plan, gateway.runs.has_active_run, gateway.row_cache
        )
    if plan.acp_cwd is not None:
        return {
            "ts": gateway.clock.now_ms(),
            "count": outcome.count,
            "limitApplied": plan.limit,
            "hasMore": outcome.has_more,
            "nextCursor": outcome.next_cursor,
            "acpPages": cast(JSON, outcome.rows),
        }
    return {
        "ts": gateway.clock.now_ms(),
        "path": gateway.store.location,
        "count": outcome.count,
        "totalCount": outcome.total,
        "limitApplied": plan.limit,
        "hasMore": outcome.has_more,
        "nextOffset": outcome.next_offset,
        "nextCursor": outcome.next_cursor,
        "owners": [],
        "defaults": session_defaults(),
        "sessions": cast(JSON, outcome.rows),
    }
