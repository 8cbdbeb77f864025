"""The outbox's due scan restricted to some channels (``due(..., channels=)``,
``next_due_at(channels=)``) on each backend: a gateway among several delivers only the channels
it holds, oldest first across them, and the due rows of the other channels are never walked
(one index range per channel)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.store._outbox_sql import SqlOutboxReads
from clawline.store.base import Store
from clawline.store.postgres.collab import postgres_dialect
from clawline.store.sqlite.collab import SQLITE

if TYPE_CHECKING:
    from .conftest import Backend

MATRIX = OutboxTarget("matrix", "default", "!room:localhost")
TELEGRAM = OutboxTarget("telegram", "default", "42")
WEBHOOK = OutboxTarget("webhook", "default", "alice")


def item(key: str, target: OutboxTarget, due: int) -> OutboxItem:
    return OutboxItem(
        target=target,
        text=f"text of {key}",
        kind="reply",
        dedupe_key=key,
        created_at=0,
        next_attempt_at=due,
    )


def enqueue(store: Store, *items: OutboxItem) -> list[OutboxItem]:
    with store.transaction() as tx:
        return tx.outbox.enqueue(items)


def keys(rows: Sequence[OutboxItem]) -> list[str]:
    return [row.dedupe_key for row in rows]


def test_only_the_channels_asked_for_come_oldest_first_across_them(store: Store) -> None:
    enqueue(
        store,
        item("m1", MATRIX, 1_000),
        item("t1", TELEGRAM, 1_500),
        item("w1", WEBHOOK, 500),
        item("m2", MATRIX, 2_000),
        item("t2", TELEGRAM, 2_000),
        item("t-later", TELEGRAM, 9_000),
    )
    held = {"matrix", "telegram"}
    assert keys(store.outbox.due(5_000, 10, channels=held)) == ["m1", "t1", "m2", "t2"]
    assert keys(store.outbox.due(5_000, 3, channels=held)) == ["m1", "t1", "m2"]
    assert keys(store.outbox.due(5_000, 10, channels=["telegram"])) == ["t1", "t2"]
    assert keys(store.outbox.due(1_500, 10, channels=held)) == ["m1", "t1"]
    assert keys(store.outbox.due(5_000, 10)) == ["w1", "m1", "t1", "m2", "t2"]  # unfiltered
    assert store.outbox.next_due_at(channels=held) == 1_000
    assert store.outbox.next_due_at(channels=["telegram"]) == 1_500
    assert store.outbox.next_due_at() == 500


def test_rows_due_at_the_same_time_keep_their_queue_order_across_channels(store: Store) -> None:
    queued = enqueue(
        store,
        item("a", TELEGRAM, 1_000),
        item("b", MATRIX, 1_000),
        item("c", TELEGRAM, 1_000),
        item("d", MATRIX, 1_000),
    )
    rows = store.outbox.due(1_000, 10, channels={"matrix", "telegram"})
    assert [row.id for row in rows] == [row.id for row in queued]
    assert rows == store.outbox.due(1_000, 10)


def test_no_channel_held_means_nothing_due(store: Store) -> None:
    enqueue(store, item("m1", MATRIX, 1_000))
    assert store.outbox.due(5_000, 10, channels=[]) == []
    assert store.outbox.next_due_at(channels=frozenset()) is None
    assert store.outbox.due(5_000, 10, channels=["telegram"]) == []
    assert store.outbox.next_due_at(channels=["telegram"]) is None


def test_rows_that_are_done_leave_the_filtered_scan(store: Store) -> None:
    delivered, failed, later = enqueue(
        store,
        item("delivered", TELEGRAM, 1_000),
        item("failed", TELEGRAM, 1_000),
        item("later", TELEGRAM, 1_000),
    )
    with store.transaction() as tx:
        tx.outbox.delivered(delivered.id or 0, 1_100, "7")
        tx.outbox.failed(failed.id or 0, 1_100, "chat not found")
        tx.outbox.retry_later(later.id or 0, 4_000, "429")
    assert store.outbox.due(3_999, 10, channels=["telegram"]) == []
    assert keys(store.outbox.due(4_000, 10, channels=["telegram"])) == ["later"]
    assert store.outbox.next_due_at(channels=["telegram"]) == 4_000


def _plans(backend: Backend, pg_url: str, call: Any) -> list[str]:
    """The query plans of the statements ``call(reads)`` issues through a reads object that
    explains each statement instead of running it."""
    plans: list[str] = []
    if backend.name == "sqlite":
        db = sqlite3.connect(backend.location)
        try:

            def explain_sqlite(statement: str, params: Sequence[Any]) -> list[Any]:
                rows = db.execute(f"EXPLAIN QUERY PLAN {statement}", list(params)).fetchall()
                plans.append(" ".join(str(row[-1]) for row in rows))
                return []

            call(SqlOutboxReads(explain_sqlite, SQLITE))
        finally:
            db.close()
        return plans
    with psycopg.connect(pg_url, autocommit=True) as pg:
        pg.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(backend.location)))

        def explain_postgres(statement: str, params: Sequence[Any]) -> list[Any]:
            rows = pg.execute(f"EXPLAIN {statement}", list(params)).fetchall()
            plans.append(" ".join(str(row[0]) for row in rows))
            return []

        call(SqlOutboxReads(explain_postgres, postgres_dialect(backend.location)))
    return plans


def test_the_filtered_scan_walks_one_index_range_per_channel(
    backend: Backend, store: Store, pg_url: str
) -> None:
    # A backlog of due rows of a channel no running instance holds, beside a few of the held
    # one and many delivered rows: the held channel's scan must not walk the backlog.
    backlog = [item(f"m{n}", MATRIX, n) for n in range(2_000)]
    held = [item(f"t{n}", TELEGRAM, n * 40) for n in range(50)]
    done = enqueue(store, *(item(f"w{n}", WEBHOOK, n) for n in range(1_000)))
    enqueue(store, *backlog, *held)
    with store.transaction() as tx:
        for row in done:
            tx.outbox.delivered(row.id or 0, 5_000, None)
    backend.rows("ANALYZE" if backend.name == "sqlite" else "ANALYZE channel_outbox")

    def scans(reads: SqlOutboxReads) -> None:
        reads.due(10_000, 200, channels=["telegram"])
        reads.due(10_000, 200, channels=["telegram", "webhook"])
        reads.next_due_at(channels=["telegram"])
        reads.next_due_at(channels=["telegram", "webhook"])

    plans = _plans(backend, pg_url, scans)
    assert len(plans) == 4
    for plan in plans:
        assert "outbox_due_by_channel" in plan, plan
        assert "outbox_due " not in f"{plan} ", plan
    assert keys(store.outbox.due(10_000, 200, channels=["telegram"])) == keys(held)
    assert store.outbox.next_due_at(channels=["telegram", "webhook"]) == 0
