"""``store.outbox`` / ``tx.outbox`` on each backend: idempotent queueing, the due scan, the
terminal states, listing and depth."""

from __future__ import annotations

from dataclasses import replace

from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.store.base import Store

ROOM = OutboxTarget("matrix", "default", "!room:localhost")
TOPIC = OutboxTarget("telegram", "bot", "-100", thread_id="7")


def item(key: str, *, target: OutboxTarget = ROOM, due: int = 1_000) -> OutboxItem:
    return OutboxItem(
        target=target,
        text=f"text of {key}",
        kind="reply",
        dedupe_key=key,
        created_at=1_000,
        session_key="agent:main:matrix:group:!room:localhost",
        run_id="run-" + key,
        next_attempt_at=due,
    )


def enqueue(store: Store, *items: OutboxItem) -> list[OutboxItem]:
    with store.transaction() as tx:
        return tx.outbox.enqueue(items)


def test_a_queued_item_reads_back_whole(store: Store) -> None:
    [queued] = enqueue(store, item("a", target=TOPIC))
    assert queued.id is not None
    assert store.outbox.get(queued.id) == replace(item("a", target=TOPIC), id=queued.id)


def test_the_same_key_is_queued_once(store: Store) -> None:
    [first] = enqueue(store, item("a"))
    [second] = enqueue(store, item("a"), item("b"))
    assert second == replace(item("b"), id=second.id)
    assert second.id is not None
    assert first.id is not None
    assert second.id > first.id
    assert [row.dedupe_key for row in store.outbox.page(None, None, 10)] == ["b", "a"]


def test_due_rows_come_oldest_first_and_only_when_due(store: Store) -> None:
    late, early, now = item("late", due=5_000), item("early", due=2_000), item("now", due=1_000)
    enqueue(store, late, early, now)
    assert [row.dedupe_key for row in store.outbox.due(2_000, 10)] == ["now", "early"]
    assert [row.dedupe_key for row in store.outbox.due(2_000, 1)] == ["now"]
    assert store.outbox.next_due_at() == 1_000


def test_delivered_and_failed_rows_leave_the_due_scan_for_good(store: Store) -> None:
    a, b, c = enqueue(store, item("a"), item("b"), item("c"))
    assert a.id is not None
    assert b.id is not None
    assert c.id is not None
    with store.transaction() as tx:
        assert tx.outbox.delivered(a.id, 1_500, "$event") is True
        assert tx.outbox.failed(b.id, 1_600, "room gone") is True
        assert tx.outbox.retry_later(c.id, 9_000, "429 Too Many Requests") is True
    with store.transaction() as tx:  # a terminal row never changes again
        assert tx.outbox.delivered(a.id, 2_000, "$other") is False
        assert tx.outbox.retry_later(b.id, 2_000, "again") is False
    delivered, failed, later = (store.outbox.get(row_id) for row_id in (a.id, b.id, c.id))
    assert delivered is not None
    assert failed is not None
    assert later is not None
    assert (delivered.status, delivered.remote_id, delivered.delivered_at) == (
        "delivered",
        "$event",
        1_500,
    )
    assert (failed.status, failed.last_error, failed.attempts) == ("failed", "room gone", 1)
    assert (later.status, later.attempts, later.next_attempt_at) == ("pending", 1, 9_000)
    assert store.outbox.due(8_999, 10) == []
    assert [row.dedupe_key for row in store.outbox.due(9_000, 10)] == ["c"]
    assert store.outbox.next_due_at() == 9_000


def test_listing_is_newest_first_by_status_with_a_keyset(store: Store) -> None:
    rows = enqueue(store, *(item(f"k{index}") for index in range(5)))
    ids = [row.id for row in rows]
    with store.transaction() as tx:
        tx.outbox.failed(rows[1].id or 0, 2_000, "gone")
    assert [row.id for row in store.outbox.page(None, None, 3)] == ids[::-1][:3]
    assert [row.id for row in store.outbox.page(None, ids[2], 10)] == [ids[1], ids[0]]
    assert [row.id for row in store.outbox.page("failed", None, 10)] == [ids[1]]
    assert [row.id for row in store.outbox.page("pending", ids[1], 10)] == [ids[0]]


def test_depth_counts_pending_rows_per_account(store: Store) -> None:
    rows = enqueue(store, item("a"), item("b"), item("c", target=TOPIC))
    with store.transaction() as tx:
        tx.outbox.delivered(rows[0].id or 0, 2_000, None)
    assert store.outbox.pending_counts() == {("matrix", "default"): 1, ("telegram", "bot"): 1}


def test_a_rolled_back_transaction_queues_nothing(store: Store) -> None:
    try:
        with store.transaction() as tx:
            tx.outbox.enqueue([item("a")])
            raise RuntimeError("the write it belonged to failed")
    except RuntimeError:
        pass
    assert store.outbox.page(None, None, 10) == []


def test_postponing_moves_the_due_time_without_counting_an_attempt(store: Store) -> None:
    [row] = enqueue(store, item("a"))
    assert row.id is not None
    with store.transaction() as tx:
        assert tx.outbox.postpone(row.id, 7_000) is True
    moved = store.outbox.get(row.id)
    assert moved is not None
    assert (moved.next_attempt_at, moved.attempts, moved.status) == (7_000, 0, "pending")


def test_a_channel_cursor_is_kept_per_account_and_replaced(store: Store) -> None:
    assert store.channel_cursors.get("matrix", "default") is None
    with store.transaction() as tx:
        tx.channel_cursors.save("matrix", "default", "s1_2", 1_000)
        tx.channel_cursors.save("matrix", "other", "s9", 1_000)
    with store.transaction() as tx:
        tx.channel_cursors.save("matrix", "default", "s3_4", 2_000)
    assert store.channel_cursors.get("matrix", "default") == "s3_4"
    assert store.channel_cursors.get("matrix", "other") == "s9"
    assert store.channel_cursors.get("telegram", "default") is None


def test_a_channel_cursor_rolled_back_is_not_kept(store: Store) -> None:
    class Failed(Exception):
        pass

    try:
        with store.transaction() as tx:
            tx.channel_cursors.save("matrix", "default", "lost", 1_000)
            raise Failed
    except Failed:
        pass
    assert store.channel_cursors.get("matrix", "default") is None


def test_a_claim_is_taken_once_until_it_runs_out(store: Store) -> None:
    [queued] = enqueue(store, item("a"))
    assert queued.id is not None
    with store.transaction() as tx:
        assert not tx.outbox.claim(queued.id, 999, 31_000)  # not due yet
        assert tx.outbox.claim(queued.id, 1_000, 31_000)
        assert not tx.outbox.claim(queued.id, 1_001, 31_001)  # another instance: taken
    assert store.outbox.due(30_999, 10) == []
    assert [row.id for row in store.outbox.due(31_000, 10)] == [queued.id]
    with store.transaction() as tx:
        assert tx.outbox.claim(queued.id, 31_000, 61_000)  # the claimer died: due again
        assert tx.outbox.delivered(queued.id, 31_500, "$event")
        assert not tx.outbox.claim(queued.id, 99_000, 129_000)
