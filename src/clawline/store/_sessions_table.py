"""Mapping between :class:`SessionEntry` and the ``sessions`` table, shared by the backends."""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, MemberDescriptorType
from typing import Any

import orjson

from clawline import keys
from clawline.records.session import SessionEntry
from clawline.store.base import decode_path, encode_path
from clawline.types import JSON

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
"""Every column written, in :func:`entry_to_params` order."""

ENTRY_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c not in ("agent_id", "key_kind"))
"""The columns an entry is read from: one per field, same name. ``agent_id`` and ``key_kind``
are derived from the key and stored only to filter on; not reading them saves converting two
values per row (~3% of a page of 100 on SQLite)."""

INSERT_COLUMNS = ", ".join(COLUMNS)
SELECT_COLUMNS = ", ".join((*ENTRY_COLUMNS, "revision"))
"""What reads select: the entry's columns, then the row's ``revision`` (see
:class:`EntryCache`)."""
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


_JSON_DECODER = json.JSONDecoder()


def _load(value: Any) -> Mapping[str, JSON]:
    if value is None:
        return _EMPTY
    if isinstance(value, str):
        # orjson reads what _dump wrote ~3x faster; what it refuses (NaN, integers beyond 64
        # bits, lone surrogates, …) is read by the json module, exactly as before.
        try:
            fast: Mapping[str, JSON] = orjson.loads(value)
        except orjson.JSONDecodeError:
            pass
        else:
            return fast
        # raw_decode skips decode()'s two whitespace regex matches (a third of the cost for a
        # small object); the text was written compactly by _dump, and anything else (trailing
        # text included) goes through decode() so it is refused exactly as before.
        loaded: Mapping[str, JSON]
        try:
            loaded, end = _JSON_DECODER.raw_decode(value)
        except json.JSONDecodeError:
            end = -1
        if end != len(value):
            loaded = _JSON_DECODER.decode(value)
        return loaded
    return value  # type: ignore[no-any-return]


def _entry_from_row_slow(row: Sequence[Any]) -> SessionEntry:
    fields: dict[str, Any] = dict(zip(ENTRY_COLUMNS, row[: len(ENTRY_COLUMNS)], strict=True))
    fields["lineage_path"] = decode_path(fields["lineage_path"])
    fields["plugin_extensions"] = _load(fields["plugin_extensions"])
    fields["extra"] = _load(fields["extra"])
    return SessionEntry(**fields)


# Reading rows is the hot path of listing and tree reads. The generated __init__ of a frozen
# dataclass assigns each of SessionEntry's 21 fields through object.__setattr__, which costs
# about as much as SQLite spends fetching the row. SessionEntry's __init__ only assigns its
# fields, so the fast reader assigns them through the slot descriptors directly. It is compiled
# (as dataclasses compiles __init__) into straight-line code, one descriptor call per field,
# which is about a tenth faster than a loop over (setter, column) pairs. The result is the same
# object __init__ would build; the fast reader is used only while that holds (slots, no
# __post_init__, every field a column of the same name), and the plain constructor otherwise.
_DECODERS = {"lineage_path": "decode_path", "plugin_extensions": "load", "extra": "load"}


def _compile_fast_reader() -> Callable[[Sequence[Any]], SessionEntry] | None:
    names = [field.name for field in dataclasses.fields(SessionEntry)]
    slots = [SessionEntry.__dict__.get(name) for name in names]
    descriptors = [slot for slot in slots if isinstance(slot, MemberDescriptorType)]
    if len(descriptors) != len(names) or "__post_init__" in vars(SessionEntry):
        return None
    if set(names) != set(ENTRY_COLUMNS):
        return None
    scope: dict[str, Any] = {
        "new": object.__new__,
        "SessionEntry": SessionEntry,
        "decode_path": decode_path,
        "load": _load,
    }
    lines = ["def entry_from_row(row):", "    entry = new(SessionEntry)"]
    for name, descriptor in zip(names, descriptors, strict=True):
        scope[f"set_{name}"] = descriptor.__set__
        value = f"row[{ENTRY_COLUMNS.index(name)}]"
        if name in _DECODERS:
            value = f"{_DECODERS[name]}({value})"
        lines.append(f"    set_{name}(entry, {value})")
    lines.append("    return entry")
    exec("\n".join(lines), scope)  # the source is built just above, from field names only
    reader: Callable[[Sequence[Any]], SessionEntry] = scope["entry_from_row"]
    return reader


entry_from_row: Callable[[Sequence[Any]], SessionEntry] = (
    _compile_fast_reader() or _entry_from_row_slow
)
"""Build an entry from a row selected with :data:`SELECT_COLUMNS`."""


ENTRY_CACHE_ROWS = 120_000
"""Entries an :class:`EntryCache` keeps: enough for a whole listing of 100,000 sessions, so a
second walk (``clawline acp``'s ``session/list``) reads only each page's revisions and
decodes no row that did not change (and the listing's row caches, keyed by entry identity,
hit). An entry is ~0.6 KB: the cache stays below ~70 MB."""


def new_revision() -> int:
    """The revision a transaction gives every session row it writes: 62 random bits.

    A revision only has to name a row's content exactly (``(key, revision)``, see
    :class:`EntryCache`); nothing orders by it. Drawn at random, it needs no shared counter, so
    a transaction spends no statement (and SQLite no write of one hot page, PostgreSQL no
    round trip to a sequence) on it; two writes of one key draw the same revision with
    probability 2⁻⁶², far below the disk's own undetected error rate. Rows written by earlier
    versions, which counted from 1, keep their small revisions."""
    return secrets.randbits(62) + 1


class EntryCache:
    """Hands back the same :class:`SessionEntry` for a row whose ``revision`` has not changed
    since it was last read.

    Every write to a row gives it a new revision (:func:`new_revision`; so a row deleted and
    created again does not repeat one), which makes ``(key, revision)`` an exact name for a
    row's content. Entries are immutable, so sharing one is safe; callers above (listing rows) may
    cache per entry identity. At most ``capacity`` rows are kept; past that the cache starts
    over. The cache also keeps a running hit rate, so a store can tell when reading a page's
    revisions first (and only the changed rows in full) is worth a second query.
    """

    def __init__(self, capacity: int = ENTRY_CACHE_ROWS) -> None:
        self._capacity = capacity
        self._rows: dict[str, tuple[int, SessionEntry]] = {}
        self._hit_rate = 0.0

    @property
    def warm(self) -> bool:
        """Whether recent reads mostly found their rows here."""
        return self._hit_rate >= 0.5

    def _observe(self, hits: int, total: int) -> None:
        if total:
            self._hit_rate = 0.5 * self._hit_rate + 0.5 * (hits / total)

    def peek(self, key: str) -> tuple[int, SessionEntry] | None:
        """The revision and entry last known of ``key`` (not proof that the row still is)."""
        return self._rows.get(key)

    def put(self, key: str, revision: int, entry: SessionEntry) -> None:
        """Know ``entry`` as ``key``'s row at ``revision`` (a write that committed)."""
        self._store(key, revision, entry)

    def forget(self, key: str) -> None:
        self._rows.pop(key, None)

    def _store(self, key: str, revision: int, entry: SessionEntry) -> None:
        if len(self._rows) >= self._capacity:
            self._rows.clear()
        self._rows[key] = (revision, entry)

    def __call__(self, row: Sequence[Any]) -> SessionEntry:
        """The entry of one row read with :data:`SELECT_COLUMNS`."""
        key, revision = row[0], row[-1]
        hit = self._rows.get(key)
        if hit is not None and hit[0] == revision:
            return hit[1]
        entry = entry_from_row(row)
        self._store(key, revision, entry)
        return entry

    def entries(self, rows: Sequence[Sequence[Any]]) -> list[SessionEntry]:
        """The entries of many rows, counting how many were already known."""
        hits = 0
        out = []
        for row in rows:
            hit = self._rows.get(row[0])
            if hit is not None and hit[0] == row[-1]:
                hits += 1
                out.append(hit[1])
            else:
                out.append(self(row))
        self._observe(hits, len(rows))
        return out

    def known(self, ids: Sequence[Sequence[Any]]) -> tuple[dict[str, SessionEntry], list[str]]:
        """Split ``(key, revision)`` pairs into the entries known at that revision and the keys
        to read in full."""
        found: dict[str, SessionEntry] = {}
        missing: list[str] = []
        for key, revision in ids:
            hit = self._rows.get(key)
            if hit is not None and hit[0] == revision:
                found[key] = hit[1]
            else:
                missing.append(key)
        self._observe(len(found), len(ids))
        return found, missing
