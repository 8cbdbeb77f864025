"""The PostgreSQL store's instance lock: a session-level advisory lock per schema.

The lock lives on a connection of its own, in autocommit, opened when the gateway starts and
kept for its whole life; the server releases it when that session ends. So that a holder whose
host dies (or whose network goes) does not keep it for hours, the connection sets TCP
keepalives on both ends: the server's socket (``tcp_keepalives_*``, ``tcp_user_timeout``) ends
the session about :data:`KEEPALIVE_IDLE_S` + :data:`KEEPALIVE_COUNT` * :data:`KEEPALIVE_INTERVAL_S`
seconds after the host stops answering, and libpq's keepalives let this side notice a dead
server. The lock needs a real session: a pooler in transaction mode cannot hold it.

Every :data:`CHECK_INTERVAL_S` the holder checks that its session still answers
(:meth:`PostgresInstanceLock.watch`); once it does not, the lock may already be someone else's,
and the gateway stops (security.md).

The holder's description is the ``instance_holder`` row of the schema's ``clawline_meta``,
together with the server process id of the lock's session; a refused gateway trusts the row
only when that id is the one ``pg_locks`` shows holding the lock (a row left by a holder that
died is not).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import TupleRow

from clawline.errors import StoreUnavailable
from clawline.store.instance_lock import InstanceHolder, InstanceLock
from clawline.store.postgres.migrations import advisory_key

INSTANCE_LOCK_CLASS = 0x636C696E
"""First key of the instance advisory lock ("clin"); the second is the schema's key."""
HOLDER_ROW = "instance_holder"
CHECK_INTERVAL_S = 1.0
CHECK_TIMEOUT_S = 10.0
"""A check (or the release) that gets no answer in this long counts as a lost session."""
CONNECT_TIMEOUT_S = 10
KEEPALIVE_IDLE_S = 10
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3
USER_TIMEOUT_MS = 30_000
"""Unacknowledged data this old ends the connection (``TCP_USER_TIMEOUT``), on both ends."""

_OID_MASK = 0xFFFFFFFF
"""``pg_locks`` shows the two signed keys as unsigned ``oid`` values."""

_HOLDER_QUERY = (
    "SELECT l.pid, m.value FROM pg_locks l"
    " LEFT JOIN clawline_meta m ON m.name = %s"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
    " AND l.classid::int8 = %s AND l.objid::int8 = %s"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
_UPSERT_HOLDER = (
    "INSERT INTO clawline_meta (name, value) VALUES (%s, %s)"
    " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"
)

Scrub = Callable[[BaseException], str]


def lock_conninfo(url: str) -> str:
    """The store URL's connection string with the lock connection's keepalives."""
    params = conninfo_to_dict(url)
    server = (
        f"-c tcp_keepalives_idle={KEEPALIVE_IDLE_S}"
        f" -c tcp_keepalives_interval={KEEPALIVE_INTERVAL_S}"
        f" -c tcp_keepalives_count={KEEPALIVE_COUNT}"
        f" -c tcp_user_timeout={USER_TIMEOUT_MS}"
    )
    extra: dict[str, Any] = {
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE_S,
        "keepalives_interval": KEEPALIVE_INTERVAL_S,
        "keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": USER_TIMEOUT_MS,
        "options": f"{params.get('options') or ''} {server}".strip(),
    }
    if not params.get("application_name"):
        extra["application_name"] = "clawline instance lock"
    return make_conninfo(url, **extra)


class PostgresInstanceLock(InstanceLock):
    def __init__(self, url: str, *, schema: str | None, location: str, scrub: Scrub) -> None:
        self._conninfo = lock_conninfo(url)
        self._schema = schema
        self._location = location
        self._scrub = scrub
        self._db: psycopg.AsyncConnection[TupleRow] | None = None
        self._key: tuple[int, int] | None = None
        self._record: bytes | None = None
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def _failure(self, error: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"instance lock on {self._location}: {self._scrub(error)}")

    async def _connection(self) -> tuple[psycopg.AsyncConnection[TupleRow], tuple[int, int]]:
        if self._db is None or self._key is None:
            db = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
            try:
                if self._schema is not None:
                    await db.execute(
                        sql.SQL("SET search_path TO {}").format(sql.Identifier(self._schema))
                    )
                row = await (await db.execute("SELECT current_schema()")).fetchone()
            except BaseException:
                await db.close()
                raise
            if row is None or row[0] is None:
                await db.close()
                raise StoreUnavailable(f"no schema to lock in {self._location}")
            self._db, self._key = db, (INSTANCE_LOCK_CLASS, advisory_key(row[0]))
        return self._db, self._key

    async def _try_lock(self, holder: InstanceHolder) -> bool:
        try:
            db, key = await self._connection()
            row = await (await db.execute("SELECT pg_try_advisory_lock(%s, %s)", key)).fetchone()
            if row is None or not row[0]:
                return False
            self._held = True
            await self.record(holder)
        except psycopg.Error as error:
            raise self._failure(error) from None
        return True

    async def _current_holder(self) -> InstanceHolder | None:
        db, (first, second) = await self._connection()
        try:
            cursor = await db.execute(
                _HOLDER_QUERY, (HOLDER_ROW, first & _OID_MASK, second & _OID_MASK)
            )
            row = await cursor.fetchone()
        except psycopg.Error as error:
            raise self._failure(error) from None
        if row is None or row[1] is None:
            return None
        try:
            data = json.loads(bytes(row[1]))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or data.get("backend") != row[0]:
            return None  # written by an earlier holder, not the live one
        return InstanceHolder.from_json(data)

    async def record(self, holder: InstanceHolder) -> None:
        if not self._held or self._db is None:
            raise StoreUnavailable(f"the instance lock on {self._location} is not held")
        record = json.dumps({**holder.to_json(), "backend": self._db.info.backend_pid}).encode()
        try:
            await self._db.execute(_UPSERT_HOLDER, (HOLDER_ROW, record))
        except psycopg.Error as error:
            raise self._failure(error) from None
        self._record = record

    async def watch(self) -> str:
        db = self._db
        if not self._held or db is None:
            return "the lock is not held"
        while True:
            await asyncio.sleep(CHECK_INTERVAL_S)
            try:
                async with asyncio.timeout(CHECK_TIMEOUT_S):
                    await db.execute("SELECT 1")
            except TimeoutError:
                reason = f"the lock's database session did not answer in {CHECK_TIMEOUT_S:g}s"
            except psycopg.Error as error:
                reason = f"the lock's database session ended: {self._scrub(error)}"
            else:
                continue
            self._held = False
            return reason

    async def release(self) -> None:
        db, self._db = self._db, None
        held, self._held = self._held, False
        record, self._record = self._record, None
        key, self._key = self._key, None
        if db is None:
            return
        try:
            if held and not db.broken and key is not None:
                async with asyncio.timeout(CHECK_TIMEOUT_S):
                    if record is not None:
                        await db.execute(
                            "DELETE FROM clawline_meta WHERE name = %s AND value = %s",
                            (HOLDER_ROW, record),
                        )
                    await db.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except (psycopg.Error, TimeoutError):
            pass  # ending the session below releases the lock all the same
        finally:
            await db.close()
