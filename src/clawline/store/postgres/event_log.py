"""The PostgreSQL event log: the ``event_log`` table of a schema, shared by every gateway
instance on it (:mod:`clawline.store.event_log`).

An append takes a transaction-level advisory lock keyed by the schema, then, in one statement,
numbers the batch after the highest number, inserts it and calls ``pg_notify`` (a statement of
its own after the lock's, so its snapshot sees what the last holder committed). The lock is held
until commit, so appends commit one at a time in the order of their numbers, and the
notification rings when the rows become visible. A reader that reads ``seq > N`` therefore
never misses a row that commits later below what it saw. The lock, the channel and the rows
all belong to one schema: stores in other schemas of the database never wait on it (a
channel's name is a hash of the schema's, so two schemas sharing one only cost a spurious
ring).

The sync calls use the store's pool; the doorbell is a connection of its own, in autocommit,
that ``LISTEN``\\ s, with TCP keepalives and a periodic check so a dead connection is noticed
and replaced rather than silently ringing no more.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractContextManager
from typing import NamedTuple

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import TupleRow

from clawline.errors import StoreError, StoreUnavailable
from clawline.store.event_log import EventLog, EventRecord, LogBounds, LoggedEvent
from clawline.store.postgres.instance_schema import EVENT_STREAM_ROW
from clawline.store.postgres.migrations import advisory_key
from clawline.store.postgres.pool import APPLICATION_NAME, CONNECT_TIMEOUT_S

EVENT_LOG_LOCK_CLASS = 0x636C6576
"""First key of the append lock ("clev"); the second is the schema's key."""
CHANNEL_PREFIX = "clawline_events_"
CHECK_INTERVAL_S = 5.0
"""A doorbell that heard nothing for this long checks that its connection still answers."""
CHECK_TIMEOUT_S = 10.0
KEEPALIVE_IDLE_S = 10
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3

_COLUMNS = "seq, instance_id, name, audience, session_key, drop_if_slow, payload, ts"
_APPEND = (
    # One statement (its snapshot is taken after the lock, so it sees the last holder's rows):
    # number the batch after the highest number, insert it, ring at commit.
    "WITH top AS (SELECT coalesce(max(seq), 0) AS seq FROM event_log),"
    f" added AS (INSERT INTO event_log ({_COLUMNS})"
    " SELECT top.seq + r.n, r.instance_id, r.name, r.audience, r.session_key, r.drop_if_slow,"
    " r.payload, r.ts FROM top, unnest("
    "%s::text[], %s::text[], %s::text[], %s::text[], %s::boolean[], %s::text[], %s::bigint[]"
    ") WITH ORDINALITY AS r(instance_id, name, audience, session_key, drop_if_slow, payload, ts, n)"
    " RETURNING seq)"
    " SELECT min(seq), max(seq), pg_notify(%s, max(seq)::text) FROM added"
)
_READ_AFTER = f"SELECT {_COLUMNS} FROM event_log WHERE seq > %s ORDER BY seq LIMIT %s"
_PRUNE = "DELETE FROM event_log WHERE ts < %s AND seq <= (SELECT max(seq) FROM event_log) - %s"

Connect = Callable[[], AbstractContextManager[psycopg.Connection[TupleRow]]]
Scrub = Callable[[BaseException], str]


class _Names(NamedTuple):
    lock: tuple[int, int]
    channel: str


def _names(schema: str) -> _Names:
    digest = hashlib.sha256(schema.encode()).hexdigest()[:16]
    return _Names((EVENT_LOG_LOCK_CLASS, advisory_key(schema)), CHANNEL_PREFIX + digest)


def doorbell_conninfo(url: str) -> str:
    """The store URL's connection string with the doorbell's keepalives and name."""
    name = conninfo_to_dict(url).get("application_name") or APPLICATION_NAME
    return make_conninfo(
        url,
        application_name=f"{name} (event doorbell)",
        keepalives=1,
        keepalives_idle=KEEPALIVE_IDLE_S,
        keepalives_interval=KEEPALIVE_INTERVAL_S,
        keepalives_count=KEEPALIVE_COUNT,
    )


def _announced(payload: str) -> int | None:
    return int(payload) if payload.isdigit() else None


class PostgresEventLog(EventLog):
    """The event log of one schema. ``connection`` and ``errors`` are the store's: a pooled
    connection for one call, and the mapping of driver errors to store errors."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None,
        connection: Connect,
        errors: Callable[[], AbstractContextManager[None]],
        location: str,
        scrub: Scrub,
    ) -> None:
        self._conninfo = doorbell_conninfo(url)
        self._schema = schema
        self._connection = connection
        self._errors = errors
        self._location = location
        self._scrub = scrub
        self._resolved: _Names | None = None
        self._stream_id: str | None = None

    def _names(self, db: psycopg.Connection[TupleRow]) -> _Names:
        """The schema's lock and channel (the schema as the store's connections resolve it)."""
        if self._resolved is None:
            row = db.execute("SELECT current_schema()").fetchone()
            if row is None or row[0] is None:
                raise StoreUnavailable(f"no schema for the event log in {self._location}")
            self._resolved = _names(str(row[0]))
        return self._resolved

    def stream_id(self) -> str:
        if self._stream_id is None:
            with self._errors(), self._connection() as db:
                row = db.execute(
                    "SELECT value FROM clawline_meta WHERE name = %s", (EVENT_STREAM_ROW,)
                ).fetchone()
            if row is None:
                raise StoreError(f"{self._location}: the event stream has no id")
            self._stream_id = bytes(row[0]).decode()
        return self._stream_id

    def append(self, records: Sequence[EventRecord]) -> list[int]:
        if not records:
            return []
        with self._errors(), self._connection() as db, db.transaction():
            names = self._names(db)
            db.execute("SELECT pg_advisory_xact_lock(%s, %s)", names.lock)
            row = db.execute(
                _APPEND,
                (
                    [record.instance_id for record in records],
                    [record.name for record in records],
                    [record.audience for record in records],
                    [record.session_key for record in records],
                    [record.drop_if_slow for record in records],
                    [record.payload for record in records],
                    [record.ts for record in records],
                    names.channel,
                ),
            ).fetchone()
        if row is None or row[1] - row[0] + 1 != len(records):
            raise StoreError(f"{self._location}: the event log numbered a batch wrongly: {row}")
        return list(range(row[0], row[1] + 1))

    def read_after(self, seq: int, limit: int) -> list[LoggedEvent]:
        with self._errors(), self._connection() as db:
            rows = db.execute(_READ_AFTER, (seq, limit)).fetchall()
        return [
            LoggedEvent(
                seq=row[0],
                instance_id=row[1],
                name=row[2],
                audience=row[3],
                session_key=row[4],
                drop_if_slow=row[5],
                payload=row[6],
                ts=row[7],
            )
            for row in rows
        ]

    def bounds(self) -> LogBounds | None:
        with self._errors(), self._connection() as db:
            row = db.execute("SELECT min(seq), max(seq) FROM event_log").fetchone()
        if row is None or row[0] is None:
            return None
        return LogBounds(int(row[0]), int(row[1]))

    def prune(self, older_than_ts: int, keep_at_least: int) -> int:
        # The newest row always stays: the next append numbers after it.
        with self._errors(), self._connection() as db:
            return db.execute(_PRUNE, (older_than_ts, max(1, keep_at_least))).rowcount

    # --- the doorbell --------------------------------------------------------------------------

    def _unavailable(self, error: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"event doorbell on {self._location}: {self._scrub(error)}")

    async def _listening(self) -> psycopg.AsyncConnection[TupleRow]:
        try:
            db = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
        except psycopg.Error as error:
            raise self._unavailable(error) from None
        try:
            if self._schema is not None:
                await db.execute(
                    sql.SQL("SET search_path TO {}").format(sql.Identifier(self._schema))
                )
            row = await (await db.execute("SELECT current_schema()")).fetchone()
            if row is None or row[0] is None:
                raise StoreUnavailable(f"no schema for the event log in {self._location}")
            channel = _names(str(row[0])).channel
            await db.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException as error:
            await db.close()
            if isinstance(error, psycopg.Error):
                raise self._unavailable(error) from None
            raise
        return db

    async def doorbell(self) -> AsyncGenerator[int | None, None]:
        db = await self._listening()
        try:
            yield None
            while True:
                try:
                    # Notifications that arrive between two of these calls wait in the
                    # connection's backlog; none is lost.
                    notifies = db.notifies(timeout=CHECK_INTERVAL_S)
                    async with contextlib.aclosing(notifies):
                        async for notify in notifies:
                            yield _announced(notify.payload)
                    async with asyncio.timeout(CHECK_TIMEOUT_S):
                        await db.execute("SELECT 1")
                except psycopg.Error as error:
                    raise self._unavailable(error) from None
                except TimeoutError:
                    raise StoreUnavailable(
                        f"event doorbell on {self._location}: the connection did not answer"
                        f" in {CHECK_TIMEOUT_S:g} s"
                    ) from None
        finally:
            await db.close()
