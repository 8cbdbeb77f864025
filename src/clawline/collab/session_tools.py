"""The read-side session tools: ``sessions_list``, ``sessions_history``, ``sessions_yield``
(docs/collaboration.md).

- ``sessions_list {kinds?, limit? >= 1, activeMinutes? >= 1, messageLimit? >= 0}`` →
  ``{count, sessions:[row]}``. As in OpenClaw the listing's ``limit`` is applied *before* the
  visibility filter (so fewer rows than ``limit`` may come back); without a limit at most
  :data:`LIST_SCAN_MAX` rows are examined. ``messageLimit`` (at most 20) adds each row's last
  messages, tool messages stripped, read at most 4 sessions at a time.
- ``sessions_history {sessionKey (key or sessionId), limit?, includeTools? = false}`` →
  ``{sessionKey, messages, truncated, droppedMessages, contentTruncated, contentRedacted,
  bytes}`` (see :mod:`clawline.collab.sessions_history`).
- ``sessions_yield {message?}`` → ``{status:"yielded", message}`` and the turn ends
  (:attr:`ToolResult.ends_turn`); ``No session context`` without a requester session,
  ``Yield not supported in this context`` without a running turn (no run id).

Refusals are ``{status:"error"|"forbidden", error}`` results.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.collab.policy import load_guard
from clawline.collab.sanitize import sanitize_message
from clawline.collab.session_tool_rows import tool_row
from clawline.collab.sessions_history import (
    HISTORY_DEFAULT_LIMIT,
    HISTORY_MAX_LIMIT,
    read_history,
    recent_messages,
)
from clawline.collab.targets import TargetError, resolve_reference
from clawline.collab.tool_args import ArgumentError, optional_int, optional_string, optional_strings
from clawline.sessions.catalog import MAX_LIST_LIMIT, SessionCatalog
from clawline.sessions.listing_rows import RowBuilder
from clawline.store.base import SessionQuery
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock
    from clawline.config import AgentsConfig
    from clawline.records.session import SessionEntry
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

LIST_KINDS = ("main", "group", "cron", "hook", "node", "other")
MESSAGE_LIMIT_MAX = 20
HISTORY_READS = 4
"""Sessions whose messages ``sessions_list`` reads at the same time."""
LIST_SCAN_MAX = MAX_LIST_LIMIT
YIELD_DEFAULT_MESSAGE = "Turn yielded."


def _bool(args: Mapping[str, JSON], name: str) -> bool:
    value = args.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ArgumentError(f"{name} must be true or false")
    return value


# --- sessions_list -----------------------------------------------------------------------------


def _listing(catalog: SessionCatalog, query: SessionQuery, limit: int | None) -> list[SessionEntry]:
    """The newest ``limit`` matching sessions (blocking)."""
    if limit is not None:
        return catalog.page(query, limit=min(limit, MAX_LIST_LIMIT)).entries
    return list(itertools.islice(catalog.store.iter_all(query), LIST_SCAN_MAX))


class SessionsListTool:
    """``sessions_list`` (module docstring): ``runs`` tells which sessions are busy; ``config``
    gives the visibility and the agent-to-agent policy."""

    spec = ToolSpec(
        name="sessions_list",
        description=(
            "List the sessions you may see, newest first, optionally with their last messages."
        ),
        parameters={
            "type": "object",
            "properties": {
                "kinds": {"type": "array", "items": {"type": "string", "enum": list(LIST_KINDS)}},
                "limit": {"type": "number", "minimum": 1},
                "activeMinutes": {"type": "number", "minimum": 1},
                "messageLimit": {"type": "number", "minimum": 0, "maximum": MESSAGE_LIMIT_MAX},
            },
        },
    )

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        runs: RunManager,
        config: AgentsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._runs = runs
        self._config = config

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        try:
            kinds_raw = optional_strings(args, "kinds")
            limit = optional_int(args, "limit", minimum=1)
            active_minutes = optional_int(args, "activeMinutes", minimum=1)
            message_limit = min(
                optional_int(args, "messageLimit", minimum=0) or 0, MESSAGE_LIMIT_MAX
            )
        except ArgumentError as error:
            return ToolResult.error(str(error))
        kinds = {kind.lower() for kind in kinds_raw or ()} & set(LIST_KINDS)
        catalog, store, workers = self._catalog, self._store, self._workers
        requester = catalog.canonical(ctx.session_key)
        guard = await load_guard(
            "list", requester, config=self._config, store=store, workers=workers
        )
        since = None
        if active_minutes is not None:
            since = max(0, self._clock.now_ms() - active_minutes * 60_000)
        query = SessionQuery(updated_since=since, include_global=True, include_unknown=True)
        entries = await workers.run(_listing, catalog, query, limit)
        visible = [
            entry
            for entry in entries
            if entry.key not in ("global", "unknown")
            and guard.check(entry.key).allowed
            and (not kinds or keys.tool_kind(entry.key, catalog.main_key) in kinds)
        ]
        busy = self._runs.busy_sessions()
        builder = RowBuilder(store, busy.__contains__)
        rows = await workers.run(builder.build, visible)
        out = [tool_row(catalog, row) for row in rows]
        if message_limit > 0:
            await self._attach_messages(visible, out, message_limit)
        sessions: list[JSON] = list(out)
        return ToolResult({"count": len(out), "sessions": sessions})

    async def _attach_messages(
        self, entries: list[SessionEntry], rows: list[JSONObject], limit: int
    ) -> None:
        gate = asyncio.Semaphore(HISTORY_READS)
        store, workers = self._store, self._workers

        async def attach(entry: SessionEntry, row: JSONObject) -> None:
            async with gate:
                messages = await workers.run(recent_messages, store, entry.session_id, limit)
            kept: list[JSON] = [sanitize_message(message).message for message in messages[-limit:]]
            row["messages"] = kept

        await asyncio.gather(
            *(attach(entry, row) for entry, row in zip(entries, rows, strict=True))
        )


# --- sessions_history --------------------------------------------------------------------------


class SessionsHistoryTool:
    """``sessions_history`` (module docstring): ``config`` gives the visibility and the
    agent-to-agent policy."""

    spec = ToolSpec(
        name="sessions_history",
        description="Read the recent messages of a session you may see (by key or sessionId).",
        parameters={
            "type": "object",
            "properties": {
                "sessionKey": {"type": "string"},
                "limit": {"type": "number", "minimum": 1},
                "includeTools": {"type": "boolean"},
            },
            "required": ["sessionKey"],
        },
    )

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        config: AgentsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._config = config

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        try:
            raw_key = optional_string(args, "sessionKey")
            if raw_key is None:
                raise ArgumentError("sessionKey required")
            limit = optional_int(args, "limit", minimum=1)
            include_tools = _bool(args, "includeTools")
        except ArgumentError as error:
            return ToolResult.error(str(error))
        catalog, store, workers = self._catalog, self._store, self._workers
        try:
            target = await workers.run(resolve_reference, catalog, raw_key)
        except TargetError as error:
            return ToolResult.error(str(error), error.status)
        requester = catalog.canonical(ctx.session_key)
        guard = await load_guard(
            "history", requester, config=self._config, store=store, workers=workers
        )
        access = guard.check(target.key)
        if not access.allowed:
            return ToolResult.error(access.error or "forbidden", access.status)
        session_id = None if target.entry is None else target.entry.session_id
        count = min(limit or HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT)
        history = await workers.run(
            read_history, store, session_id, count, include_tools=include_tools
        )
        messages: list[JSON] = list(history.messages)
        return ToolResult(
            {
                "sessionKey": target.display,
                "messages": messages,
                "truncated": history.truncated,
                "droppedMessages": history.dropped,
                "contentTruncated": history.content_truncated,
                "contentRedacted": history.content_redacted,
                "bytes": history.bytes,
            }
        )


# --- sessions_yield ----------------------------------------------------------------------------


class SessionsYieldTool:
    spec = ToolSpec(
        name="sessions_yield",
        description=(
            "End your current turn. Use after spawning subagents to receive their results as "
            "the next message."
        ),
        parameters={"type": "object", "properties": {"message": {"type": "string"}}},
    )

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        try:
            message = optional_string(args, "message") or YIELD_DEFAULT_MESSAGE
        except ArgumentError as error:
            return ToolResult.error(str(error))
        if not ctx.session_key:
            return ToolResult.error("No session context")
        if not ctx.run_id:
            return ToolResult.error("Yield not supported in this context")
        return ToolResult({"status": "yielded", "message": message}, ends_turn=True)
