"""ACP ``SessionInfo`` rows built straight from catalog entries, for ``clawline acp``.

``clawline acp`` lists sessions through the gateway's ``sessions.list`` and maps every
gateway row to an ACP ``SessionInfo`` (:func:`clawline.acp.meta.session_info`). With the
``acpCwd`` param the gateway builds that ``SessionInfo`` itself, from the entry, and answers
the page already encoded (docs/gateway-sessions.md): the bridge splices the bytes into its
answer instead of decoding a gateway row and encoding an ACP one for every listed session.

:func:`acp_info` is :func:`clawline.acp.meta.session_info` of
:func:`clawline.sessions.listing_rows.session_row` (with its derived title), computed without
the intermediate row; the tests check the two agree. The helpers the bridge shares
(:func:`text`, :func:`iso_time`, :func:`without_cwd_prefix`) live here, below both.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import orjson

from clawline.records.session import SessionEntry
from clawline.sessions.listing_rows import RowCache, agent_and_kind, derived_title

ROLES = frozenset({"orchestrator", "leaf"})
SCOPES = frozenset({"children", "none"})
CWD_PREFIX = "[Working directory: "


def text(value: object) -> str | None:
    """A string trimmed; anything else, or blank, is ``None``."""
    if value.__class__ is not str:
        return None
    trimmed = value.strip()
    return trimmed or None


_MINUTES: dict[int, str] = {}
"""``YYYY-MM-DDTHH:MM:`` by epoch minute: rows of one page are close in time, so formatting a
row's timestamp is mostly a lookup (this runs once per listed row)."""


def _minute(minute: int) -> str | None:
    prefix = _MINUTES.get(minute)
    if prefix is None:
        try:
            t = time.gmtime(minute * 60)
        except (OverflowError, OSError, ValueError):
            return None
        if t.tm_year > 9999:
            return None
        prefix = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:"
        if len(_MINUTES) >= 4096:
            _MINUTES.clear()
        _MINUTES[minute] = prefix
    return prefix


def iso_time(epoch_ms: object) -> str | None:
    """``2026-11-30T02:58:04.120Z`` (JavaScript's ``toISOString``), or ``None``."""
    if epoch_ms.__class__ is not int or epoch_ms < 0:
        return None
    minute, millis = divmod(epoch_ms, 60_000)
    prefix = _minute(minute)
    if prefix is None:
        return None
    seconds, millis = divmod(millis, 1000)
    return f"{prefix}{seconds:02d}.{millis:03d}Z"


def without_cwd_prefix(title: str | None) -> str | None:
    """A title derived from a prompt the bridge prefixed, without ``[Working directory: …]``;
    ``None`` when nothing else fits in it (the gateway clips derived titles to 60 characters)."""
    if title is None or not title.startswith(CWD_PREFIX):
        return title
    end = title.find("] ")
    return None if end < 0 else title[end + 2 :].strip() or None


def acp_info(entry: SessionEntry, derived_title: str | None, fallback_cwd: str) -> dict[str, Any]:
    """The ``SessionInfo`` the bridge makes of this entry's listing row (``derived_title``: the
    row's ``derivedTitle``, ``None`` when the row has none)."""
    key = entry.key
    info: dict[str, Any] = {
        "sessionId": key,
        "cwd": text(entry.spawned_cwd) or text(entry.spawned_workspace_dir) or fallback_cwd,
        "title": without_cwd_prefix(text(derived_title))
        or text(entry.display_name)
        or text(entry.label)
        or key,
    }
    if (updated := iso_time(entry.updated_at)) is not None:
        info["updatedAt"] = updated
    # _meta: clawline.acp.meta.lineage_meta of the row, field by field.
    meta: dict[str, Any] = {"sessionKey": key}
    kind = agent_and_kind(key)[1].strip()
    if kind:
        meta["kind"] = kind
    channel = entry.extra.get("channel")
    if channel.__class__ is str and (channel := channel.strip()):
        meta["channel"] = channel
    spawned_by = text(entry.spawned_by)
    parent = text(entry.parent_session_key) or spawned_by
    if parent is not None:
        meta["parentSessionId"] = parent
    if spawned_by is not None:
        meta["spawnedBy"] = spawned_by
    depth = entry.spawn_depth
    if depth.__class__ is int and depth >= 0:
        meta["spawnDepth"] = depth
    if (role := entry.subagent_role) in ROLES:
        meta["subagentRole"] = role
    if (scope := entry.subagent_control_scope) in SCOPES:
        meta["subagentControlScope"] = scope
    for name, value in (
        ("spawnedWorkspaceDir", entry.spawned_workspace_dir),
        ("spawnedCwd", entry.spawned_cwd),
        ("rootSessionKey", entry.root_session_key),
        ("traceId", entry.trace_id),
    ):
        if value.__class__ is str and (value := value.strip()):
            meta[name] = value
    path = entry.lineage_path
    meta["lineage"] = {
        "parent": path[-2] if len(path) > 1 else None,
        "path": "/" + "/".join(path),
        "depth": len(path) - 1,
    }
    info["_meta"] = meta
    return info


def encode_acp_rows(
    entries: Sequence[SessionEntry],
    firsts: Sequence[str | None] | None,
    fallback_cwd: str,
    cache: RowCache | None = None,
) -> str:
    """The JSON text of the ``SessionInfo`` array of a page. ``firsts``: each entry's first user
    message (:func:`clawline.sessions.listing_rows.first_user_texts`), its derived title comes
    from; ``None``: the rows have no derived title. A row is reused from ``cache`` while its
    entry is the very same object (stores hand back the identical :class:`SessionEntry` for an
    unchanged row, see :class:`RowCache`) and its first message and the fallback cwd are
    unchanged."""
    known = cache.acp if cache is not None else {}
    capacity = cache.acp_capacity if cache is not None else len(entries)
    dumps = orjson.dumps
    parts = []
    sources: Sequence[str | bool | None] = [False] * len(entries) if firsts is None else firsts
    for entry, source in zip(entries, sources, strict=True):
        hit = known.get(entry.key)
        if hit is not None and hit[0] is entry and hit[1] == source and hit[2] == fallback_cwd:
            parts.append(hit[3])
            continue
        title = None
        if source is not False:
            title = derived_title(entry, source if isinstance(source, str) else None)
        row = dumps(acp_info(entry, title, fallback_cwd))
        if len(known) >= capacity:
            known.clear()
        known[entry.key] = (entry, source, fallback_cwd, row)
        parts.append(row)
    return (b"[" + b",".join(parts) + b"]").decode()
