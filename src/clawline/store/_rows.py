"""Mapping between :class:`SessionEntry` and the ``sessions`` table, shared by the backends."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, MemberDescriptorType
from typing import Any

from clawline import keys
from clawline.sessions.entry import SessionEntry
from clawline.store.base import decode_path, encode_path
from clawline.types import JSON

__all__ = ["COLUMNS", "SELECT_COLUMNS", "entry_from_row", "entry_to_params", "key_kind"]

COLUMNS: tuple[str, ...] = (
    "key",
    "agent_id",
    "key_kind",
    "session_id",
    "label",
    "display_name",
    "status",
    "spawned_by",
    "parent_session_key",
    "spawn_depth",
    "subagent_role",
    "subagent_control_scope",
    "spawned_workspace_dir",
    "spawned_cwd",
    "root_session_key",
    "trace_id",
    "lineage_path",
    "started_at",
    "ended_at",
    "created_at",
    "updated_at",
    "plugin_extensions",
    "extra",
)

SELECT_COLUMNS = ", ".join(COLUMNS)
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def key_kind(key: str) -> str:
    """A coarse, immutable classification of a key, stored for cheap filtering."""
    if key in ("global", "unknown"):
        return key
    if keys.is_cron_run_key(key):
        return "cron_run"
    if keys.is_subagent_key(key):
        return "subagent"
    if keys.is_acp_key(key):
        return "acp"
    if keys.is_cron_key(key):
        return "cron"
    return "other"


def _dump(value: Mapping[str, Any]) -> str | None:
    if not value:
        return None
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def entry_to_params(entry: SessionEntry, *, json_as_text: bool = True) -> tuple[Any, ...]:
    """Column values in :data:`COLUMNS` order."""
    extensions: Any = {k: dict(v) for k, v in entry.plugin_extensions.items()}
    extra: Any = dict(entry.extra)
    if json_as_text:
        extensions, extra = _dump(extensions), _dump(extra)
    else:
        extensions, extra = extensions or None, extra or None
    return (
        entry.key,
        entry.agent_id,
        key_kind(entry.key),
        entry.session_id,
        entry.label,
        entry.display_name,
        entry.status,
        entry.spawned_by,
        entry.parent_session_key,
        entry.spawn_depth,
        entry.subagent_role,
        entry.subagent_control_scope,
        entry.spawned_workspace_dir,
        entry.spawned_cwd,
        entry.root_session_key,
        entry.trace_id,
        encode_path(entry.lineage_path),
        entry.started_at,
        entry.ended_at,
        entry.created_at,
        entry.updated_at,
        extensions,
        extra,
    )


_decode_json = json.JSONDecoder().decode


def _load(value: Any) -> Mapping[str, JSON]:
    if value is None:
        return _EMPTY
    if isinstance(value, str):
        loaded: Mapping[str, JSON] = _decode_json(value)
        return loaded
    return value  # type: ignore[no-any-return]


def _entry_from_row_slow(row: Sequence[Any]) -> SessionEntry:
    return SessionEntry(
        key=row[0],
        session_id=row[3],
        label=row[4],
        display_name=row[5],
        status=row[6],
        spawned_by=row[7],
        parent_session_key=row[8],
        spawn_depth=row[9],
        subagent_role=row[10],
        subagent_control_scope=row[11],
        spawned_workspace_dir=row[12],
        spawned_cwd=row[13],
        root_session_key=row[14],
        trace_id=row[15],
        lineage_path=decode_path(row[16]),
        started_at=row[17],
        ended_at=row[18],
        created_at=row[19],
        updated_at=row[20],
        plugin_extensions=_load(row[21]),  # type: ignore[arg-type]
        extra=_load(row[22]),
    )


# Reading rows is the hot path of listing and tree reads, and the generated __init__ of a frozen
# dataclass costs about 4.5 us for SessionEntry's 21 fields (object.__setattr__ per field), about
# what SQLite spends fetching the row. SessionEntry's __init__ only assigns its fields, so the
# fast path assigns them through the slot descriptors directly: same object, half the time. It
# is used only while that holds (slots, no __post_init__, every field a column of the same name).
_Setter = Callable[[SessionEntry, Any], None]
_DECODED = ("lineage_path", "plugin_extensions", "extra")


def _slot_setters() -> tuple[tuple[tuple[_Setter, int], ...], tuple[_Setter, ...]] | None:
    names = [field.name for field in dataclasses.fields(SessionEntry)]
    slots = [SessionEntry.__dict__.get(name) for name in names]
    descriptors = [slot for slot in slots if isinstance(slot, MemberDescriptorType)]
    if len(descriptors) != len(names) or "__post_init__" in vars(SessionEntry):
        return None
    if set(names) - set(COLUMNS):
        return None
    setters = {name: slot.__set__ for name, slot in zip(names, descriptors, strict=True)}
    plain = tuple((setters[name], COLUMNS.index(name)) for name in names if name not in _DECODED)
    return plain, tuple(setters[name] for name in _DECODED)


_FAST = _slot_setters()
_PATH, _EXTENSIONS, _EXTRA = (COLUMNS.index(name) for name in _DECODED)


def entry_from_row(row: Sequence[Any]) -> SessionEntry:
    """Build an entry from a row selected with :data:`SELECT_COLUMNS`."""
    if _FAST is None:
        return _entry_from_row_slow(row)
    plain, (set_path, set_extensions, set_extra) = _FAST
    entry: SessionEntry = object.__new__(SessionEntry)
    for setter, column in plain:
        setter(entry, row[column])
    set_path(entry, decode_path(row[_PATH]))
    set_extensions(entry, _load(row[_EXTENSIONS]))
    set_extra(entry, _load(row[_EXTRA]))
    return entry
