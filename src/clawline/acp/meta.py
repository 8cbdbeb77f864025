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

from collections.abc import Mapping
from typing import Any

from clawline.sessions.acp_rows import ROLES as _ROLES
from clawline.sessions.acp_rows import SCOPES as _SCOPES
from clawline.sessions.acp_rows import iso_time as iso_time
from clawline.sessions.acp_rows import text as _text
from clawline.sessions.acp_rows import without_cwd_prefix as _without_cwd_prefix

_TEXT_KEYS = ("kind", "channel")
_TRAILING_TEXT_KEYS = ("spawnedWorkspaceDir", "spawnedCwd", "rootSessionKey", "traceId")


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


def row_cwd(row: Mapping[str, Any], fallback: str) -> str:
    """``spawnedCwd ?? spawnedWorkspaceDir ?? fallback`` (the bridge's working directory)."""
    return _text(row.get("spawnedCwd")) or _text(row.get("spawnedWorkspaceDir")) or fallback


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
