"""The SQLite backend (the default): one file in WAL mode."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clawline.errors import LabelInUse, StoreError, StoreUnavailable
from clawline.sessions.entry import SessionEntry
from clawline.sessions.transcript import TranscriptEvent, TranscriptInfo
from clawline.store._rows import COLUMNS, SELECT_COLUMNS, entry_from_row, entry_to_params
from clawline.store._sql import ORDER_BY, keyset_predicate, subtree_bounds, where_clause
from clawline.store.base import (
    Page,
    Position,
    SessionQuery,
    Store,
    StoreTransaction,
    decode_path,
    encode_path,
)
from clawline.store.sqlite.migrations import migrate
from clawline.types import JSONObject

__all__ = ["SQLiteStore"]

_INSERT = f"INSERT INTO sessions ({SELECT_COLUMNS}) VALUES ({', '.join('?' for _ in COLUMNS)})"
_UPDATE = (
    "UPDATE sessions SET " + ", ".join(f"{column} = ?" for column in COLUMNS[1:]) + " WHERE key = ?"
)
_SELECT = f"SELECT {SELECT_COLUMNS} FROM sessions"


def _is_label_conflict(error: sqlite3.IntegrityError) -> bool:
    return "sessions.agent_id, sessions.label" in str(error)


class _Transaction(StoreTransaction):
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, key: str) -> SessionEntry | None:
        row = self._db.execute(f"{_SELECT} WHERE key = ?", (key,)).fetchone()
        return entry_from_row(row) if row else None

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
            self._db.execute(_INSERT, entry_to_params(entry))
        except sqlite3.IntegrityError as error:
            if _is_label_conflict(error):
                raise LabelInUse(f"label already in use: {entry.label}") from None
            raise StoreError(f"could not insert {entry.key}: {error}") from error

    def update(self, entry: SessionEntry) -> None:
        params = entry_to_params(entry)
        try:
            self._db.execute(_UPDATE, (*params[1:], params[0]))
        except sqlite3.IntegrityError as error:
            if _is_label_conflict(error):
                raise LabelInUse(f"label already in use: {entry.label}") from None
            raise StoreError(f"could not update {entry.key}: {error}") from error

    def delete(self, key: str) -> bool:
        return self._db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

    def graft(self, old_path: tuple[str, ...], new_path: tuple[str, ...], trace_id: str) -> int:
        old, new = encode_path(old_path), encode_path(new_path)
        low, high = subtree_bounds(old)
        cursor = self._db.execute(
            "UPDATE sessions SET lineage_path = ? || substr(lineage_path, ?),"
            " root_session_key = ?, trace_id = ?"
            " WHERE lineage_path >= ? AND lineage_path < ?",
            (new, len(old) + 1, new_path[0], trace_id, low, high),
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
        self._db.execute(
            "INSERT INTO transcripts (session_id, session_key, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id) DO NOTHING",
            (session_id, session_key, ts),
        )

    def archive_transcript(self, session_id: str, reason: str, ts: int) -> bool:
        cursor = self._db.execute(
            "UPDATE transcripts SET archived_at = ?, archive_reason = ?"
            " WHERE session_id = ? AND archived_at IS NULL",
            (ts, reason, session_id),
        )
        return cursor.rowcount > 0

    def append_event(
        self, session_id: str, ts: int, type: str, data: JSONObject
    ) -> TranscriptEvent:
        row = self._db.execute(
            "UPDATE transcripts SET last_seq = last_seq + 1 WHERE session_id = ?"
            " RETURNING last_seq, session_key",
            (session_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no transcript for session id {session_id}")
        seq = int(row[0])
        self._db.execute(
            "INSERT INTO transcript_events (session_id, seq, ts, type, data)"
            " VALUES (?, ?, ?, ?, ?)",
            (session_id, seq, ts, type, json.dumps(data, separators=(",", ":"))),
        )
        return TranscriptEvent(session_id=session_id, seq=seq, ts=ts, type=type, data=data)


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
            self._db = sqlite3.connect(self.location, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {self.location}: {error}") from error
        self._lock = threading.RLock()
        self._in_transaction = False
        self._secret: bytes | None = None
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        self._enable_wal(busy_timeout_ms)
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        migrate(self._db)

    def _enable_wal(self, timeout_ms: int) -> None:
        """Switch to WAL. SQLite answers "database is locked" at once, without waiting, while
        another connection is opening the same new file, so wait here instead."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    self._db.close()
                    raise StoreUnavailable(f"cannot open {self.location}: {error}") from error
                time.sleep(0.005)

    # --- plumbing ------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        with self._lock:
            if self._in_transaction:
                raise StoreError("transactions do not nest")
            self._in_transaction = True
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield _Transaction(self._db)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            finally:
                self._in_transaction = False

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

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
        return entry_from_row(rows[0]) if rows else None

    def get_many(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        found: dict[str, SessionEntry] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for row in self._fetch(f"{_SELECT} WHERE key IN ({marks})", chunk):
                entry = entry_from_row(row)
                found[entry.key] = entry
        return found

    def page(self, query: SessionQuery, after: Position | None, limit: int) -> Page:
        conditions, params = where_clause(query, "?")
        if after is not None:
            predicate, extra = keyset_predicate(after, "?")
            conditions.append(predicate)
            params.extend(extra)
        sql = f"{_SELECT} WHERE {' AND '.join(conditions)} {ORDER_BY} LIMIT ?"
        rows = self._fetch(sql, [*params, limit + 1])
        entries = [entry_from_row(row) for row in rows[:limit]]
        following = Position.of(entries[-1]) if len(rows) > limit and entries else None
        return Page(entries=entries, next=following)

    def page_at_offset(self, query: SessionQuery, offset: int, limit: int) -> list[SessionEntry]:
        conditions, params = where_clause(query, "?")
        sql = f"{_SELECT} WHERE {' AND '.join(conditions)} {ORDER_BY} LIMIT ? OFFSET ?"
        return [entry_from_row(row) for row in self._fetch(sql, [*params, limit, offset])]

    def count(self, query: SessionQuery) -> int:
        conditions, params = where_clause(query, "?")
        sql = f"SELECT count(*) FROM sessions WHERE {' AND '.join(conditions)}"
        rows = self._fetch(sql, params)
        return int(rows[0][0])

    def by_label(self, label: str, agent_id: str | None = None) -> list[SessionEntry]:
        if agent_id is None:
            rows = self._fetch(f"{_SELECT} WHERE label = ? {ORDER_BY}", (label,))
        else:
            rows = self._fetch(f"{_SELECT} WHERE agent_id = ? AND label = ?", (agent_id, label))
        return [entry_from_row(row) for row in rows]

    def by_session_id(self, session_id: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE session_id = ? {ORDER_BY}", (session_id,))
        return [entry_from_row(row) for row in rows]

    def children(self, key: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE parent_key = ? {ORDER_BY}", (key,))
        return [entry_from_row(row) for row in rows]

    def descendants(self, path: tuple[str, ...]) -> list[SessionEntry]:
        low, high = subtree_bounds(encode_path(path))
        rows = self._fetch(
            f"{_SELECT} WHERE lineage_path >= ? AND lineage_path < ? ORDER BY lineage_path",
            (low, high),
        )
        return [entry_from_row(row) for row in rows]

    def tree(self, root_key: str) -> list[SessionEntry]:
        rows = self._fetch(
            f"{_SELECT} WHERE root_session_key = ? ORDER BY lineage_path", (root_key,)
        )
        return [entry_from_row(row) for row in rows]

    def child_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        unique = list(dict.fromkeys(keys))
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
        return [TranscriptEvent(session_id, r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def tail(self, session_id: str, limit: int) -> list[TranscriptEvent]:
        rows = self._fetch(
            "SELECT seq, ts, type, data FROM transcript_events"
            " WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
            (session_id, limit),
        )
        return [
            TranscriptEvent(session_id, r[0], r[1], r[2], json.loads(r[3])) for r in reversed(rows)
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
                event = TranscriptEvent(r[0], r[1], r[2], r[3], json.loads(r[4]))
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
                found[r[0]] = TranscriptEvent(r[0], r[1], r[2], r[3], json.loads(r[4]))
        return found
