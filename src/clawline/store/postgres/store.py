"""The PostgreSQL backend: one catalog shared by several processes, several gateway instances
among them (:mod:`clawline.instances`).

Writers in different processes meet three kinds of lock, always taken in this order, so two
writers never wait on each other in a circle:

1. the row of the session being written (``SELECT … FOR UPDATE``); when there is no row yet, a
   per-key advisory lock, so two creators of one key queue up instead of colliding;
2. the lineage lock (a transaction-level advisory lock), taken by every write that creates a
   session or sets a parent, so paths, roots, trace ids and cycle checks are decided one at a
   time, as in the single-writer SQLite store;
3. none: rows read or rewritten after the lineage lock (the parent, a grafted subtree) are read
   without row locks, as their lineage only changes under the lineage lock, which we hold.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb
from psycopg_pool import PoolClosed, PoolTimeout

from clawline.config import PoolSettings
from clawline.errors import LabelInUse, StoreError, StoreTimeout, StoreUnavailable
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent, TranscriptInfo
from clawline.store._dialect import Dialect
from clawline.store._extensions_sql import lookup_sessions, replace_session_rows
from clawline.store._sessions_table import (
    COLUMNS,
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
from clawline.store.event_log import EventLog
from clawline.store.instance_lock import InstanceLock, SharedStoreLock
from clawline.store.location import redact_url
from clawline.store.postgres.collab import attach_reads, attach_writes, postgres_dialect
from clawline.store.postgres.event_log import PostgresEventLog
from clawline.store.postgres.migrations import advisory_key, migrate
from clawline.store.postgres.pool import (
    CHECKOUT_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    Pool,
    migration_connection,
    open_pool,
)
from clawline.types import JSONObject

EVENT_LOG_CONNECTIONS = 2
"""The event log's own pool: its writer and its reader."""
LINEAGE_LOCK_CLASS = 0x636C6C6E
"""First key of the lineage advisory lock ("clln"); the second is the schema's key."""
KEY_LOCK_CLASS = 0x636C6B79
"""First key of the per-session-key advisory lock ("clky")."""
LABEL_INDEX = "sessions_label_per_agent"

_INSERT = (
    f"INSERT INTO sessions ({INSERT_COLUMNS}, revision)"
    f" VALUES ({', '.join('%s' for _ in COLUMNS)}, %s)"
)
_UPDATE = (
    "UPDATE sessions SET "
    + ", ".join(f"{column} = %s" for column in COLUMNS[1:])
    + ", revision = %s WHERE key = %s"
)
_SELECT = f"SELECT {SELECT_COLUMNS} FROM sessions"
_GET_FOR_UPDATE = f"{_SELECT} WHERE key = %s FOR UPDATE"
_ADVISORY_LOCK = "SELECT pg_advisory_xact_lock(%s, %s)"
_EVENT_COLUMNS = "SELECT seq, ts, type, data FROM transcript_events"


def _params(entry: SessionEntry) -> list[Any]:
    params = list(entry_to_params(entry, json_as_text=False))
    for index in (-2, -1):
        if params[index] is not None:
            params[index] = Jsonb(params[index])
    return params


class _Transaction(StoreTransaction):
    def __init__(
        self,
        cursor: psycopg.Cursor[TupleRow],
        lineage_lock: tuple[int, int],
        dialect: Dialect,
        instance_id: str | None,
    ) -> None:
        self._cursor = cursor
        self._lineage_lock = lineage_lock
        self._lineage_locked = False
        self._revision: int | None = None
        self._dialect = dialect
        attach_writes(self, cursor, dialect, instance_id)

    def _next_revision(self) -> int:
        """The revision every row this transaction writes gets (drawn once, on first write)."""
        if self._revision is None:
            self._revision = new_revision()
        return self._revision

    def _one(self, statement: str, params: Sequence[Any]) -> TupleRow | None:
        return self._cursor.execute(statement, params).fetchone()

    def _rowcount(self, statement: str, params: Sequence[Any]) -> int:
        return self._cursor.execute(statement, params).rowcount

    def get(self, key: str) -> SessionEntry | None:
        if self._lineage_locked:
            # Lock order: no row locks after the lineage lock (see the module docstring).
            row = self._one(f"{_SELECT} WHERE key = %s", (key,))
            return entry_from_row(row) if row else None
        row = self._one(_GET_FOR_UPDATE, (key,))
        if row is None:
            # Nothing to lock yet: queue behind anyone creating the same key, then look again
            # (a statement of its own, so it sees what they committed).
            self._one(_ADVISORY_LOCK, (KEY_LOCK_CLASS, advisory_key(key)))
            row = self._one(_GET_FOR_UPDATE, (key,))
        return entry_from_row(row) if row else None

    def key_for_label(self, agent_id: str, label: str) -> str | None:
        row = self._one(
            "SELECT key FROM sessions WHERE agent_id = %s AND label = %s", (agent_id, label)
        )
        return row[0] if row else None

    def trace_of_tree(self, root_key: str) -> str | None:
        # Adopting a tree's trace id is a lineage decision: it must not race a parent being set.
        self.lock_lineage()
        row = self._one(
            "SELECT trace_id FROM sessions WHERE root_session_key = %s LIMIT 1", (root_key,)
        )
        return row[0] if row else None

    def _write(self, statement: str, params: Sequence[Any], entry: SessionEntry) -> None:
        try:
            self._cursor.execute(statement, params)
        except pg_errors.UniqueViolation as error:
            if error.diag.constraint_name == LABEL_INDEX:
                raise LabelInUse(f"label already in use: {entry.label}") from None
            raise StoreError(f"could not write {entry.key}: {error}") from error

    def insert(self, entry: SessionEntry) -> None:
        self._write(_INSERT, [*_params(entry), self._next_revision()], entry)

    def update(self, entry: SessionEntry) -> None:
        params = _params(entry)
        self._write(_UPDATE, [*params[1:], self._next_revision(), params[0]], entry)

    def delete(self, key: str) -> bool:
        return self._rowcount("DELETE FROM sessions WHERE key = %s", (key,)) > 0

    def graft(self, old_path: tuple[str, ...], new_path: tuple[str, ...], trace_id: str) -> int:
        old, new = encode_path(old_path), encode_path(new_path)
        low, high = subtree_bounds(old)
        return self._rowcount(
            "UPDATE sessions SET lineage_path = %s || substr(lineage_path, %s),"
            " root_session_key = %s, trace_id = %s, revision = %s"
            " WHERE lineage_path >= %s AND lineage_path < %s",
            (new, len(old) + 1, new_path[0], trace_id, self._next_revision(), low, high),
        )

    def subtree_paths(self, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        low, high = subtree_bounds(encode_path(path))
        rows = self._cursor.execute(
            "SELECT lineage_path FROM sessions WHERE lineage_path >= %s AND lineage_path < %s",
            (low, high),
        ).fetchall()
        return [decode_path(row[0]) for row in rows]

    def lock_lineage(self) -> None:
        if not self._lineage_locked:
            self._one(_ADVISORY_LOCK, self._lineage_lock)
            self._lineage_locked = True

    def open_transcript(self, session_id: str, session_key: str, ts: int) -> None:
        self._cursor.execute(
            "INSERT INTO transcripts (session_id, session_key, created_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (session_id) DO NOTHING",
            (session_id, session_key, ts),
        )

    def archive_transcript(self, session_id: str, reason: str, ts: int) -> bool:
        count = self._rowcount(
            "UPDATE transcripts SET archived_at = %s, archive_reason = %s"
            " WHERE session_id = %s AND archived_at IS NULL",
            (ts, reason, session_id),
        )
        return count > 0

    def append_event(
        self, session_id: str, ts: int, type: str, data: JSONObject, *, session_key: str = ""
    ) -> TranscriptEvent:
        next_seq = (
            "UPDATE transcripts SET last_seq = last_seq + 1 WHERE session_id = %s"
            " RETURNING last_seq"
        )
        row = self._one(next_seq, (session_id,))
        if row is None and session_key:
            self.open_transcript(session_id, session_key, ts)
            row = self._one(next_seq, (session_id,))
        if row is None:
            raise StoreError(f"no transcript for session id {session_id}")
        seq = int(row[0])
        self._cursor.execute(
            "INSERT INTO transcript_events (session_id, seq, ts, type, data)"
            " VALUES (%s, %s, %s, %s, %s)",
            (session_id, seq, ts, type, Jsonb(data)),
        )
        return TranscriptEvent(session_id=session_id, seq=seq, ts=ts, type=type, data=data)

    def set_extension_index(self, session_key: str, rows: Sequence[ExtensionIndexRow]) -> None:
        replace_session_rows(self._execute, self._dialect, session_key, rows)

    def _execute(self, statement: str, params: Sequence[Any]) -> list[Any]:
        self._cursor.execute(statement, params)
        return self._cursor.fetchall() if self._cursor.description is not None else []


class _ThreadState(threading.local):
    transaction: psycopg.Connection[TupleRow] | None = None
    """The connection of the transaction this thread has open."""


class PostgresStore(Store):
    """Sessions and transcripts in a PostgreSQL database, optionally in their own schema.

    Several threads may use the store at once (:attr:`max_concurrency` of them without waiting):
    a read checks a connection out of a bounded pool (:mod:`clawline.store.postgres.pool`) for
    its one statement, and a transaction keeps one from begin to commit or rollback; reads a
    thread makes inside its own transaction run on that transaction's connection, so they see
    its writes. Several processes may share the database: writes lock rows and take advisory
    locks (see the module docstring), so they see the same rules as the single-writer SQLite
    store. Every pooled connection has ``statement_timeout`` and ``lock_timeout`` set; a call
    that runs into one fails with :class:`~clawline.errors.StoreTimeout`, and rolls back.
    """

    backend = "postgresql"

    def __init__(
        self, url: str, *, schema: str | None = None, pool: PoolSettings | None = None
    ) -> None:
        self.location = redact_url(url)
        self._url = url
        self._schema = schema
        self._settings = pool or PoolSettings()
        self._thread = _ThreadState()
        self._secret: bytes | None = None
        # Shared by the threads: its dict operations are atomic, and it only ever hands back
        # an entry for the exact (key, revision) it was read at, whichever thread read it.
        self._entries = EntryCache()
        current = self._migrate()
        self._lineage_lock = (LINEAGE_LOCK_CLASS, advisory_key(current))
        self._dialect = postgres_dialect(current)
        try:
            self._pool = open_pool(url, schema=schema, settings=self._settings)
            self._events_pool: Pool | None = None
        except PoolTimeout:
            raise StoreUnavailable(
                f"cannot connect to {self.location}: the pool got no connection"
                f" in {CONNECT_TIMEOUT_S} s"
            ) from None
        except psycopg.Error as error:
            raise StoreUnavailable(f"cannot use {self.location}: {self._scrub(error)}") from None
        attach_reads(self, self._fetch, self._dialect)

    def checkpoint(self) -> None:
        """Nothing: the server checkpoints its own log."""

    def defer_checkpoints(self) -> None:
        """Nothing: no call on this store runs on the event loop (:meth:`claim_now`)."""

    @property
    def max_concurrency(self) -> int:
        """The pool size: a transaction or read per connection."""
        return self._settings.size

    # --- plumbing ------------------------------------------------------------------------

    def _scrub(self, error: BaseException) -> str:
        """The error's text with the URL's password (if any) blanked out."""
        text = str(error).strip()
        try:
            password = psycopg.conninfo.conninfo_to_dict(self._url).get("password")
        except psycopg.Error:
            password = None
        for secret in ({str(password or "")} | _url_passwords(self._url)) - {""}:
            text = text.replace(secret, "***")
        return text

    def _migrate(self) -> str:
        """Create and migrate the schema on a connection of its own; the schema's name."""
        try:
            db = migration_connection(self._url)
        except psycopg.Error as error:
            raise StoreUnavailable(
                f"cannot connect to {self.location}: {self._scrub(error)}"
            ) from None
        with db:
            try:
                if self._schema is not None:
                    db.execute(
                        sql.SQL("SET search_path TO {}").format(sql.Identifier(self._schema))
                    )
            except psycopg.Error as error:
                raise StoreUnavailable(
                    f"cannot use {self.location}: {self._scrub(error)}"
                ) from None
            with self._errors_mapped():
                migrate(db, self._schema)
                row = db.execute("SELECT current_schema()").fetchone()
        current = row[0] if row else None
        if current is None:
            raise StoreUnavailable(f"no schema to write to in {self.location}")
        return str(current)

    @contextmanager
    def _errors_mapped(self) -> Iterator[None]:
        """Turn driver errors into :class:`StoreError` or :class:`StoreUnavailable` (our own
        errors pass through)."""
        try:
            yield
        except psycopg.Error as error:
            raise self._store_error(error) from None

    def _store_error(self, error: psycopg.Error) -> StoreError | StoreUnavailable:
        if isinstance(error, PoolClosed):
            return StoreUnavailable(f"{self.location}: the store is closed")
        if isinstance(error, PoolTimeout):
            return StoreTimeout(
                f"{self.location}: no free database connection in {CHECKOUT_TIMEOUT_S:g} s"
                f" (store.poolSize is {self._settings.size})"
            )
        kind: type[StoreError | StoreUnavailable] = StoreError
        if isinstance(error, pg_errors.QueryCanceled | pg_errors.LockNotAvailable):
            kind = StoreTimeout  # statement_timeout, lock_timeout: the message says which
        elif isinstance(error, psycopg.OperationalError):
            kind = StoreUnavailable
        return kind(f"{self.location}: {self._scrub(error)}")

    def _put_back(self, db: psycopg.Connection[TupleRow]) -> None:
        """Return a connection to the pool (which replaces it if it is broken)."""
        if db.broken:
            # The server dropped it, and most likely its idle siblings too (a restart, a
            # failover): have the pool replace those before it hands them out.
            self._pool.drain()
        self._pool.putconn(db)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[TupleRow]]:
        """The connection for one store call: this thread's transaction's, else one from the
        pool for the length of the call."""
        held = self._thread.transaction
        if held is not None:
            yield held
            return
        # getconn/putconn rather than pool.connection(): that one also commits or rolls back
        # on the way out, which our transactions and autocommit reads never need.
        db = self._pool.getconn()
        try:
            yield db
        finally:
            self._put_back(db)

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        if self._thread.transaction is not None:
            raise StoreError("transactions do not nest")
        with self._errors_mapped(), self._connection() as db:
            self._thread.transaction = db
            try:
                with db.transaction(), db.cursor() as cursor:
                    tx = _Transaction(cursor, self._lineage_lock, self._dialect, self.instance_id)
                    yield tx
            finally:
                self._thread.transaction = None
        tx.run_after_commit()

    def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read (as :meth:`_connection`, spelled out: the hottest path)."""
        try:
            held = self._thread.transaction
            if held is not None:
                return held.execute(query, params).fetchall()
            db = self._pool.getconn()
            try:
                return db.execute(query, params).fetchall()
            finally:
                self._put_back(db)
        except psycopg.Error as error:
            raise self._store_error(error) from None

    def close(self) -> None:
        self._pool.close()
        if self._events_pool is not None:
            self._events_pool.close()

    def instance_lock(self) -> InstanceLock:
        return SharedStoreLock()

    def event_log(self) -> EventLog:
        """The schema's event log, on a pool of its own (:data:`EVENT_LOG_CONNECTIONS`: its
        writer and its reader), so that events never wait for a connection behind the store's
        work."""
        if self._events_pool is None:
            self._events_pool = open_pool(
                self._url,
                schema=self._schema,
                settings=self._settings.model_copy(update={"size": EVENT_LOG_CONNECTIONS}),
                name="clawline-events",
                role="events",
            )
        pool = self._events_pool

        @contextmanager
        def connection() -> Iterator[psycopg.Connection[TupleRow]]:
            db = pool.getconn()
            try:
                yield db
            finally:
                pool.putconn(db)

        return PostgresEventLog(
            self._url,
            schema=self._schema,
            connection=connection,
            errors=self._errors_mapped,
            location=self.location,
            scrub=self._scrub,
        )

    def secret(self) -> bytes:
        if self._secret is None:
            with self._errors_mapped(), self._connection() as db, db.transaction():
                db.execute(
                    "INSERT INTO clawline_meta (name, value) VALUES ('secret', %s)"
                    " ON CONFLICT (name) DO NOTHING",
                    (secrets.token_bytes(32),),
                )
                row = db.execute("SELECT value FROM clawline_meta WHERE name = 'secret'").fetchone()
            if row is None:
                raise StoreError(f"{self.location}: the store secret vanished")
            self._secret = bytes(row[0])
        return self._secret

    # --- sessions ------------------------------------------------------------------------

    def get(self, key: str) -> SessionEntry | None:
        rows = self._fetch(f"{_SELECT} WHERE key = %s", (key,))
        return self._entries(rows[0]) if rows else None

    def get_many(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return {}
        rows = self._fetch(f"{_SELECT} WHERE key = ANY(%s)", (unique,))
        return {entry.key: entry for entry in map(self._entries, rows)}

    def page(self, query: SessionQuery, after: Position | None, limit: int) -> Page:
        conditions, params = where_clause(query, "%s")
        if after is not None:
            predicate, extra = keyset_predicate(after, "%s")
            conditions.append(predicate)
            params.extend(extra)
        where = " AND ".join(conditions)
        if not self._entries.warm:
            statement = f"{_SELECT} WHERE {where} {ORDER_BY} LIMIT %s"
            rows = self._fetch(statement, [*params, limit + 1])
            entries = self._entries.entries(rows[:limit])
            following = Position.of(entries[-1]) if len(rows) > limit and entries else None
            return Page(entries=entries, next=following)
        # Most rows were read before: read the page's revisions, then only changed rows in full.
        ids = self._fetch(
            f"SELECT key, revision, updated_at FROM sessions WHERE {where} {ORDER_BY} LIMIT %s",
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
        conditions, params = where_clause(query, "%s")
        statement = f"{_SELECT} WHERE {' AND '.join(conditions)} {ORDER_BY} LIMIT %s OFFSET %s"
        return [self._entries(row) for row in self._fetch(statement, [*params, limit, offset])]

    def count(self, query: SessionQuery) -> int:
        statement, params = count_statement(query, "%s")
        rows = self._fetch(statement, params)
        return int(rows[0][0])

    def by_label(self, label: str, agent_id: str | None = None) -> list[SessionEntry]:
        if agent_id is None:
            rows = self._fetch(f"{_SELECT} WHERE label = %s {ORDER_BY}", (label,))
        else:
            rows = self._fetch(f"{_SELECT} WHERE agent_id = %s AND label = %s", (agent_id, label))
        return [self._entries(row) for row in rows]

    def by_session_id(self, session_id: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE session_id = %s {ORDER_BY}", (session_id,))
        return [self._entries(row) for row in rows]

    def children(self, key: str) -> list[SessionEntry]:
        rows = self._fetch(f"{_SELECT} WHERE parent_key = %s {ORDER_BY}", (key,))
        return [self._entries(row) for row in rows]

    def descendants(self, path: tuple[str, ...]) -> list[SessionEntry]:
        low, high = subtree_bounds(encode_path(path))
        rows = self._fetch(
            f"{_SELECT} WHERE lineage_path >= %s AND lineage_path < %s ORDER BY lineage_path",
            (low, high),
        )
        return [self._entries(row) for row in rows]

    def tree(self, root_key: str) -> list[SessionEntry]:
        rows = self._fetch(
            f"{_SELECT} WHERE root_session_key = %s ORDER BY lineage_path", (root_key,)
        )
        return [self._entries(row) for row in rows]

    def child_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return {}
        rows = self._fetch(
            f"SELECT parent_key, key FROM sessions WHERE parent_key = ANY(%s) {ORDER_BY}",
            (unique,),
        )
        found: dict[str, list[str]] = {}
        for parent, key in rows:
            found.setdefault(parent, []).append(key)
        return found

    def sessions_by_extension(
        self, plugin_id: str, namespace: str, field: str, value: str
    ) -> list[str]:
        return lookup_sessions(self._fetch, self._dialect, plugin_id, namespace, field, value)

    # --- transcripts ---------------------------------------------------------------------

    def transcript_info(self, session_id: str) -> TranscriptInfo | None:
        rows = self._fetch(
            "SELECT session_id, session_key, created_at, last_seq, archived_at, archive_reason"
            " FROM transcripts WHERE session_id = %s",
            (session_id,),
        )
        return TranscriptInfo(*rows[0]) if rows else None

    def events(
        self, session_id: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[TranscriptEvent]:
        rows = self._fetch(
            f"{_EVENT_COLUMNS} WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            (session_id, after_seq, limit),
        )
        return [TranscriptEvent(session_id, r[0], r[1], r[2], r[3]) for r in rows]

    def tail(self, session_id: str, limit: int) -> list[TranscriptEvent]:
        rows = self._fetch(
            f"{_EVENT_COLUMNS} WHERE session_id = %s ORDER BY seq DESC LIMIT %s",
            (session_id, limit),
        )
        return [TranscriptEvent(session_id, r[0], r[1], r[2], r[3]) for r in reversed(rows)]

    def heads(self, session_ids: Sequence[str], max_seq: int) -> dict[str, list[TranscriptEvent]]:
        unique = list(dict.fromkeys(session_ids))
        if not unique:
            return {}
        rows = self._fetch(
            "SELECT session_id, seq, ts, type, data FROM transcript_events"
            " WHERE session_id = ANY(%s) AND seq <= %s ORDER BY session_id, seq",
            (unique, max_seq),
        )
        found: dict[str, list[TranscriptEvent]] = {}
        for r in rows:
            found.setdefault(r[0], []).append(TranscriptEvent(r[0], r[1], r[2], r[3], r[4]))
        return found

    def lasts(self, session_ids: Sequence[str]) -> dict[str, TranscriptEvent]:
        unique = list(dict.fromkeys(session_ids))
        if not unique:
            return {}
        rows = self._fetch(
            "SELECT e.session_id, e.seq, e.ts, e.type, e.data FROM transcripts t"
            " JOIN transcript_events e ON e.session_id = t.session_id AND e.seq = t.last_seq"
            " WHERE t.session_id = ANY(%s)",
            (unique,),
        )
        return {r[0]: TranscriptEvent(r[0], r[1], r[2], r[3], r[4]) for r in rows}


def _url_passwords(url: str) -> set[str]:
    """The password of a URL as written and percent-decoded (empty set if none)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return set()
    return {password, unquote(password)} - {""} if password else set()
