"""A gateway session row seen through ACP: its lineage ``_meta`` and its ``SessionInfo``.

The ``_meta`` object carries OpenClaw's lineage keys (as ``openclaw acp`` sends them) plus
clawline's ``rootSessionKey``, ``traceId`` and ``lineage {parent, path, depth}``::

    {"sessionKey", "kind"?, "channel"?, "parentSessionId"?, "spawnedBy"?, "spawnDepth"?,
     "subagentRole"?, "subagentControlScope"?, "spawnedWorkspaceDir"?, "spawnedCwd"?,
     "rootSessionKey"?, "traceId"?, "lineage"?}

``parentSessionId`` is ``parentSessionKey ?? spawnedBy``: a gateway key, which is also the
parent's ACP ``sessionId`` in listings. Empty or invalid values are left out; ``sessionKey`` is
always there. The same object goes into ``session_info_update._meta``.

These functions run once per listed row, so they read the row dict directly and build plain
dicts (no pydantic models).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

_ROLES = frozenset({"orchestrator", "leaf"})
_SCOPES = frozenset({"children", "none"})
_TEXT_KEYS = ("kind", "channel")
_TRAILING_TEXT_KEYS = ("spawnedWorkspaceDir", "spawnedCwd", "rootSessionKey", "traceId")
_CWD_PREFIX = "[Working directory: "


def _text(value: object) -> str | None:
    if value.__class__ is not str:
        return None
    trimmed = value.strip()
    return trimmed or None


def _lineage(value: object) -> dict[str, Any] | None:
    if value.__class__ is not dict:
        return None
    parent, path, depth = value.get("parent"), value.get("path"), value.get("depth")
    if parent is not None and parent.__class__ is not str:
        return None
    if path.__class__ is not str or depth.__class__ is not int or depth < 0:
        return None
    return {"parent": parent, "path": path, "depth": depth}


def lineage_meta(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``_meta`` of a gateway row (``sessions.list`` / ``sessions.get`` row)."""
    # Runs for every listed row: values are tested inline (most are None), not through _text.
    get = row.get
    meta: dict[str, Any] = {"sessionKey": row["key"]}
    for name in _TEXT_KEYS:
        value = get(name)
        if value.__class__ is str and (value := value.strip()):
            meta[name] = value
    spawned_by = get("spawnedBy")
    if spawned_by is not None:
        spawned_by = _text(spawned_by)
    parent = get("parentSessionKey")
    parent = (_text(parent) if parent is not None else None) or spawned_by
    if parent is not None:
        meta["parentSessionId"] = parent
    if spawned_by is not None:
        meta["spawnedBy"] = spawned_by
    depth = get("spawnDepth")
    if depth.__class__ is int and depth >= 0:
        meta["spawnDepth"] = depth
    if (role := get("subagentRole")) in _ROLES:
        meta["subagentRole"] = role
    if (scope := get("subagentControlScope")) in _SCOPES:
        meta["subagentControlScope"] = scope
    for name in _TRAILING_TEXT_KEYS:
        value = get(name)
        if value.__class__ is str and (value := value.strip()):
            meta[name] = value
    if (lineage := _lineage(get("lineage"))) is not None:
        meta["lineage"] = lineage
    return meta


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


def row_cwd(row: Mapping[str, Any], fallback: str) -> str:
    """``spawnedCwd ?? spawnedWorkspaceDir ?? fallback`` (the bridge's working directory)."""
    return _text(row.get("spawnedCwd")) or _text(row.get("spawnedWorkspaceDir")) or fallback


def _without_cwd_prefix(title: str | None) -> str | None:
    """A title derived from a prompt the bridge prefixed, without ``[Working directory: …]``;
    ``None`` when nothing else fits in it (the gateway clips derived titles to 60 characters)."""
    if title is None or not title.startswith(_CWD_PREFIX):
        return title
    end = title.find("] ")
    return None if end < 0 else title[end + 2 :].strip() or None


def row_title(row: Mapping[str, Any]) -> str:
    """``derivedTitle → displayName → label → key`` (a derived title without the bridge's
    working-directory prefix, skipped when that prefix is all it holds)."""
    return (
        _without_cwd_prefix(_text(row.get("derivedTitle")))
        or _text(row.get("displayName"))
        or _text(row.get("label"))
        or row["key"]
    )


def session_info(row: Mapping[str, Any], fallback_cwd: str) -> dict[str, Any]:
    """One ``SessionInfo`` of ``session/list``: ``sessionId`` is the gateway key."""
    info: dict[str, Any] = {
        "sessionId": row["key"],
        "cwd": row_cwd(row, fallback_cwd),
        "title": row_title(row),
    }
    if (updated := iso_time(row.get("updatedAt"))) is not None:
        info["updatedAt"] = updated
    info["_meta"] = lineage_meta(row)
    return info
