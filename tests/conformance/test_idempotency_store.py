"""``store.idempotency`` / ``tx.idempotency``: run idempotency keys with their outcomes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from clawline.errors import Conflict
from clawline.records.idempotency import IdempotencyRecord
from clawline.store.base import Store
from clawline.types import JSONObject

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
OUTCOME: JSONObject = {
    "status": "done",
    "startedAt": 20,
    "endedAt": 30,
    "text": "echo: héllo ✓",
    "usage": {"input": 3, "nested": [1, {"x": None}]},
}
WAIT = 0.2
"""How long a blocked writer is given to (wrongly) finish."""


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


def claim(store: Store, key: str, *, run_id: str | None = None, at: int = 10) -> None:
    with store.transaction() as tx:
        tx.idempotency.insert(
            dedupe_key=key, run_id=run_id or key, session_key=MAIN, accepted_at=at, now=at
        )


def end(store: Store, key: str, expires_at: int, *, run_id: str | None = None) -> bool:
    with store.transaction() as tx:
        return tx.idempotency.finish(key, run_id or key, OUTCOME, expires_at)


def test_a_claimed_key_is_live_until_its_outcome_is_written(store: Store) -> None:
    claim(store, "k1", at=10)
    live = IdempotencyRecord(dedupe_key="k1", run_id="k1", session_key=MAIN, accepted_at=10)
    assert store.idempotency.get("k1", 10**12) == live  # live rows never expire
    assert live.live
    with store.transaction() as tx:
        assert tx.idempotency.get("k1", 11) == live
    assert end(store, "k1", expires_at=1000)
    ended = store.idempotency.get("k1", 999)
    assert ended == IdempotencyRecord("k1", "k1", MAIN, 10, OUTCOME, 1000)
    assert not ended.live
    assert store.idempotency.get("other", 0) is None


def test_an_outcome_is_written_once_and_only_for_its_run(store: Store) -> None:
    claim(store, "agent:k", run_id="k")
    assert not end(store, "agent:k", 500, run_id="someone-else")
    assert store.idempotency.get("agent:k", 0) == IdempotencyRecord("agent:k", "k", MAIN, 10)
    assert end(store, "agent:k", 500, run_id="k")
    with store.transaction() as tx:
        assert not tx.idempotency.finish("agent:k", "k", {"status": "failed"}, 900)
        assert not tx.idempotency.finish("missing", "missing", OUTCOME, 900)
    record = store.idempotency.get("agent:k", 0)
    assert record is not None
    assert (record.outcome, record.expires_at) == (OUTCOME, 500)


def test_an_expired_key_is_never_returned_and_can_be_claimed_again(store: Store) -> None:
    claim(store, "k", at=10)
    end(store, "k", expires_at=100)
    assert store.idempotency.get("k", 99) is not None
    assert store.idempotency.get("k", 100) is None
    with store.transaction() as tx:
        assert tx.idempotency.get("k", 100) is None
        tx.idempotency.insert(
            dedupe_key="k", run_id="k", session_key="agent:main:other", accepted_at=150, now=150
        )
    fresh = IdempotencyRecord("k", "k", "agent:main:other", 150)
    assert store.idempotency.get("k", 150) == fresh


@pytest.mark.parametrize("ended", [False, True])
def test_a_held_key_is_a_conflict_that_writes_nothing(
    backend: Backend, store: Store, ended: bool
) -> None:
    claim(store, "k", at=10)
    if ended:
        end(store, "k", expires_at=100)
    before = backend.dump()
    with store.transaction() as tx:
        with pytest.raises(Conflict, match="idempotency key already recorded: k"):
            tx.idempotency.insert(
                dedupe_key="k", run_id="other", session_key="agent:main:x", accepted_at=50, now=50
            )
        assert tx.idempotency.get("k", 50) is not None  # the transaction is still usable
    assert backend.dump() == before


def test_concurrent_claims_of_one_key_end_in_one_conflict(
    backend: Backend, store: Store, pool: ThreadPoolExecutor
) -> None:
    other = backend.open()

    def second_claim() -> None:
        with other.transaction() as tx:
            tx.idempotency.insert(
                dedupe_key="k", run_id="second", session_key="agent:main:b", accepted_at=5, now=5
            )

    with store.transaction() as tx:
        tx.idempotency.insert(
            dedupe_key="k", run_id="first", session_key="agent:main:a", accepted_at=5, now=5
        )
        second = pool.submit(second_claim)
        time.sleep(WAIT)
        assert not second.done()  # it waits for the first claim's transaction
    with pytest.raises(Conflict):
        second.result(timeout=10)
    assert backend.rows("SELECT dedupe_key, run_id, session_key FROM run_idempotency") == [
        ("k", "first", "agent:main:a")
    ]


def test_live_rows_are_listed_by_key_in_pages(store: Store) -> None:
    for key in ("c", "a", "d", "b"):
        claim(store, key)
    end(store, "b", expires_at=100)
    first = store.idempotency.live(None, 2)
    assert [record.dedupe_key for record in first] == ["a", "c"]
    assert all(record.live for record in first)
    assert [record.dedupe_key for record in store.idempotency.live("c", 2)] == ["d"]
    assert store.idempotency.live("d", 2) == []


def test_delete_drops_only_the_runs_own_row(store: Store) -> None:
    claim(store, "k", run_id="r")
    with store.transaction() as tx:
        assert not tx.idempotency.delete("k", "another-run")
        assert tx.idempotency.get("k", 0) is not None
        assert tx.idempotency.delete("k", "r")
        assert not tx.idempotency.delete("k", "r")
    assert store.idempotency.get("k", 0) is None


def test_prune_deletes_expired_rows_soonest_first_in_bounded_batches(
    backend: Backend, store: Store
) -> None:
    for key, expires_at in (("e3", 300), ("e1", 100), ("e2", 200), ("later", 900)):
        claim(store, key)
        end(store, key, expires_at=expires_at)
    claim(store, "live")
    with store.transaction() as tx:
        assert tx.idempotency.prune(300, 2) == 2
    remaining = backend.rows("SELECT dedupe_key FROM run_idempotency ORDER BY dedupe_key")
    assert remaining == [("e3",), ("later",), ("live",)]
    with store.transaction() as tx:
        assert tx.idempotency.prune(300, 2) == 1
        assert tx.idempotency.prune(300, 2) == 0
        assert tx.idempotency.prune(10**12, 10) == 1  # "later"; the live row stays
    assert store.idempotency.get("live", 10**12) == IdempotencyRecord("live", "live", MAIN, 10)
    assert backend.rows("SELECT count(*) FROM run_idempotency") == [(1,)]
