"""``store.tasks`` / ``tx.tasks``: rows, events, listing, sweeping queries."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.errors import Conflict
from clawline.records.task import TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.store.collab import TaskQuery
from clawline.store.cursor import Position

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"


def make_task(n: int, **changes: object) -> TaskRecord:
    base = TaskRecord(
        task_id=f"t{n:03d}",
        runtime="subagent",
        requester_session_key=MAIN,
        owner_key=MAIN,
        scope_kind="session",
        task=f"task {n}",
        status="running",
        delivery_status="pending",
        notify_policy="done_only",
        created_at=1_000 + n,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def insert(store: Store, *tasks: TaskRecord) -> None:
    with store.transaction() as tx:
        for task in tasks:
            tx.tasks.insert(task)


def ids(tasks: list[TaskRecord]) -> list[str]:
    return [task.task_id for task in tasks]


def test_a_task_round_trips_every_field(store: Store) -> None:
    task = TaskRecord(
        task_id="0c1d2e3f-aaaa-4bbb-8ccc-000000000001",
        runtime="acp",
        requester_session_key=MAIN,
        owner_key="owner ✓",
        scope_kind="session",
        task='do "it" — ünïcode\nsecond line',
        status="failed",
        delivery_status="parent_missing",
        notify_policy="state_changes",
        created_at=1,
        task_kind="xworkmate-openclaw",
        source_id="src",
        child_session_key="agent:codex:acp:1",
        parent_flow_id="flow-1",
        parent_task_id="parent-1",
        agent_id="codex",
        run_id="run-1",
        label="label",
        started_at=2,
        ended_at=3,
        last_event_at=4,
        cleanup_after=5,
        error="boom",
        progress_summary="half",
        terminal_summary="done-ish",
        terminal_outcome="blocked",
    )
    insert(store, task)
    assert store.tasks.get(task.task_id) == task
    with store.transaction() as tx:
        assert tx.tasks.get(task.task_id) == task
        assert tx.tasks.get("nope") is None
    assert store.tasks.get("nope") is None


def test_a_taken_id_is_a_conflict_and_the_transaction_goes_on(store: Store) -> None:
    insert(store, make_task(1))
    with store.transaction() as tx:
        with pytest.raises(Conflict) as error:
            tx.tasks.insert(make_task(1, task="other"))
        assert str(error.value) == "task already exists: t001"
        tx.tasks.insert(make_task(2))
    assert store.tasks.get("t001") == make_task(1)
    assert store.tasks.get("t002") == make_task(2)


def test_update_rewrites_every_field_but_the_id(store: Store) -> None:
    insert(store, make_task(1), make_task(2))
    changed = replace(
        make_task(1, status="succeeded", ended_at=9, cleanup_after=99, terminal_summary="ok"),
        runtime="cli",
        label="l",
    )
    with store.transaction() as tx:
        tx.tasks.update(changed)
    assert store.tasks.get("t001") == changed
    assert store.tasks.get("t002") == make_task(2)


def test_set_delivery_many_changes_only_the_tasks_named(store: Store) -> None:
    insert(store, make_task(1), make_task(2), make_task(3, delivery_status="delivered"))
    with store.transaction() as tx:
        tx.tasks.set_delivery_many(["t001", "t003", "t001", "missing"], "session_queued")
        tx.tasks.set_delivery_many([], "delivered")  # nothing to do
    assert store.tasks.get("t001") == make_task(1, delivery_status="session_queued")
    assert store.tasks.get("t002") == make_task(2)
    assert store.tasks.get("t003") == make_task(3, delivery_status="session_queued")


def test_events_count_per_task_and_go_with_their_task(store: Store) -> None:
    insert(store, make_task(1), make_task(2))
    with store.transaction() as tx:
        first = tx.tasks.add_event("t001", 10, "running", None)
        tx.tasks.add_event("t002", 11, "running", None)
        tx.tasks.add_event("t001", 12, "progress", "half way")
        last = tx.tasks.add_event("t001", 13, "succeeded", "done")
    assert (first.seq, last.seq) == (1, 3)
    events = store.tasks.events("t001")
    assert [(e.seq, e.at, e.kind, e.summary) for e in events] == [
        (1, 10, "running", None),
        (2, 12, "progress", "half way"),
        (3, 13, "succeeded", "done"),
    ]
    assert events[-1] == last
    assert [e.seq for e in store.tasks.events("t002")] == [1]
    with store.transaction() as tx:
        assert tx.tasks.delete("t001") is True
        assert tx.tasks.delete("t001") is False
    assert store.tasks.get("t001") is None
    assert store.tasks.events("t001") == []
    assert [e.seq for e in store.tasks.events("t002")] == [1]


def test_by_run_id_newest_first(store: Store) -> None:
    insert(
        store,
        make_task(1, run_id="r"),
        make_task(3, run_id="r"),
        make_task(2, run_id="other"),
        make_task(4),
    )
    assert ids(store.tasks.by_run_id("r")) == ["t003", "t001"]
    assert store.tasks.by_run_id("none") == []


CHILD = "agent:main:subagent:c"
OTHER = "agent:main:other"


def _listing_rows() -> list[TaskRecord]:
    return [
        make_task(1),
        make_task(2, status="succeeded", runtime="cli", owner_key=OTHER),
        make_task(3, child_session_key=CHILD, agent_id="main"),
        make_task(4, requester_session_key=OTHER, owner_key=OTHER, child_session_key=MAIN),
        make_task(5, status="queued", parent_flow_id="f1", agent_id="reviewer"),
        make_task(6, runtime="cli", status="failed"),
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (TaskQuery(), ["t006", "t005", "t004", "t003", "t002", "t001"]),
        (TaskQuery(status="running"), ["t004", "t003", "t001"]),
        (TaskQuery(runtime="cli"), ["t006", "t002"]),
        (TaskQuery(runtime="cli", status="failed"), ["t006"]),
        (TaskQuery(owner_key=OTHER), ["t004", "t002"]),
        (TaskQuery(session_key=MAIN), ["t006", "t005", "t004", "t003", "t002", "t001"]),
        (TaskQuery(session_key=OTHER), ["t004"]),
        (TaskQuery(session_key=CHILD), ["t003"]),
        (TaskQuery(agent_id="reviewer"), ["t005"]),
        (TaskQuery(parent_flow_id="f1"), ["t005"]),
        (TaskQuery(status="lost"), []),
        (TaskQuery(owner_key=MAIN, status="running", runtime="subagent"), ["t003", "t001"]),
    ],
)
def test_page_filters(store: Store, query: TaskQuery, expected: list[str]) -> None:
    insert(store, *_listing_rows())
    page = store.tasks.page(query, None, 100)
    assert ids(page.tasks) == expected
    assert page.next is None


def test_keyset_walk_covers_every_task_once_ties_included(store: Store) -> None:
    # Many tasks share a creation time: the task id breaks ties.
    tasks = [make_task(n, created_at=1_000 + n // 4) for n in range(23)]
    insert(store, *tasks)
    seen: list[str] = []
    after: Position | None = None
    pages = 0
    while True:
        page = store.tasks.page(TaskQuery(), after, 5)
        seen.extend(ids(page.tasks))
        pages += 1
        if page.next is None:
            break
        assert page.next == Position(page.tasks[-1].created_at, page.tasks[-1].task_id)
        after = page.next
    expected = sorted(tasks, key=lambda t: (t.created_at, t.task_id), reverse=True)
    assert seen == ids(expected)
    assert pages == 5


def test_a_page_that_ends_exactly_has_no_next(store: Store) -> None:
    insert(store, *(make_task(n) for n in range(4)))
    first = store.tasks.page(TaskQuery(), None, 4)
    assert len(first.tasks) == 4
    assert first.next is None


def test_counts_group_by_status_and_runtime(store: Store) -> None:
    assert store.tasks.counts() == {}
    insert(store, *_listing_rows())
    assert store.tasks.counts() == {
        ("running", "subagent"): 3,
        ("succeeded", "cli"): 1,
        ("queued", "subagent"): 1,
        ("failed", "cli"): 1,
    }


def test_delete_expired_takes_terminal_due_tasks_oldest_first(store: Store) -> None:
    insert(
        store,
        make_task(1, status="succeeded", cleanup_after=100),
        make_task(2, status="failed", cleanup_after=50),
        make_task(3, status="cancelled", cleanup_after=100),
        make_task(4, status="lost", cleanup_after=101),
        make_task(5, status="running", cleanup_after=10),  # not terminal: kept
        make_task(6, status="timed_out"),  # no cleanup time: kept
    )
    with store.transaction() as tx:
        tx.tasks.add_event("t002", 1, "failed", None)
        assert tx.tasks.delete_expired(100, 2) == ["t001", "t002"]
    with store.transaction() as tx:
        assert tx.tasks.delete_expired(100, 10) == ["t003"]
        assert tx.tasks.delete_expired(100, 10) == []
    assert ids(store.tasks.page(TaskQuery(), None, 10).tasks) == ["t006", "t005", "t004"]
    assert store.tasks.events("t002") == []


def test_orphaned_finds_quiet_active_tasks_without_their_session(
    store: Store, catalog: SessionCatalog
) -> None:
    catalog.patch("agent:main:alive", {})
    gone = "agent:main:subagent:gone"
    insert(
        store,
        make_task(1, child_session_key=gone, last_event_at=500),
        make_task(2, child_session_key="agent:main:alive", last_event_at=500),
        make_task(3, child_session_key=gone, last_event_at=2_000),  # active recently
        make_task(4, child_session_key=gone, status="succeeded", last_event_at=500),
        make_task(5, requester_session_key="agent:main:gone-too", owner_key="x"),
        make_task(6, scope_kind="system", requester_session_key=""),  # nothing backs it
        make_task(7, status="queued", child_session_key=gone, started_at=None),
        make_task(8, requester_session_key="agent:main:alive", owner_key="x"),
    )
    found = store.tasks.orphaned(idle_since=1_005, limit=10)
    assert ids(found) == ["t001", "t005"]
    assert ids(store.tasks.orphaned(idle_since=1_010, limit=10)) == ["t001", "t005", "t007"]
    assert ids(store.tasks.orphaned(idle_since=1_010, limit=1)) == ["t001"]
    assert store.tasks.orphaned(idle_since=499, limit=10) == []


def test_find_duplicate_matches_every_identity_field_nulls_included(store: Store) -> None:
    base = make_task(1, child_session_key=CHILD, run_id="r1", label=None)
    labelled_twin = make_task(2, child_session_key=CHILD, run_id="r1", label="x", task="task 1")
    insert(store, base, labelled_twin)
    with store.transaction() as tx:
        assert tx.tasks.find_duplicate(replace(base, task_id="new", status="queued")) == base
        for change in (
            {"runtime": "acp"},
            {"owner_key": OTHER},
            {"child_session_key": None},
            {"run_id": None},
            {"run_id": "r2"},
            {"label": "y"},
            {"task": "another"},
        ):
            twin = replace(base, **change)
            assert tx.tasks.find_duplicate(twin) is None, change
        assert tx.tasks.find_duplicate(replace(base, label="x")) == labelled_twin


def test_another_store_object_sees_committed_tasks_only(backend: Backend, store: Store) -> None:
    other = backend.open()
    with store.transaction() as tx:
        tx.tasks.insert(make_task(1))
        assert other.tasks.get("t001") is None
    assert other.tasks.get("t001") == make_task(1)
