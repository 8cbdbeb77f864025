"""The collaboration tables on SQLite: the dialect and the objects ``store.tasks`` …
``tx.bindings`` are made of (the SQL itself is shared, see :mod:`clawline.store._dialect`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

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


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


SQLITE = Dialect(
    placeholder="?",
    for_update="",  # BEGIN IMMEDIATE already keeps every other writer out
    same="IS",
    json_in=_dump,
    json_out=json.loads,
)


def attach_reads(store: Store, fetch: Execute) -> None:
    """Give ``store`` its read objects (``tasks``, ``runs``, ``inbox``, ``bindings``,
    ``pairings``, ``outbox``, ``channel_cursors``, ``idempotency``)."""
    store.tasks = SqlTaskReads(fetch, SQLITE)
    store.runs = SqlRunReads(fetch, SQLITE)
    store.inbox = SqlInboxReads(fetch, SQLITE)
    store.bindings = SqlBindingReads(fetch, SQLITE)
    store.pairings = SqlPairingReads(fetch, SQLITE)
    store.outbox = SqlOutboxReads(fetch, SQLITE)
    store.channel_cursors = SqlChannelCursorReads(fetch, SQLITE)
    store.idempotency = SqlIdempotencyReads(fetch, SQLITE)
    store.instances = SqlInstanceReads(fetch, SQLITE)
    store.run_owners = SqlRunOwnerReads(fetch, SQLITE)
    store.handoffs = SqlHandoffReads(fetch, SQLITE)
    store.claims = SqlClaimReads(fetch, SQLITE)


def attach_writes(tx: StoreTransaction, db: sqlite3.Connection, instance_id: str | None) -> None:
    """Give a transaction its write objects (``tasks``, ``runs``, ``inbox``, ``bindings``,
    ``pairings``, ``outbox``, ``channel_cursors``, ``idempotency``, ``instances``,
    ``run_owners``); rows that belong to a process are stamped with ``instance_id``."""

    def execute(statement: str, params: Sequence[Any]) -> list[Any]:
        return db.execute(statement, params).fetchall()

    tx.tasks = SqlTaskWrites(execute, SQLITE)
    tx.runs = SqlRunWrites(execute, SQLITE, instance_id)
    tx.inbox = SqlInboxWrites(execute, SQLITE)
    tx.bindings = SqlBindingWrites(execute, SQLITE)
    tx.pairings = SqlPairingWrites(execute, SQLITE)
    tx.outbox = SqlOutboxWrites(execute, SQLITE)
    tx.channel_cursors = SqlChannelCursorWrites(execute, SQLITE)
    tx.idempotency = SqlIdempotencyWrites(execute, SQLITE)
    tx.instances = SqlInstanceWrites(execute, SQLITE)
    tx.run_owners = SqlRunOwnerWrites(execute, SQLITE, instance_id)
    tx.handoffs = SqlHandoffWrites(execute, SQLITE)
    tx.run_stops = SqlRunStopWrites(execute, SQLITE)
    tx.claims = SqlClaimWrites(execute, SQLITE, instance_id)
