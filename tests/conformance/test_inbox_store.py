"""``store.inbox`` / ``tx.inbox``: the durable announce inbox."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from clawline.records.collab import InboxItem
from clawline.store.base import Store
from clawline.types import JSONObject

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
OTHER = "agent:main:other"


def add(store: Store, run: str, requester: str = MAIN, at: int = 1) -> InboxItem:
    payload: JSONObject = {"text": f"done {run}", "fields": {"status": "ok", "n": [1, 2]}}
    with store.transaction() as tx:
        item = tx.inbox.add(
            requester_session_key=requester,
            child_session_key=f"agent:main:subagent:{run}",
            run_id=run,
            status="ok",
            payload=payload,
            created_at=at,
            task_id=f"task-{run}",
        )
    assert item is not None
    return item


def test_rows_get_growing_ids_and_round_trip(store: Store) -> None:
    a = add(store, "r1", at=10)
    b = add(store, "r2", at=5)
    assert b.id > a.id
    assert store.inbox.get(a.id) == a
    assert store.inbox.by_run("r2") == b
    assert a == InboxItem(
        id=a.id,
        requester_session_key=MAIN,
        child_session_key="agent:main:subagent:r1",
        run_id="r1",
        task_id="task-r1",
        status="ok",
        payload={"text": "done r1", "fields": {"status": "ok", "n": [1, 2]}},
        created_at=10,
    )
    assert a.pending
    assert store.inbox.get(b.id + 1000) is None
    assert store.inbox.by_run("none") is None


def test_one_completion_per_run(backend: Backend, store: Store) -> None:
    first = add(store, "r1")
    before = backend.dump()
    with store.transaction() as tx:
        again = tx.inbox.add(
            requester_session_key=OTHER,
            child_session_key="x",
            run_id="r1",
            status="error",
            payload={},
            created_at=2,
        )
        assert again is None
    assert backend.dump() == before
    assert store.inbox.by_run("r1") == first


def test_pending_rows_per_requester_in_id_order(store: Store) -> None:
    a = add(store, "r1")
    b = add(store, "r2", requester=OTHER)
    c = add(store, "r3")
    assert store.inbox.pending_for(MAIN) == [a, c]
    assert store.inbox.pending_for(OTHER) == [b]
    assert store.inbox.pending_for("agent:main:none") == []
    assert store.inbox.requesters_with_pending() == [MAIN, OTHER]
    with store.transaction() as tx:
        assert tx.inbox.pending_for(MAIN) == [a, c]
        assert tx.inbox.mark_delivered([a.id], 50, delivery_seq=7) == [a.id]
    assert store.inbox.requesters_with_pending() == [OTHER, MAIN]
    delivered = store.inbox.get(a.id)
    assert delivered is not None
    assert (delivered.delivered_at, delivered.delivery_seq, delivered.pending) == (50, 7, False)
    assert store.inbox.pending_for(MAIN) == [c]


def test_mark_delivered_marks_only_undelivered_rows(store: Store) -> None:
    a, b, c = add(store, "r1"), add(store, "r2"), add(store, "r3")
    with store.transaction() as tx:
        assert tx.inbox.mark_delivered([b.id], 10) == [b.id]
    with store.transaction() as tx:
        marked = tx.inbox.mark_delivered([c.id, a.id, b.id, a.id, 999_999_999], 20)
    assert marked == [a.id, c.id]
    again = store.inbox.get(b.id)
    assert again is not None
    assert again.delivered_at == 10  # not moved by the second call
    with store.transaction() as tx:
        assert tx.inbox.mark_delivered([], 30) == []
    assert store.inbox.requesters_with_pending() == []


def test_many_ids_at_once(store: Store) -> None:
    items = [add(store, f"r{n}") for n in range(1_100)]
    with store.transaction() as tx:
        marked = tx.inbox.mark_delivered([item.id for item in items], 5)
    assert marked == [item.id for item in items]
    assert store.inbox.pending_for(MAIN) == []


def test_two_dispatchers_never_mark_one_row_twice(backend: Backend, store: Store) -> None:
    items = [add(store, f"r{n}") for n in range(40)]
    wanted = [item.id for item in items]
    stores = [backend.open(), backend.open()]
    start = threading.Barrier(2)

    def dispatch(index: int) -> list[int]:
        marked: list[int] = []
        start.wait()
        # Each dispatcher goes through the rows in its own order, in small transactions.
        order = wanted if index == 0 else wanted[::-1]
        for offset in range(0, len(order), 4):
            with stores[index].transaction() as tx:
                marked.extend(tx.inbox.mark_delivered(order[offset : offset + 4], 100 + index))
        return marked

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(dispatch, [0, 1]))
    assert not set(results[0]) & set(results[1])
    assert sorted(results[0] + results[1]) == wanted
    for index, marked in enumerate(results):
        for item_id in marked:
            row = store.inbox.get(item_id)
            assert row is not None
            assert row.delivered_at == 100 + index


def test_a_claimed_row_is_not_delivered_by_a_second_dispatcher(backend: Backend) -> None:
    """A dispatcher that read a requester's pending rows in its transaction holds them: a second
    one waits, and then finds nothing left to deliver."""
    first, second = backend.open(), backend.open()
    item = add(first, "r1")

    def deliver(store: Store) -> list[int]:
        with store.transaction() as tx:
            pending = tx.inbox.pending_for(MAIN)
            return tx.inbox.mark_delivered([row.id for row in pending], 2)

    with ThreadPoolExecutor(max_workers=1) as pool, first.transaction() as tx:
        assert tx.inbox.pending_for(MAIN) == [item]
        racing = pool.submit(deliver, second)
        time.sleep(0.2)
        assert not racing.done()
        assert tx.inbox.mark_delivered([item.id], 1) == [item.id]
    assert racing.result(timeout=10) == []
    row = first.inbox.get(item.id)
    assert row is not None
    assert row.delivered_at == 1


def test_retarget_moves_only_pending_rows(store: Store) -> None:
    a, b = add(store, "r1"), add(store, "r2")
    with store.transaction() as tx:
        tx.inbox.mark_delivered([a.id], 3)
        assert tx.inbox.retarget([a.id, b.id], OTHER) == 1
    assert store.inbox.pending_for(OTHER) == [replace(b, requester_session_key=OTHER)]
    moved = store.inbox.get(a.id)
    assert moved is not None
    assert moved.requester_session_key == MAIN


def test_prune_delivered_deletes_old_delivered_rows(store: Store) -> None:
    a, b, c, d = (add(store, f"r{n}") for n in range(4))
    with store.transaction() as tx:
        tx.inbox.mark_delivered([a.id], 10)
        tx.inbox.mark_delivered([b.id], 20)
        tx.inbox.mark_delivered([c.id], 30)
    with store.transaction() as tx:
        assert tx.inbox.prune_delivered(30, 1) == 1
        assert tx.inbox.prune_delivered(30, 10) == 1
        assert tx.inbox.prune_delivered(30, 10) == 0
    assert [store.inbox.get(item.id) is not None for item in (a, b, c, d)] == [
        False,
        False,
        True,
        True,
    ]


def test_prune_delivered_takes_the_oldest_deliveries_first(store: Store) -> None:
    """Pruning goes by delivery time (not by id or creation), and a pending row is never
    pruned however old it is."""
    a, b, c, old_pending = (add(store, f"r{n}", at=1) for n in range(4))
    with store.transaction() as tx:
        tx.inbox.mark_delivered([c.id], 10)
        tx.inbox.mark_delivered([a.id], 20)
        tx.inbox.mark_delivered([b.id], 30)
    with store.transaction() as tx:
        assert tx.inbox.prune_delivered(1_000, 1) == 1
    assert store.inbox.get(c.id) is None
    assert store.inbox.get(a.id) is not None
    with store.transaction() as tx:
        assert tx.inbox.prune_delivered(1_000, 1) == 1
    assert store.inbox.get(a.id) is None
    assert store.inbox.get(b.id) is not None
    with store.transaction() as tx:
        assert tx.inbox.prune_delivered(1_000, 10) == 1
        assert tx.inbox.prune_delivered(1_000, 10) == 0
    assert store.inbox.pending_for(MAIN) == [old_pending]
