"""The collaboration tables share transactions with sessions and transcripts; and every lookup
they promise is served by an index."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.records.collab import SubagentRun, ThreadBinding
from clawline.records.task import TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store, StoreTransaction

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:c1"


class Boom(Exception):
    pass


def _seed(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch(MAIN, {})
    catalog.patch(CHILD, {"spawnedBy": MAIN})
    with store.transaction() as tx:
        tx.runs.insert(SubagentRun("r1", CHILD, MAIN, "work", 1, task_id="t1"))
        tx.tasks.insert(
            TaskRecord(
                "t1",
                "subagent",
                MAIN,
                MAIN,
                "session",
                "work",
                "running",
                "pending",
                "done_only",
                1,
                child_session_key=CHILD,
                run_id="r1",
            )
        )
        tx.tasks.add_event("t1", 1, "running", None)


def _end_child_run(tx: StoreTransaction) -> None:
    """What the end of a child's run writes: session, transcript, run, task, inbox, binding."""
    entry = tx.get(CHILD)
    assert entry is not None
    tx.update(replace(entry, status="done", ended_at=5, updated_at=5))
    tx.append_event(entry.session_id, 5, "message", {"role": "assistant", "content": "ok"})
    run = tx.runs.get("r1")
    assert run is not None
    tx.runs.update(replace(run, ended_at=5, outcome={"status": "ok"}, frozen_result_text="ok"))
    task = tx.tasks.get("t1")
    assert task is not None
    tx.tasks.update(replace(task, status="succeeded", ended_at=5, cleanup_after=10))
    tx.tasks.add_event("t1", 5, "succeeded", "ok")
    item = tx.inbox.add(
        requester_session_key=MAIN,
        child_session_key=CHILD,
        run_id="r1",
        status="ok",
        payload={"text": "ok"},
        created_at=5,
        task_id="t1",
    )
    assert item is not None
    tx.bindings.bind(ThreadBinding("webchat", "", "th", CHILD, "child", 5, 5, idle_ms=10))


def test_a_failed_transaction_leaves_nothing_behind(
    backend: Backend, store: Store, catalog: SessionCatalog
) -> None:
    _seed(catalog, store)
    before = backend.dump()

    def end_then_fail() -> None:
        with store.transaction() as tx:
            _end_child_run(tx)
            raise Boom

    with pytest.raises(Boom):
        end_then_fail()
    assert backend.dump() == before
    assert store.inbox.requesters_with_pending() == []
    assert store.runs.count_active(MAIN) == 1


def test_a_committed_transaction_shows_everything_at_once(
    backend: Backend, store: Store, catalog: SessionCatalog
) -> None:
    _seed(catalog, store)
    other = backend.open()
    with store.transaction() as tx:
        _end_child_run(tx)
        assert other.runs.count_active(MAIN) == 1
        assert other.inbox.pending_for(MAIN) == []
    task = other.tasks.get("t1")
    assert task is not None
    assert task.status == "succeeded"
    assert [e.kind for e in other.tasks.events("t1")] == ["running", "succeeded"]
    assert other.runs.count_active(MAIN) == 0
    assert [item.run_id for item in other.inbox.pending_for(MAIN)] == ["r1"]
    assert other.bindings.active("webchat", "", "th") is not None
    child = other.get(CHILD)
    assert child is not None
    assert child.status == "done"


INDEXES = {
    "tasks_by_created",
    "tasks_by_run",
    "tasks_by_status",
    "tasks_by_runtime_status",
    "tasks_by_cleanup",
    "tasks_by_last_event",
    "tasks_by_owner",
    "tasks_by_flow",
    "tasks_by_child",
    "tasks_by_requester",
    "tasks_by_agent",
    "runs_by_child",
    "runs_by_requester",
    "runs_active_by_requester",
    "runs_by_controller",
    "runs_active",
    "runs_archive_due",
    "runs_cleaned",
    "inbox_pending",
    "inbox_delivered",
    "bindings_active_conversation",
    "bindings_by_session",
    "bindings_by_expiry",
}


def test_every_lookup_index_exists(backend: Backend) -> None:
    if backend.name == "sqlite":
        rows = backend.rows("SELECT name FROM sqlite_master WHERE type = 'index'")
    else:
        rows = backend.rows("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
    assert {row[0] for row in rows} >= INDEXES


PLANS = [
    (
        "SELECT count(*) FROM subagent_runs"
        " WHERE requester_session_key = 'q7' AND ended_at IS NULL",
        "runs_active_by_requester",
    ),
    (
        "SELECT id FROM announce_inbox WHERE requester_session_key = 'q7'"
        " AND delivered_at IS NULL ORDER BY id",
        "inbox_pending",
    ),
    ("SELECT task_id FROM tasks WHERE run_id = 'r7'", "tasks_by_run"),
    (
        "SELECT task_id FROM tasks WHERE status = 'running'"
        " ORDER BY created_at DESC, task_id DESC LIMIT 10",
        "tasks_by_status",
    ),
    (
        "SELECT task_id FROM tasks WHERE owner_key = 'q7'"
        " ORDER BY created_at DESC, task_id DESC LIMIT 10",
        "tasks_by_owner",
    ),
    (
        "SELECT id FROM thread_bindings WHERE unbound_at IS NULL AND expires_at <= 5"
        " ORDER BY expires_at",
        "bindings_by_expiry",
    ),
]


def _populate(store: Store, rows: int) -> None:
    """Realistic proportions: most runs ended, most completions delivered, few tasks running."""
    with store.transaction() as tx:
        for n in range(rows):
            requester = f"q{n % 200}"
            live = n % 10 == 0
            tx.runs.insert(
                SubagentRun(f"r{n}", f"c{n}", requester, "w", n, ended_at=None if live else n)
            )
            item = tx.inbox.add(
                requester_session_key=requester,
                child_session_key=f"c{n}",
                run_id=f"r{n}",
                status="ok",
                payload={},
                created_at=n,
            )
            assert item is not None
            if not live:
                tx.inbox.mark_delivered([item.id], n)
            tx.tasks.insert(
                TaskRecord(
                    f"t{n}",
                    "subagent",
                    requester,
                    requester,
                    "session",
                    "w",
                    "running" if live else "succeeded",
                    "pending",
                    "done_only",
                    n,
                    run_id=f"r{n}",
                )
            )
            binding = tx.bindings.bind(
                ThreadBinding("webchat", "", f"th{n}", f"c{n}", "child", n, n, idle_ms=1_000)
            )
            if not live:
                assert binding.id is not None
                tx.bindings.unbind(binding.id, n, "done")


def test_lookups_use_their_index(backend: Backend, store: Store) -> None:
    _populate(store, 1_000)
    if backend.name == "sqlite":
        backend.rows("ANALYZE")
    else:
        backend.rows("ANALYZE subagent_runs, announce_inbox, tasks, thread_bindings")
    for query, index in PLANS:
        if backend.name == "sqlite":
            rows = backend.rows(f"EXPLAIN QUERY PLAN {query}")
            plan = " ".join(str(row[-1]) for row in rows)
        else:
            plan = " ".join(str(row[0]) for row in backend.rows(f"EXPLAIN {query}"))
        assert index in plan, (query, plan)
