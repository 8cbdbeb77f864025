"""The collaboration tables on PostgreSQL: the dialect and the objects ``store.tasks`` …
``tx.bindings`` are made of (the SQL itself is shared, see :mod:`clawline.store._dialect`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from clawline.store._bindings_sql import SqlBindingReads, SqlBindingWrites
from clawline.store._channel_cursors_sql import SqlChannelCursorReads, SqlChannelCursorWrites
from clawline.store._dialect import Dialect, Execute
from clawline.store._idempotency_sql import SqlIdempotencyReads, SqlIdempotencyWrites
from clawline.store._inbox_sql import SqlInboxReads, SqlInboxWrites
from clawline.store._instances_sql import (
    SqlClaimReads,
    SqlClaimWrites,
    SqlHandoffReads,
    SqlHandoffWrites,
    SqlInstanceReads,
    SqlInstanceWrites,
    SqlRunOwnerReads,
    SqlRunOwnerWrites,
    SqlRunStopWrites,
)
from clawline.store._outbox_sql import SqlOutboxReads, SqlOutboxWrites
from clawline.store._pairings_sql import SqlPairingReads, SqlPairingWrites
from clawline.store._runs_sql import SqlRunReads, SqlRunWrites
from clawline.store._tasks_sql import SqlTaskReads, SqlTaskWrites
from clawline.store.base import Store, StoreTransaction
from clawline.store.postgres.migrations import advisory_key


def _identity(value: Any) -> Any:
    return value


def postgres_dialect(schema: str) -> Dialect:
    """The dialect for one schema: its advisory locks are keyed by the schema too, so stores
    in different schemas of one database never wait on each other."""

    def lock(execute: Execute, lock_class: int, name: str) -> None:
        execute(
            "SELECT pg_advisory_xact_lock(%s, %s)",
            (lock_class, advisory_key(f"{schema}\x1f{name}")),
        )

    return Dialect(
        placeholder="%s",
        for_update=" FOR UPDATE",
        skip_locked=" FOR UPDATE SKIP LOCKED",
        same="IS NOT DISTINCT FROM",
        json_in=Jsonb,
        json_out=_identity,
        lock=lock,
    )


def attach_reads(store: Store, fetch: Execute, dialect: Dialect) -> None:
    """Give ``store`` its read objects (``tasks``, ``runs``, ``inbox``, ``bindings``,
    ``pairings``, ``outbox``, ``channel_cursors``, ``idempotency``)."""
    store.tasks = SqlTaskReads(fetch, dialect)
    store.runs = SqlRunReads(fetch, dialect)
    store.inbox = SqlInboxReads(fetch, dialect)
    store.bindings = SqlBindingReads(fetch, dialect)
    store.pairings = SqlPairingReads(fetch, dialect)
    store.outbox = SqlOutboxReads(fetch, dialect)
    store.channel_cursors = SqlChannelCursorReads(fetch, dialect)
    store.idempotency = SqlIdempotencyReads(fetch, dialect)
    store.instances = SqlInstanceReads(fetch, dialect)
    store.run_owners = SqlRunOwnerReads(fetch, dialect)
    store.handoffs = SqlHandoffReads(fetch, dialect)
    store.claims = SqlClaimReads(fetch, dialect)


def attach_writes(
    tx: StoreTransaction,
    cursor: psycopg.Cursor[TupleRow],
    dialect: Dialect,
    instance_id: str | None,
) -> None:
    """Give a transaction its write objects (``tasks``, ``runs``, ``inbox``, ``bindings``,
    ``pairings``, ``outbox``, ``channel_cursors``, ``idempotency``, ``instances``,
    ``run_owners``); rows that belong to a process are stamped with ``instance_id``."""

    def execute(statement: str, params: Sequence[Any]) -> list[Any]:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description is not None else []

    tx.tasks = SqlTaskWrites(execute, dialect)
    tx.runs = SqlRunWrites(execute, dialect, instance_id)
    tx.inbox = SqlInboxWrites(execute, dialect)
    tx.bindings = SqlBindingWrites(execute, dialect)
    tx.pairings = SqlPairingWrites(execute, dialect)
    tx.outbox = SqlOutboxWrites(execute, dialect)
    tx.channel_cursors = SqlChannelCursorWrites(execute, dialect)
    tx.idempotency = SqlIdempotencyWrites(execute, dialect)
    tx.instances = SqlInstanceWrites(execute, dialect)
    tx.run_owners = SqlRunOwnerWrites(execute, dialect, instance_id)
    tx.handoffs = SqlHandoffWrites(execute, dialect)
    tx.run_stops = SqlRunStopWrites(execute, dialect)
    tx.claims = SqlClaimWrites(execute, dialect, instance_id)
