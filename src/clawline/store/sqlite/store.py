"""The SQLite backend (the default): one file in WAL mode."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from clawline.errors import LabelInUse, StoreError, StoreUnavailable
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent, TranscriptInfo
from clawline.store._changed_columns import update_statement
from clawline.store._extensions_sql import lookup_sessions, replace_session_rows
from clawline.store._sessions_table import (
    COLUMNS,
    ENTRY_COLUMNS,
    INSERT_COLUMNS,
    SELECT_COLUMNS,
    EntryCache,
    entry_from_row,
    entry_to_params,
    new_revision,
)
from clawline.store._sql import (
    ORDER_BY,
    count_statement,
    keyset_predicate,
    subtree_bounds,
    where_clause,
)
from clawline.store.base import (
    ExtensionIndexRow,
    Page,
    SessionQuery,
    Store,
    StoreTransaction,
    decode_path,
    encode_path,
)
from clawline.store.cursor import Position
from clawline.store.instance_lock import InstanceLock, PrivateStoreLock
from clawline.store.sqlite.collab import SQLITE, attach_reads, attach_writes
from clawline.store.sqlite.instance_lock import SQLiteInstanceLock
from clawline.store.sqlite.migrations import migrate
from clawline.types import JSONObject

_CHILD_SCAN_THRESHOLD = 2000

_INSERT = (
    f"INSERT INTO sessions ({INSERT_COLUMNS}, revision)"
    f" VALUES ({', '.join('?' for _ in COLUMNS)}, ?)"
)
_UPDATE = (
    "UPDATE sessions SET "
    + ", ".join(f"{column} = ?" for column in COLUMNS[1:])
    + ", revision = ? WHERE key = ?"
)
_FIELD_COLUMNS = tuple(
    (index, name) for index, name in enumerate(COLUMNS) if name in ENTRY_COLUMNS and name != "key"
)
"""Position and name of the columns an update may change: an entry's fields but its key (the
key, and with it ``agent_id`` and ``key_kind``, is the row's identity)."""
_SELECT = f"SELECT {SELECT_COLUMNS} FROM sessions"
_NEXT_SEQ = "UPDATE transcripts SET last_seq = last_seq + 1 WHERE session_id = ? RETURNING last_seq"
_TOUCH_KNOWN = "UPDATE sessions SET updated_at = ?, revision = ? WHERE key = ? AND revision = ?"
"""Touch a row known by its revision: it matches only if the row is still what is known."""
_OPEN_TRANSCRIPT = (
    "INSERT INTO transcripts (session_id, session_key, created_at) VALUES (?, ?, ?)"
    " ON CONFLICT (session_id) DO NOTHING"
)
_OPEN_WITH_FIRST_SEQ = (
    "INSERT INTO transcripts (session_id, session_key, created_at, last_seq) VALUES (?, ?, ?, 1)"
    " ON CONFLICT (session_id) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq"
)
"""Open a transcript with its first event's seq, or number the next event of one that is
open already: one statement where opening and numbering would be two."""

_CACHED_STATEMENTS = 1024
"""Prepared statements the connection keeps (sqlite3's default is 128). The store runs a few
hundred distinct statements; one pushed out of the cache is parsed and planned again on its
next use, which for the wide session rows costs more than running it."""

_CHECKPOINT_COMMITS = 64
"""Once checkpoints are deferred (:meth:`SQLiteStore.defer_checkpoints`), the commits after which
one is due. SQLite's own automatic checkpoint runs at 1,000 WAL pages; the store's widest
transactions (a sub-agent's spawn or end) write ~30 pages, so 64 of them stay near that."""

_MMAP_SIZE = 1 << 30
"""Bytes of the file SQLite reads through a memory map rather than read() calls into its page
cache: listing a page of 100 at 100,000 sessions spends ~5% less in SQLite with a warm OS
cache. The map shares the OS page cache (no extra memory); writes still go through write()."""


def _decode(text: str) -> JSONObject:
    """Event data; orjson for speed (turns read thousands of events), the standard parser for
    what it refuses (integers beyond 64 bits)."""
    try:
        data: JSONObject = orjson.loads(text)
    except orjson.JSONDecodeError:
        data = json.loads(text)
    return data


def _is_label_conflict(error: sqlite3.IntegrityError) -> bool:
    # SQLite names the constraint a write broke only in the message ("UNIQUE constraint failed:
    # sessions.agent_id, sessions.label"); unlike PostgreSQL's diag.constraint_name there is no
    # field for it. The error code narrows it to a unique violation first.
    return (
        error.sqlite_errorcode == sqlite3.SQLITE_CONSTRAINT_UNIQUE
        and "sessions.agent_id, sessions.label" in str(error)
    )


class _Transaction(StoreTransaction):
    def __init__(self, db: sqlite3.Connection, instance_id: str | None, known: EntryCache) -> None:
        self._db = db
        self._known = known
        """The store's entries by revision: :meth:`touch` writes against one without reading
        the row, the revision in its ``WHERE`` proving the entry is the row."""
        self._seen: dict[str, tuple[int, SessionEntry] | None] = {}
        """What this transaction learnt of rows, for the store's entries once it commits:
        ``(revision, entry)``, or ``None`` to forget the row."""
        self._revision: int | None = None
        self._opening: dict[str, tuple[str, int]] = {}
        """Transcripts opened in this transaction and not written yet: session id → (key,
        created at)."""
        self._entries: dict[str, SessionEntry | None] = {}
        """Session rows this transaction has read or written: the transaction holds the
        database's write lock and every write to ``sessions`` goes through the methods below,
        so a second read of a row in it needs no statement."""
        attach_writes(self, db, instance_id)

    def _next_revision(self) -> int:
        """The revision every row this transaction writes gets (drawn once, on first write)."""
        if self._revision is None:
            self._revision = new_revision()
        return self._revision

    def get(self, key: str) -> SessionEntry | None:
        if key in self._entries:
            return self._entries[key]
        row = self._db.execute(f"{_SELECT} WHERE key = ?", (key,)).fetchone()
        entry = self._entries[key] = entry_from_row(row) if row else None
        if entry is not None:
            self._seen[key] = (row[-1], entry)
        return entry

    def touch(self, key: str, now: int) -> tuple[SessionEntry, SessionEntry] | None:
        known = None if key in self._entries else self._known.peek(key)
        if known is not None and now > known[1].updated_at:
            revision, before = known
            written = self._next_revision()
            cursor = self._db.execute(_TOUCH_KNOWN, (now, written, key, revision))
            if cursor.rowcount == 1:
                after = replace(before, updated_at=now)
                self._entries[key] = after
                self._seen[key] = (written, after)
                return before, after
        return super().touch(key, now)

    def committed(self) -> None:
        """Hand what this transaction learnt of rows to the store's entries (after COMMIT)."""
        for key, seen in self._seen.items():
            if seen is None:
                self._known.forget(key)
            else:
                self._known.put(key, *seen)

    def key_for_label(self, agent_id: str, label: str) -> str | None:
        row = self._db.execute(
            "SELECT key FROM sessions WHERE agent_id = ? AND label = ?", (agent_id, label)
        ).fetchone()
        return row[0] if row else None

    def trace_of_tree(self, root_key: str) -> str | None:
        row = self._db.execute(
            "SELECT trace_id FROM sessions WHERE root_session_key = ? LIMIT 1", (root_key,)
        ).fetchone()
        return row[0] if row else None

    def insert(self, entry: SessionEntry) -> None:
        try:
            self._db.execute(_INSERT, (*entry_to_params(entry), self._next_revision()))
        except sqlite3.IntegrityError as error:
            if _is_label_conflict(error):
                raise LabelInUse(f"label already in use: {entry.label}") from None
            raise StoreError(f"could not insert {entry.key}: {error}") from error
        self._entries[entry.key] = entry
        self._seen[entry.key] = (self._next_revision(), entry)

    def update(self, entry: SessionEntry) -> None:
        params = entry_to_params(entry)
        known = self._entries.get(entry.key)
        if known is None:
            statement, values = _UPDATE, params[1:]
        else:
            # Only the columns that changed (see clawline.store._changed_columns).
            changed = [
                index
                for index, name in _FIELD_COLUMNS
                if getattr(known, name) != getattr(entry, name)
            ]
            if not changed:
                return
            columns = (*(COLUMNS[index] for index in changed), "revision")
            statement = update_statement("sessions", columns, "key")
            values = tuple(params[index] for index in changed)
        try:
            self._db.execute(statement, (*values, self._next_revision(), params[0]))
        except sqlite3.IntegrityError as error:
            if _is_label_conflict(error):
                raise LabelInUse(f"label already in use: {entry.label}") from None
            raise StoreError(f"could not update {entry.key}: {error}") from error
        self._entries[entry.key] = entry
        self._seen[entry.key] = (self._next_revision(), entry)

    def delete(self, key: str) -> bool:
        self._entries[key] = None
        self._seen[key] = None
        return self._db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

    def graft(self, old_path: tuple[str, ...], new_path: tuple[str, ...], trace_id: str) -> int:
        self._entries.clear()  # paths, roots and trace ids below old_path change
        self._seen = dict.fromkeys(self._seen)  # and rows written before may have moved
        old, new = encode_path(old_path), encode_path(new_path)
        low, high = subtree_bounds(old)
        cursor = self._db.execute(
            "UPDATE sessions SET lineage_path = ? || substr(lineage_path, ?),"
            " root_session_key = ?, trace_id = ?, revision = ?"
            " WHERE lineage_path >= ? AND lineage_path < ?",
            (new, len(old) + 1, new_path[0], trace_id, self._next_revision(), low, high),
        )
        return cursor.rowcount

    def subtree_paths(self, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        low, high = subtree_bounds(encode_path(path))
        rows = self._db.execute(
            "SELECT lineage_path FROM sessions WHERE lineage_path >= ? AND lineage_path < ?",
            (low, high),
        ).fetchall()
        return [decode_path(row[0]) for row in rows]

    def lock_lineage(self) -> None:
        """SQLite write transactions are already serialised (BEGIN IMMEDIATE)."""

    def open_transcript(self, session_id: str, session_key: str, ts: int) -> None:
        # Written with the transcript's first event, in the same statement that numbers it
        # (see append_event), or when the transaction ends without one (flush_opened).
        self._opening[session_id] = (session_key, ts)

    def flush_opened(self) -> None:
        """Write the transcripts opened in this transaction that no event was appended to."""
        for session_id, (session_key, ts) in self._opening.items():
            self._db.execute(_OPEN_TRANSCRIPT, (session_id, session_key, ts))
        self._opening.clear()

    def archive_transcript(self, session_id: str, reason: str, ts: int) -> bool:
        self.flush_opened()
        cursor = self._db.execute(
            "UPDATE transcripts SET archived_at = ?, archive_reason = ?"
            " WHERE session_id = ? AND archived_at IS NULL",
            (ts, reason, session_id),
        )
        return cursor.rowcount > 0

    def append_event(
        self, session_id: str, ts: int, type: str, data: JSONObject, *, session_key: str = ""
    ) -> TranscriptEvent:
        opening = self._opening.pop(session_id, None)
        if opening is not None:
            row = self._db.execute(_OPEN_WITH_FIRST_SEQ, (session_id, *opening)).fetchone()
        else:
            row = self._db.execute(_NEXT_SEQ, (session_id,)).fetchone()
        if row is None and session_key:
            row = self._db.execute(_OPEN_WITH_FIRST_SEQ, (session_id, session_key, ts)).fetchone()
        if row is None:
            raise StoreError(f"no transcript for session id {session_id}")
        seq = int(row[0])
        self._db.execute(
            "INSERT INTO transcript_events (session_id, seq, ts, type, data)"
            " VALUES (?, ?, ?, ?, ?)",
            (session_id, seq, ts, type, json.dumps(data, separators=(",", ":"))),
        )
        return TranscriptEvent(session_id=session_id, seq=seq, ts=ts, type=type, data=data)

    def set_extension_index(self, session_key: str, rows: Sequence[ExtensionIndexRow]) -> None:
        replace_session_rows(self._execute, SQLITE, session_key, rows)

    def _execute(self, statement: str, params: Sequence[Any]) -> list[Any]:
        return self._db.execute(statement, params).fetchall()


class SQLiteStore(Store):
    """Sessions and transcripts in one SQLite file (WAL, ``synchronous=NORMAL``).

    One connection serves the process; a lock serialises its use across threads. Other
    processes may open the same file: WAL lets them read while one writes.
    """

    backend = "sqlite"

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 5000) -> None:
        self.location = str(path)
        if self.location != ":memory:":
            Path(self.location).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(
                self.location,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=_CACHED_STATEMENTS,
            )
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {self.location}: {error}") from error
        self._lock = threading.RLock()
        self._in_transaction = False
        self._checkpoints_deferred = False
        self._commits = 0
        """Commits since the last deferred checkpoint."""
        self._secret: bytes | None = None
        self._entries = EntryCache()
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        self._enable_wal(busy_timeout_ms)
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute(f"PRAGMA mmap_size = {_MMAP_SIZE}")
        migrate(self._db)
        attach_reads(self, self._fetch)

    def _enable_wal(self, timeout_ms: int) -> None:
        """Switch to WAL. SQLite answers "database is locked" at once, without waiting, while
        another connection is opening the same new file, so wait here instead."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                busy = error.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() > deadline:
                    self._db.close()
                    raise StoreUnavailable(f"cannot open {self.location}: {error}") from error
                time.sleep(0.005)

    # --- plumbing ------------------------------------------------------------------------

    @property
    def max_concurrency(self) -> int:
        """1: one connection, used by one thread at a time (and SQLite has one writer)."""
        return 1

    def claim_now(self) -> bool:
        return self._lock.acquire(blocking=False)

    def release_claim(self) -> None:
        self._lock.release()

    def defer_checkpoints(self) -> None:
        if self.location == ":memory:":
            return
        with self._lock:
            self._db.execute("PRAGMA wal_autocheckpoint = 0")
            self._checkpoints_deferred = True

    def checkpoint_due(self) -> bool:
        return self._checkpoints_deferred and self._commits >= _CHECKPOINT_COMMITS

    def checkpoint(self) -> None:
        # PASSIVE: copies what no reader still needs and never waits for one.
        with self._lock:
            self._commits = 0
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        with self._lock:
            if self._in_transaction:
                raise StoreError("transactions do not nest")
            self._in_transaction = True
            try:
                self._db.execute("BEGIN IMMEDIATE")
                tx = _Transaction(self._db, self.instance_id, self._entries)
                try:
                    yield tx
                    tx.flush_opened()
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                self._commits += 1
                tx.committed()
            finally:
                self._in_transaction = False
        tx.run_after_commit()

    def trace(self, callback: Callable[[str], None] | None) -> None:
        """Call ``callback`` with the text of every SQL statement the connection runs
        (``BEGIN IMMEDIATE`` and ``COMMIT`` included; statements run by a trigger come as
        ``-- TRIGGER …``); ``None`` stops. For measurements (``bench/agents.py``)."""
        with self._lock:
            self._db.set_trace_callback(callback)

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def instance_lock(self) -> InstanceLock:
        if self.location == ":memory:":
            return PrivateStoreLock()
        return SQLiteInstanceLock(Path(self.location).resolve())

    def secret(self) -> bytes:
        if self._secret is None:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(
                        "INSERT INTO clawline_meta (name, value) VALUES ('secret', ?)"
                        " ON CONFLICT (name) DO NOTHING",
                        (secrets.token_bytes(32),),
                    )
                    row = self._db.execute(
                        "SELECT value FROM clawline_meta WHERE name = 'secret'"
                    ).fetchone()
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
            self._secret = bytes(row[0])
        return self._secret

    # --- sessions ------------------------------------------------------------------------

    def get(self, key: str) -> SessionEntry | None:
        rows = self._fetch(f"{_SELECT} WHERE key = ?", (key,))
        return self._entries(rows[0]) if rows else None

    def get_many(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        found: dict[str, SessionEntry] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for row in self._fetch(f"{_SELECT} WHERE key IN ({marks})", chunk):
                entry = self._entries(row)
                found[entry.key] = entry
        return found

    def page(self, query: SessionQuery, after: Position | None, limit: int) -> Page:
        conditions, params = where_clause(query, "?")
        if after is not None:
            predicate, extra = keyset_predicate(after, "?")
            conditions.append(predicate)
            params.extend(extra)
        where = " AND ".join(conditions)
        if not self._entries.warm:
            rows = self._fetch(f"{_SELECT} WHERE {where} {ORDER_BY} LIMIT ?", [*params, limit + 1])
            entries = self._entries.entries(rows[:limit])
            following = Position.of(entries[-1]) if len(rows) > limit and entries else None
            return Page(entries=entries, next=following)
        # Most rows were read before: read the page's revisions, then only changed rows in full.
        ids = self._fetch(
            f"SELECT key, revision, updated_at FROM sessions WHERE {where} {ORDER_BY} LIMIT ?",
            [*params, limit + 1],
        )
        found, missing = self._entries.known([(key, rev) for key, rev, _ in ids[:limit]])
        if missing:
            found.update(self.get_many(missing))
        # A row deleted between the two reads is left out; one changed in between comes in its
        # newer state. The next page starts after the last row of the first read, either way.
        entries = [found[key] for key, _, _ in ids[:limit] if key in found]
        last = ids[limit - 1] if len(ids) > limit else None
        return Page(entries=entries, next=Position(last[2], last[0]) if last else None)

    def page_at_offset(self, query: SessionQuery, offset: int, limit: int) -> list[SessionEntry]:
        conditions, params = where_clause(query, "?")
        sql = f"{_SELECT} WHERE {' AND '.join(conditions)} {ORDER_BY} LIMIT ? OFFSET ?"
        return [self._entries(row) for row in self._fetch(sql, [*params, limit, offset])]

    def count(self, query: SessionQuery) -> int:
        sql, params = count_statement(query, "?")
        rows = self._fetch(sql, params)
        return int(rows[0][0])

    def by_label(self, label: str, agent_id: str | None = None) -> list[SessionEntry]:
        if agent_id is None:
            rows = self._fetch(f"{_SELECT} WHERE label = ? {ORDER_BY}", (label,))
        else:
            rows = self._fetch(f"{_SELECT} WHERE agent_id = ? AND label = ?", (agent_id, label))
        return [self._entries(row) for row in rows]

    def by_session_id(self, session_id: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE session_id = ? {ORDER_BY}", (session_id,))
        return [self._entries(row) for row in rows]

    def children(self, key: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE parent_key = ? {ORDER_BY}", (key,))
        return [self._entries(row) for row in rows]

    def descendants(self, path: tuple[str, ...]) -> list[SessionEntry]:
        low, high = subtree_bounds(encode_path(path))
        rows = self._fetch(
            f"{_SELECT} WHERE lineage_path >= ? AND lineage_path < ? ORDER BY lineage_path",
            (low, high),
        )
        return [self._entries(row) for row in rows]

    def tree(self, root_key: str) -> list[SessionEntry]:
        rows = self._fetch(
            f"{_SELECT} WHERE root_session_key = ? ORDER BY lineage_path", (root_key,)
        )
        return [self._entries(row) for row in rows]

    def child_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        unique = list(dict.fromkeys(keys))
        if len(unique) > _CHILD_SCAN_THRESHOLD:
            # For a large batch one pass over the parent index beats many IN lists.
            wanted = set(unique)
            rows = self._fetch(
                f"SELECT parent_key, key FROM sessions WHERE parent_key IS NOT NULL {ORDER_BY}"
            )
            for parent, key in rows:
                if parent in wanted:
                    found.setdefault(parent, []).append(key)
            return found
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._fetch(
                f"SELECT parent_key, key FROM sessions WHERE parent_key IN ({marks}) {ORDER_BY}",
                chunk,
            )
            for parent, key in rows:
                found.setdefault(parent, []).append(key)
        return found

    def sessions_by_extension(
        self, plugin_id: str, namespace: str, field: str, value: str
    ) -> list[str]:
        return lookup_sessions(self._fetch, SQLITE, plugin_id, namespace, field, value)

    # --- transcripts ---------------------------------------------------------------------

    def transcript_info(self, session_id: str) -> TranscriptInfo | None:
        rows = self._fetch(
            "SELECT session_id, session_key, created_at, last_seq, archived_at, archive_reason"
            " FROM transcripts WHERE session_id = ?",
            (session_id,),
        )
        return TranscriptInfo(*rows[0]) if rows else None

    def events(
        self, session_id: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[TranscriptEvent]:
        rows = self._fetch(
            "SELECT seq, ts, type, data FROM transcript_events"
            " WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after_seq, limit),
        )
        return [TranscriptEvent(session_id, r[0], r[1], r[2], _decode(r[3])) for r in rows]

    def tail(self, session_id: str, limit: int) -> list[TranscriptEvent]:
        rows = self._fetch(
            "SELECT seq, ts, type, data FROM transcript_events"
            " WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
            (session_id, limit),
        )
        return [
            TranscriptEvent(session_id, r[0], r[1], r[2], _decode(r[3])) for r in reversed(rows)
        ]

    def heads(self, session_ids: Sequence[str], max_seq: int) -> dict[str, list[TranscriptEvent]]:
        found: dict[str, list[TranscriptEvent]] = {}
        unique = list(dict.fromkeys(session_ids))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._fetch(
                "SELECT session_id, seq, ts, type, data FROM transcript_events"
                f" WHERE session_id IN ({marks}) AND seq <= ? ORDER BY session_id, seq",
                [*chunk, max_seq],
            )
            for r in rows:
                event = TranscriptEvent(r[0], r[1], r[2], r[3], _decode(r[4]))
                found.setdefault(r[0], []).append(event)
        return found

    def lasts(self, session_ids: Sequence[str]) -> dict[str, TranscriptEvent]:
        found: dict[str, TranscriptEvent] = {}
        unique = list(dict.fromkeys(session_ids))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._fetch(
                "SELECT e.session_id, e.seq, e.ts, e.type, e.data FROM transcripts t"
                " JOIN transcript_events e ON e.session_id = t.session_id AND e.seq = t.last_seq"
                f" WHERE t.session_id IN ({marks})",
                chunk,
            )
            for r in rows:
                found[r[0]] = TranscriptEvent(r[0], r[1], r[2], r[3], _decode(r[4]))
        return found
