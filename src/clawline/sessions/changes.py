"""Validating a set of changes to a session entry (pure: no store access).

A change set is a mapping from a field's JSON name to its new value; ``None`` clears a field and
an absent name leaves it unchanged. :func:`apply_changes` checks every value and every rule that
needs only the current entry, and returns the entry as it would be. Rules that need other rows
(label uniqueness, the parent's path, cycles) are the catalog's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from clawline import keys
from clawline.errors import InvalidField, LineageCycle, LineageFieldNotSupported, LineageImmutable
from clawline.records.session import CORE_FIELDS, LINEAGE_FIELDS, SessionEntry
from clawline.sessions.labels import normalize_label
from clawline.types import JSON

STATUSES: tuple[str, ...] = ("running", "done", "failed", "killed", "timeout")
MAX_DISPLAY_NAME = 1024
MAX_STORED_INT = 2**63 - 1
"""Integer columns are signed 64-bit in every backend."""

_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAWN_ONLY = frozenset(LINEAGE_FIELDS) - {"parentSessionKey"}
_DERIVED = frozenset({"key", "agentId", "rootSessionKey", "createdAt", "updatedAt", "lineage"})
_ATTRS = {
    "spawnedBy": "spawned_by",
    "parentSessionKey": "parent_session_key",
    "spawnDepth": "spawn_depth",
    "subagentRole": "subagent_role",
    "subagentControlScope": "subagent_control_scope",
    "spawnedWorkspaceDir": "spawned_workspace_dir",
    "spawnedCwd": "spawned_cwd",
}


@dataclass(frozen=True, slots=True)
class ChangeResult:
    """The entry after the changes, and whether its lineage parent was set by them."""

    entry: SessionEntry
    new_parent: str | None
    label_changed: bool


def new_trace_id() -> str:
    import secrets

    return secrets.token_hex(16)


def validate_trace_id(value: object) -> str:
    if not isinstance(value, str) or not _TRACE_ID.fullmatch(value) or value == "0" * 32:
        raise InvalidField("invalid traceId (use 32 lower-case hex digits, not all zero)")
    return value


def _no_nul(name: str, value: str) -> str:
    if "\x00" in value:
        raise InvalidField(f"invalid {name}: NUL characters are not allowed")
    return value


def _lineage_value(name: str, value: object, canonical: Callable[[object], str]) -> object:
    """Check one lineage value; OpenClaw's exact texts where it has them."""
    if name in ("spawnedBy", "parentSessionKey"):
        if not isinstance(value, str):
            raise InvalidField(f"invalid {name}: must be a string")
        if not value.strip():
            raise InvalidField(f"invalid {name}: empty")
        return canonical(value)
    if name == "spawnDepth":
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= MAX_STORED_INT
        ):
            raise InvalidField("invalid spawnDepth (use an integer >= 0)")
        return value
    if name == "subagentRole":
        if value not in ("orchestrator", "leaf"):
            raise InvalidField('invalid subagentRole (use "orchestrator" or "leaf")')
        return value
    if name == "subagentControlScope":
        if value not in ("children", "none"):
            raise InvalidField('invalid subagentControlScope (use "children" or "none")')
        return value
    if not isinstance(value, str):
        raise InvalidField(f"invalid {name}: must be a string")
    if not value.strip():
        raise InvalidField(f"invalid {name}: empty")
    return _no_nul(name, value)


def _timestamp(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STORED_INT:
        raise InvalidField(f"invalid {name} (use epoch milliseconds >= 0)")
    return value


MAX_JSON_DEPTH = 64


def _json_value(name: str, value: object) -> JSON:
    """Accept only plain JSON (string keys, finite numbers, no NUL) nested at most
    :data:`MAX_JSON_DEPTH` deep: exactly what every backend stores and gives back unchanged."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise InvalidField(f"invalid {name}: nested deeper than {MAX_JSON_DEPTH} levels")
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidField(f"invalid {name}: numbers must be finite")
        elif isinstance(item, str):
            if "\x00" in item:
                raise InvalidField(f"invalid {name}: NUL characters are not allowed")
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise InvalidField(f"invalid {name}: object keys must be strings")
                if "\x00" in key:
                    raise InvalidField(f"invalid {name}: NUL characters are not allowed")
                stack.append((child, depth + 1))
        else:
            raise InvalidField(f"invalid {name}: {type(item).__name__} is not JSON")
    return cast(JSON, value)


def check_event(type: object, data: object) -> None:
    """Check a transcript event before it is appended."""
    if not isinstance(type, str) or not type.strip():
        raise InvalidField("invalid event type (use a non-empty string)")
    _no_nul("event type", type)
    if not isinstance(data, Mapping):
        raise InvalidField("invalid event data: must be an object")
    _json_value("event data", data)


def _merge_extensions(
    current: Mapping[str, Mapping[str, JSON]], value: object
) -> dict[str, dict[str, JSON]]:
    """Merge ``{pluginId: {namespace: value|null} | null}`` into the current extensions."""
    if not isinstance(value, Mapping):
        raise InvalidField("invalid pluginExtensions: must be an object of plugin ids")
    merged = {plugin: dict(spaces) for plugin, spaces in current.items()}
    for plugin, spaces in value.items():
        if not isinstance(plugin, str) or not plugin.strip() or "\x00" in plugin:
            raise InvalidField("invalid pluginExtensions: plugin ids must be non-empty strings")
        if spaces is None:
            merged.pop(plugin, None)
            continue
        if not isinstance(spaces, Mapping):
            raise InvalidField(f"invalid pluginExtensions.{plugin}: must be an object")
        target = merged.setdefault(plugin, {})
        for namespace, data in spaces.items():
            if not isinstance(namespace, str) or not namespace.strip() or "\x00" in namespace:
                raise InvalidField(
                    f"invalid pluginExtensions.{plugin}: namespaces must be non-empty strings"
                )
            if data is None:
                target.pop(namespace, None)
            else:
                target[namespace] = _json_value(f"pluginExtensions.{plugin}.{namespace}", data)
        if not target:
            del merged[plugin]
    return merged


def apply_changes(
    current: SessionEntry | None,
    key: str,
    changes: Mapping[str, object],
    *,
    now: int,
    touch: bool = True,
    canonical: Callable[[object], str] = keys.canonicalize,
) -> ChangeResult:
    """Validate ``changes`` against ``current`` (``None`` when the session is new).

    Raises an :class:`~clawline.errors.InvalidInput` subclass on the first broken rule. The
    returned entry's lineage path and root are still the old ones (or the session alone when
    new); the catalog fills them in once it has looked up the parent.
    """
    if current is None:
        entry = SessionEntry(
            key=key,
            session_id=keys.new_session_id(),
            created_at=now,
            updated_at=now,
            root_session_key=key,
            trace_id=new_trace_id(),
            lineage_path=(key,),
        )
    else:
        entry = current
    updates: dict[str, Any] = {}
    extra = dict(entry.extra)
    extra_changed = False
    label_changed = False
    parent_before = entry.lineage_parent

    for name, value in changes.items():
        if name in _DERIVED:
            raise InvalidField(f"{name} is maintained by clawline and cannot be set")
        if name in LINEAGE_FIELDS:
            if name in _SPAWN_ONLY and not keys.is_lineage_capable(key):
                raise LineageFieldNotSupported(
                    f"{name} is only supported for subagent:* or acp:* sessions"
                )
            existing = getattr(entry, _ATTRS[name])
            if value is None:
                if existing is not None:
                    raise LineageImmutable(f"{name} cannot be cleared once set")
                continue
            checked = _lineage_value(name, value, canonical)
            if existing is not None and existing != checked:
                raise LineageImmutable(f"{name} cannot be changed once set")
            updates[_ATTRS[name]] = checked
        elif name == "label":
            label = None if value is None else normalize_label(value)
            label_changed = label != entry.label
            updates["label"] = label
        elif name == "displayName":
            if value is not None and (not isinstance(value, str) or len(value) > MAX_DISPLAY_NAME):
                raise InvalidField(
                    f"invalid displayName (use a string of at most {MAX_DISPLAY_NAME} characters)"
                )
            updates["display_name"] = value if value is None else _no_nul(name, value)
        elif name == "status":
            if value is not None and value not in STATUSES:
                raise InvalidField(
                    'invalid status (use "running", "done", "failed", "killed" or "timeout")'
                )
            updates["status"] = value
        elif name in ("startedAt", "endedAt"):
            updates["started_at" if name == "startedAt" else "ended_at"] = _timestamp(name, value)
        elif name == "sessionId":
            if current is not None and value != current.session_id:
                raise InvalidField("sessionId cannot be patched; reset the session instead")
            if value is not None:
                if not isinstance(value, str):
                    raise InvalidField("invalid sessionId: must be a string")
                updates["session_id"] = keys.validate_session_id(value)
        elif name == "traceId":
            if current is not None and value != current.trace_id:
                raise InvalidField("traceId is fixed when a session is created")
            if value is not None:
                updates["trace_id"] = validate_trace_id(value)
        elif name == "pluginExtensions":
            updates["plugin_extensions"] = _merge_extensions(entry.plugin_extensions, value)
        else:
            if name in CORE_FIELDS or not name or not isinstance(name, str) or "\x00" in name:
                raise InvalidField(f"invalid field name: {name!r}")
            if value is None:
                extra_changed = extra.pop(name, None) is not None or extra_changed
            else:
                extra[name] = _json_value(name, value)
                extra_changed = True

    if extra_changed:
        updates["extra"] = extra
    if touch or current is None:
        updates["updated_at"] = max(now, entry.updated_at)
    result = replace(entry, **updates)

    parent_after = result.lineage_parent
    new_parent = None
    if parent_after != parent_before:
        if parent_before is not None:
            raise LineageImmutable(f"lineage parent cannot be changed once set ({parent_before})")
        if parent_after == key:
            raise LineageCycle(f"lineage cycle: {key} cannot be its own parent")
        new_parent = parent_after
    return ChangeResult(entry=result, new_parent=new_parent, label_changed=label_changed)
