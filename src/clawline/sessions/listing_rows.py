"""Listing rows (OpenClaw's ``GatewaySessionRow``) built from catalog entries.

A row is what ``sessions.list``, ``sessions.changed`` and ACP listings show of a session: the
entry's fields, its lineage, its run state (``status`` and ``hasActiveRun``), its direct
children, and optionally a derived title and a preview of the last message. Everything that
needs the store is fetched in batches for a whole page (see :class:`RowBuilder`), never per row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from clawline import keys
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.store.base import Store

DERIVED_TITLE_MAX = 60
PREVIEW_MAX = 240
HEAD_EVENTS = 8
"""How many events from a transcript's head may hold the first user message."""


def event_text(event: TranscriptEvent) -> str:
    """The plain text of a transcript message event (text blocks joined)."""
    content = event.data.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_SUBAGENT_CONTEXT = "[Subagent Context]"
_SUBAGENT_TASK = "[Subagent Task]:"


def _message_title(text: str | None) -> str | None:
    """A spawned child's first message opens with the same ``[Subagent Context]`` paragraph for
    every child; its title is that marker followed by the task, so siblings can be told apart
    (clients strip the marker for display, docs/web.md)."""
    if text is None or not text.startswith(_SUBAGENT_CONTEXT):
        return text
    index = text.find(_SUBAGENT_TASK)
    if index < 0:
        return text
    task = " ".join(text[index + len(_SUBAGENT_TASK) :].split())
    return f"{_SUBAGENT_CONTEXT} {task}" if task else text


def derived_title(entry: SessionEntry, first_user_text: str | None) -> str:
    """displayName → subject → first user message (a child's: ``[Subagent Context] <task>``)
    → ``"<sessionId[:8]> (YYYY-MM-DD)"``."""
    for candidate in (
        entry.display_name,
        entry.extra.get("subject"),
        _message_title(first_user_text),
    ):
        if isinstance(candidate, str) and candidate.strip():
            return _clip(candidate, DERIVED_TITLE_MAX)
    return f"{entry.session_id[:8]} ({_day(entry.created_at)})"


_DAYS: dict[int, str] = {}
_DAY_MS = 86_400_000


def _day(created_at: int) -> str:
    """``YYYY-MM-DD`` (UTC) of an epoch-ms time, by a per-day cache: rows of one page are
    mostly from a few days, and formatting a date costs more than the rest of a title."""
    if created_at.__class__ is not int or not 0 <= created_at < 1 << 43:
        return dt.datetime.fromtimestamp(created_at / 1000, tz=dt.UTC).strftime("%Y-%m-%d")
    number = created_at // _DAY_MS
    day = _DAYS.get(number)
    if day is None:
        day = dt.datetime.fromtimestamp(number * 86_400, tz=dt.UTC).strftime("%Y-%m-%d")
        if len(_DAYS) >= 4096:
            _DAYS.clear()
        _DAYS[number] = day
    return day


_GROUP_MARKERS = frozenset({"group", "channel", "room"})


def _agent_and_kind(key: str) -> tuple[str, str]:
    """``(agentId, kind)`` of a key: what :func:`keys.agent_id_of` and :func:`keys.chat_kind`
    answer, without parsing a canonical key three times (this runs once per listed row)."""
    parts = key.split(":")
    if (
        len(parts) >= 3
        and parts[0] == "agent"
        and "thread" not in parts
        and "" not in parts
        and key.islower()
    ):
        return parts[1], "direct" if _GROUP_MARKERS.isdisjoint(parts[3:]) else "group"
    return keys.agent_id_of(key), keys.chat_kind(key)


agent_and_kind = _agent_and_kind


def _needs_head(entry: SessionEntry) -> bool:
    """Whether :func:`derived_title` of ``entry`` may come from its transcript (no
    displayName or subject answers it first)."""
    for candidate in (entry.display_name, entry.extra.get("subject")):
        if isinstance(candidate, str) and candidate.strip():
            return False
    return True


def _first_user_text(events: Iterable[TranscriptEvent]) -> str | None:
    return next(
        (
            event_text(event)
            for event in events
            if event.type == "message" and event.data.get("role") == "user"
        ),
        None,
    )


def first_user_texts(store: Store, batch: Sequence[SessionEntry]) -> list[str | None]:
    """The first user message of each entry's transcript head, read (one query) only for the
    entries whose :func:`derived_title` may come from it (``None`` for the others)."""
    wanted = [entry.session_id for entry in batch if _needs_head(entry)]
    if not wanted:
        return [None] * len(batch)
    heads = store.heads(wanted, HEAD_EVENTS)
    return [_first_user_text(heads.get(entry.session_id, ())) for entry in batch]


def derived_titles(store: Store, batch: Sequence[SessionEntry]) -> list[str]:
    """:func:`derived_title` of each entry (see :func:`first_user_texts`)."""
    firsts = first_user_texts(store, batch)
    return [derived_title(entry, first) for entry, first in zip(batch, firsts, strict=True)]


_DYNAMIC = frozenset({"hasActiveRun", "childSessions", "derivedTitle", "lastMessagePreview"})
"""Row fields that do not come from the entry alone; they are added last."""


def static_row(entry: SessionEntry) -> JSONObject:
    """The part of a row that depends on the entry only. ``extra`` fields (model, channel,
    thinkingLevel, …) are included; they never shadow a row field."""
    agent_id, kind = _agent_and_kind(entry.key)
    path = entry.lineage_path
    extensions = entry.plugin_extensions
    row: JSONObject = {
        "key": entry.key,
        "kind": kind,
        "agentId": agent_id,
        "sessionId": entry.session_id,
        "label": entry.label,
        "displayName": entry.display_name,
        "updatedAt": entry.updated_at,
        "createdAt": entry.created_at,
        "status": entry.status,
        "startedAt": entry.started_at,
        "endedAt": entry.ended_at,
        "spawnedBy": entry.spawned_by,
        "parentSessionKey": entry.parent_session_key,
        "spawnDepth": entry.spawn_depth,
        "subagentRole": entry.subagent_role,
        "subagentControlScope": entry.subagent_control_scope,
        "spawnedWorkspaceDir": entry.spawned_workspace_dir,
        "spawnedCwd": entry.spawned_cwd,
        "rootSessionKey": entry.root_session_key,
        "traceId": entry.trace_id,
        "pluginExtensions": {k: dict(v) for k, v in extensions.items()} if extensions else {},
        # Lineage.to_json(), spelled out: {parent, "/<root key>/…/<key>", depth}.
        "lineage": {
            "parent": path[-2] if len(path) > 1 else None,
            "path": "/" + "/".join(path),
            "depth": len(path) - 1,
        },
        "lineagePath": list(path),
    }
    for name, value in entry.extra.items():
        if name not in row and name not in _DYNAMIC:
            row[name] = value
    return row


def _dynamic_fields(
    has_active_run: bool,
    child_sessions: Sequence[str],
    title: str | None,
    last_message_preview: str | None,
) -> JSONObject:
    fields: JSONObject = {"hasActiveRun": has_active_run, "childSessions": list(child_sessions)}
    if title is not None:
        fields["derivedTitle"] = title
    if last_message_preview is not None:
        fields["lastMessagePreview"] = last_message_preview
    return fields


def session_row(
    entry: SessionEntry,
    *,
    has_active_run: bool,
    child_sessions: Sequence[str] = (),
    title: str | None = None,
    last_message_preview: str | None = None,
) -> JSONObject:
    """One listing row: :func:`static_row` followed by the run state, the direct children and
    (when asked for) the derived title and the last-message preview."""
    row = static_row(entry)
    row.update(_dynamic_fields(has_active_run, child_sessions, title, last_message_preview))
    return row


ACP_ROWS = 120_000
"""Encoded ACP rows kept (:attr:`RowCache.acp`): as many as the store's entry cache keeps
entries (:data:`clawline.store._sessions_table.ENTRY_CACHE_ROWS`), so a ``clawline acp`` walk
over 100,000 sessions encodes each row once per change. An ACP row is ~350 bytes."""


class RowCache:
    """Encoded static rows, reused while a session's entry is the very same object.

    Stores hand back the identical :class:`SessionEntry` for a row that has not changed
    (:class:`clawline.store._sessions_table.EntryCache`), so identity is an exact test of
    "nothing in the row changed" and a cached encoding is never stale. Bounded; past ``capacity`` it
    starts over.
    """

    def __init__(self, capacity: int = 20_000, acp_capacity: int = ACP_ROWS) -> None:
        self._capacity = capacity
        self._encoded: dict[str, tuple[SessionEntry, bytes]] = {}
        self.acp: dict[str, tuple[SessionEntry, str | bool | None, str, bytes]] = {}
        """Encoded ACP ``SessionInfo`` rows by key, with the entry, title source and fallback
        cwd they were built from (:func:`clawline.sessions.acp_rows.encode_acp_rows`)."""
        self.acp_capacity = acp_capacity
        """At most this many :attr:`acp` rows (then it starts over)."""

    def static_head(self, entry: SessionEntry) -> bytes:
        """The encoded :func:`static_row` without its closing brace, ready for more members."""
        hit = self._encoded.get(entry.key)
        if hit is not None and hit[0] is entry:
            return hit[1]
        head = orjson.dumps(static_row(entry))[:-1]
        if len(self._encoded) >= self._capacity:
            self._encoded.clear()
        self._encoded[entry.key] = (entry, head)
        return head


_IDLE_TAIL = b',"hasActiveRun":false,"childSessions":[]}'
_IDLE_PREFIX = b',"hasActiveRun":false,"childSessions":'
_BUSY_TAIL = b',"hasActiveRun":true,"childSessions":[]}'


@dataclass(frozen=True, slots=True)
class RowOptions:
    derived_titles: bool = False
    last_message: bool = False


class RowBuilder:
    """Builds rows for a batch of entries with a constant number of store queries."""

    def __init__(
        self, store: Store, is_active: Callable[[str], bool], cache: RowCache | None = None
    ) -> None:
        self._store = store
        self._is_active = is_active
        self._cache = cache

    def _extras(
        self, batch: list[SessionEntry], options: RowOptions
    ) -> list[tuple[bool, list[str], str | None, str | None]]:
        """Run state, children, title and preview of each entry (a constant number of reads)."""
        children = self._store.child_keys([entry.key for entry in batch])
        ids = [entry.session_id for entry in batch]
        titles: Sequence[str | None] = (
            derived_titles(self._store, batch) if options.derived_titles else [None] * len(batch)
        )
        lasts = self._store.lasts(ids) if options.last_message else {}
        out = []
        for entry, title in zip(batch, titles, strict=True):
            preview = None
            last = lasts.get(entry.session_id)
            if options.last_message and last is not None:
                preview = _clip(event_text(last), PREVIEW_MAX) or None
            out.append((self._is_active(entry.key), children.get(entry.key, []), title, preview))
        return out

    def build(
        self, entries: Iterable[SessionEntry], options: RowOptions | None = None
    ) -> list[JSONObject]:
        batch = list(entries)
        if not batch:
            return []
        extras = self._extras(batch, options or RowOptions())
        return [
            session_row(
                entry,
                has_active_run=active,
                child_sessions=children,
                title=title,
                last_message_preview=preview,
            )
            for entry, (active, children, title, preview) in zip(batch, extras, strict=True)
        ]

    def build_encoded(
        self, entries: Iterable[SessionEntry], options: RowOptions | None = None
    ) -> list[orjson.Fragment]:
        """The same rows as :meth:`build`, already encoded as JSON, reusing the cached
        encoding of every unchanged entry (for large listings)."""
        fragment = orjson.Fragment
        return [fragment(b"".join(parts)) for parts in self._encoded_parts(list(entries), options)]

    def build_array(
        self, entries: Iterable[SessionEntry], options: RowOptions | None = None
    ) -> orjson.Fragment:
        """The JSON array of the rows of :meth:`build`, encoded at once: every unchanged
        entry's cached encoding is copied once, into the array (for large listings)."""
        out = [b"["]
        for number, parts in enumerate(self._encoded_parts(list(entries), options)):
            if number:
                out.append(b",")
            out.extend(parts)
        out.append(b"]")
        return orjson.Fragment(b"".join(out))

    def _encoded_parts(
        self, batch: list[SessionEntry], options: RowOptions | None
    ) -> list[tuple[bytes, bytes]]:
        """Each row's encoding in two parts: the cached static head and the rest."""
        if not batch:
            return []
        options = options or RowOptions()
        head_of = (self._cache or RowCache()).static_head
        if options.derived_titles or options.last_message:
            extras = self._extras(batch, options)
            return [
                (
                    head_of(entry),
                    b"," + orjson.dumps(_dynamic_fields(active, children, title, preview))[1:],
                )
                for entry, (active, children, title, preview) in zip(batch, extras, strict=True)
            ]
        # The common, large case in one tight loop: no titles, no previews.
        children = self._store.child_keys([entry.key for entry in batch])
        is_active = self._is_active
        out = []
        for entry in batch:
            kids = children.get(entry.key)
            active = is_active(entry.key)
            if kids:
                tail = (
                    (b',"hasActiveRun":true,"childSessions":' if active else _IDLE_PREFIX)
                    + orjson.dumps(kids)
                    + b"}"
                )
            else:
                tail = _BUSY_TAIL if active else _IDLE_TAIL
            out.append((head_of(entry), tail))
        return out

    def one(self, entry: SessionEntry, options: RowOptions | None = None) -> JSONObject:
        return self.build([entry], options)[0]
