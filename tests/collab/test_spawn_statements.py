"""What a spawned child costs the store: transactions and SQL statements per child.

``bench/agents.py`` times 1,000 children; this pins the store work behind that time, which
would otherwise grow without any test noticing (each extra statement per child is ~1 % of the
bench). The bounds are today's figures with a little room (4.3 transactions and 30.6 statements per
child here, where ten at a time make more completion turns per child than the bench's twenty);
lower them when the work drops.
The counts come from the SQLite connection's own trace callback, from the parent's message
until every completion is delivered and the parent is idle.
"""

from __future__ import annotations

from pathlib import Path

from clawline.config import Settings
from clawline.runtime import Runtime
from clawline.store import Store
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing.statements import StatementCount
from clawline.testing.waiting import eventually

PARENT = "agent:main:main"
CHILDREN = 40
MAX_TRANSACTIONS_PER_CHILD = 5.0
MAX_STATEMENTS_PER_CHILD = 32.0


def _store_settled(store: Store) -> bool:
    if store.runs.count_active(PARENT) or store.inbox.requesters_with_pending():
        return False
    return len(store.runs.for_requester(PARENT)) >= CHILDREN


def _delivered(store: Store) -> list[int]:
    runs = store.runs.for_requester(PARENT)
    delivered = []
    for run in runs:
        item = store.inbox.by_run(run.run_id)
        delivered.append(0 if item is None or item.delivered_at is None else 1)
    return delivered


async def test_each_spawned_child_costs_a_bounded_number_of_transactions_and_statements(
    tmp_path: Path,
) -> None:
    raw = {
        "agents": {
            "echo_delay_ms": 0,
            "defaults": {"subagents": {"maxChildrenPerAgent": 10, "maxConcurrent": 10}},
        }
    }
    runtime = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
    store = runtime.store
    assert isinstance(store, SQLiteStore)
    counted = StatementCount()

    async def settled() -> bool:
        if runtime.busy or runtime.runs.has_active_run(PARENT):
            return False
        return await runtime.workers.run(_store_settled, store)

    async with runtime:
        await runtime.workers.run(store.trace, counted)
        message = f"spawn {CHILDREN} x: check item"
        await runtime.runs.send(session_key=PARENT, message=message, idempotency_key="count")
        await eventually(settled, timeout=60, what="every child delivered, the parent idle")
        await runtime.workers.run(store.trace, None)
        delivered = await runtime.workers.run(_delivered, store)
    runtime.close()

    assert delivered == [1] * CHILDREN
    per_child_tx = counted.transactions / CHILDREN
    per_child = counted.statements / CHILDREN
    assert 1 <= per_child_tx <= MAX_TRANSACTIONS_PER_CHILD, per_child_tx
    assert 1 <= per_child <= MAX_STATEMENTS_PER_CHILD, per_child
