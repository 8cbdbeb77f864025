"""TaskRegistry: creation and dedupe, lifecycle events, commands, lookups, listing, summary."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from clawline.errors import InvalidCursor, InvalidField, InvalidSessionKey
from clawline.events import DomainEvent, DomainEvents, TaskChanged
from clawline.records.task import InvalidTaskTransition, TaskNotFound, TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TASK_RETENTION_MS, TaskRegistry
from clawline.testing import FakeClock

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:c1"
START = 1_790_000_000_000


def spawn(registry: TaskRegistry, n: int = 1, **options: object) -> TaskRecord:
    """A sub-agent task like the one sessions_spawn writes."""
    arguments: dict[str, object] = {
        "runtime": "subagent",
        "task": f"task {n}",
        "requester_session_key": MAIN,
        "child_session_key": f"agent:main:subagent:c{n}",
        "run_id": f"run-{n}",
        "running": True,
    }
    arguments.update(options)
    return registry.create(**arguments)  # type: ignore[arg-type]


def dump(store: SQLiteStore) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(store.location) as db:
        return {
            table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("tasks", "task_events")
        }


# --- creation ----------------------------------------------------------------------------


def test_create_fills_openclaw_defaults(registry: TaskRegistry) -> None:
    task = spawn(registry, label="researcher")
    assert task == TaskRecord(
        task_id=task.task_id,
        runtime="subagent",
        requester_session_key=MAIN,
        owner_key=MAIN,
        scope_kind="session",
        task="task 1",
        status="running",
        delivery_status="pending",
        notify_policy="done_only",
        created_at=START,
        child_session_key="agent:main:subagent:c1",
        agent_id="main",
        run_id="run-1",
        label="researcher",
        started_at=START,
        last_event_at=START,
    )
    assert len(task.task_id) == 36  # a uuid
    assert registry.get(task.task_id) == task
    assert [(e.kind, e.at) for e in registry.events(task.task_id)] == [("running", START)]


def test_cli_and_cron_tasks_are_silent_and_queued_by_default(registry: TaskRegistry) -> None:
    cli = registry.create(runtime="cli", task="hello", requester_session_key=MAIN)
    assert (cli.status, cli.notify_policy, cli.delivery_status, cli.started_at) == (
        "queued",
        "silent",
        "not_applicable",
        None,
    )
    cron = registry.create(
        runtime="cron",
        task="nightly",
        requester_session_key="",
        scope_kind="system",
        owner_key="system:cron",
        notify_policy="done_only",
    )
    assert (cron.delivery_status, cron.owner_key, cron.agent_id) == (
        "parent_missing",
        "system:cron",
        None,
    )
    acp = registry.create(
        runtime="acp",
        task="t",
        requester_session_key=MAIN,
        child_session_key="agent:codex:acp:1",
        task_id="xworkmate-r1",
    )
    assert (acp.task_id, acp.agent_id, acp.notify_policy) == ("xworkmate-r1", "codex", "done_only")


def test_creation_dedupes_against_the_same_task(registry: TaskRegistry, clock: FakeClock) -> None:
    first = spawn(registry)
    clock.advance(10)
    assert spawn(registry) == first
    assert spawn(registry, label="other").task_id != first.task_id
    assert spawn(registry, task="different").task_id != first.task_id
    assert spawn(registry, run_id="run-2").task_id != first.task_id
    assert len(registry.for_owner(MAIN)) == 4
    assert [e.kind for e in registry.events(first.task_id)] == ["running"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"runtime": "shell"}, "invalid runtime: 'shell' (use one of subagent, acp, cli, cron)"),
        ({"task": "  "}, "invalid task: expected a non-empty string"),
        ({"task": 5}, "invalid task: expected a non-empty string"),
        ({"scope_kind": "global"}, "invalid scopeKind: 'global' (use one of session, system)"),
        (
            {"notify_policy": "loud"},
            "invalid notifyPolicy: 'loud' (use one of done_only, state_changes, silent)",
        ),
        (
            {"delivery_status": "sent"},
            "invalid deliveryStatus: 'sent' (use one of pending, "
            "delivered, session_queued, failed, parent_missing, not_applicable)",
        ),
        ({"label": "x" * 513}, "invalid label: longer than 512 characters"),
        ({"task_id": ""}, "invalid taskId: expected a non-empty string"),
        (
            {"requester_session_key": None},
            "invalid requesterSessionKey: expected a non-empty string",
        ),
    ],
)
def test_bad_creation_input_is_refused_and_writes_nothing(
    registry: TaskRegistry, store: SQLiteStore, options: dict[str, object], message: str
) -> None:
    before = dump(store)
    with pytest.raises(InvalidField) as error:
        spawn(registry, 1, **options)
    assert str(error.value) == message
    assert dump(store) == before


# --- lifecycle events ------------------------------------------------------------------------


def test_a_task_runs_reports_progress_and_succeeds(
    registry: TaskRegistry, clock: FakeClock
) -> None:
    task = registry.create(runtime="subagent", task="t", requester_session_key=MAIN)
    clock.advance(1_000)
    started = registry.start(task.task_id)
    assert (started.status, started.started_at, started.last_event_at) == (
        "running",
        START + 1_000,
        START + 1_000,
    )
    assert registry.start(task.task_id) == started  # a repeated start changes nothing
    clock.advance(1_000)
    progressed = registry.progress(task.task_id, "half way")
    assert (progressed.progress_summary, progressed.last_event_at) == ("half way", START + 2_000)
    clock.advance(1_000)
    done = registry.finish(task.task_id, "succeeded", summary="all good", outcome="succeeded")
    end = START + 3_000
    assert (done.status, done.ended_at, done.cleanup_after, done.terminal_summary) == (
        "succeeded",
        end,
        end + TASK_RETENTION_MS,
        "all good",
    )
    assert done.terminal_outcome == "succeeded"
    assert registry.get(task.task_id) == done
    assert [(e.seq, e.kind, e.summary) for e in registry.events(task.task_id)] == [
        (1, "queued", None),
        (2, "running", None),
        (3, "progress", "half way"),
        (4, "succeeded", "all good"),
    ]


@pytest.mark.parametrize("status", ["failed", "timed_out", "cancelled", "lost"])
def test_finish_with_other_terminal_statuses(registry: TaskRegistry, status: str) -> None:
    task = spawn(registry)
    ended = registry.finish(task.task_id, status, error="it broke")
    assert (ended.status, ended.error, ended.terminal_summary) == (status, "it broke", None)


def test_terminal_tasks_ignore_lifecycle_events(
    registry: TaskRegistry, store: SQLiteStore, clock: FakeClock
) -> None:
    task = spawn(registry)
    cancelled = registry.cancel(task.task_id, reason="operator")
    before = dump(store)
    clock.advance(5_000)
    assert registry.start(task.task_id) == cancelled
    assert registry.progress(task.task_id, "late") == cancelled
    assert registry.finish(task.task_id, "succeeded", summary="late") == cancelled
    assert registry.finish(task.task_id, "failed", error="late") == cancelled
    assert dump(store) == before


def test_a_queued_task_cannot_succeed_without_running(
    registry: TaskRegistry, store: SQLiteStore
) -> None:
    task = registry.create(runtime="cli", task="t", requester_session_key=MAIN)
    before = dump(store)
    with pytest.raises(InvalidTaskTransition) as error:
        registry.finish(task.task_id, "succeeded")
    assert str(error.value) == f"invalid task transition: queued -> succeeded (task {task.task_id})"
    assert dump(store) == before
    failed = registry.finish(task.task_id, "failed", error="could not start")
    assert (failed.status, failed.started_at) == ("failed", None)


def test_finish_needs_a_terminal_status(registry: TaskRegistry) -> None:
    task = spawn(registry)
    with pytest.raises(InvalidField) as error:
        registry.finish(task.task_id, "running")
    assert str(error.value) == (
        "invalid status: 'running' (finish needs one of succeeded, failed, timed_out, "
        "cancelled, lost)"
    )
    with pytest.raises(InvalidField):
        registry.finish(task.task_id, "succeeded", outcome="great")


# --- commands --------------------------------------------------------------------------------


def test_cancel_a_queued_or_running_task(registry: TaskRegistry) -> None:
    queued = registry.create(runtime="cli", task="q", requester_session_key=MAIN)
    running = spawn(registry)
    assert registry.cancel(queued.task_id).status == "cancelled"
    cancelled = registry.cancel(running.task_id, reason="no longer needed")
    assert (cancelled.status, cancelled.terminal_summary) == ("cancelled", "no longer needed")
    assert registry.events(running.task_id)[-1].summary == "no longer needed"


@pytest.mark.parametrize("status", ["succeeded", "failed", "timed_out", "cancelled", "lost"])
def test_commands_on_a_terminal_task_raise(
    registry: TaskRegistry, store: SQLiteStore, status: str
) -> None:
    task = spawn(registry)
    registry.finish(task.task_id, status)
    before = dump(store)
    with pytest.raises(InvalidTaskTransition) as error:
        registry.cancel(task.task_id)
    assert (
        str(error.value) == f"invalid task transition: {status} -> cancelled (task {task.task_id})"
    )
    with pytest.raises(InvalidTaskTransition):
        registry.mark_lost(task.task_id, "gone")
    assert dump(store) == before


def test_unknown_tasks(registry: TaskRegistry) -> None:
    actions: list[Callable[[], object]] = [
        lambda: registry.start("nope"),
        lambda: registry.progress("nope", "x"),
        lambda: registry.finish("nope", "failed"),
        lambda: registry.cancel("nope"),
        lambda: registry.mark_lost("nope", "gone"),
        lambda: registry.set_delivery("nope", "delivered"),
        lambda: registry.require("nope"),
    ]
    for action in actions:
        with pytest.raises(TaskNotFound) as error:
            action()
        assert str(error.value) == "task not found: nope"
    assert registry.get("nope") is None
    assert registry.delete("nope") is False


def test_set_delivery_and_delete(registry: TaskRegistry) -> None:
    task = spawn(registry)
    delivered = registry.set_delivery(task.task_id, "delivered")
    assert delivered.delivery_status == "delivered"
    assert registry.set_delivery(task.task_id, "delivered") == delivered
    with pytest.raises(InvalidField):
        registry.set_delivery(task.task_id, "somewhere")
    assert registry.delete(task.task_id) is True
    assert registry.get(task.task_id) is None
    assert registry.events(task.task_id) == []


# --- transactions ----------------------------------------------------------------------------


def test_writes_join_a_caller_transaction(registry: TaskRegistry, store: SQLiteStore) -> None:
    task = spawn(registry)
    before = dump(store)

    def end_then_fail() -> None:
        with store.transaction() as tx:
            registry.finish(task.task_id, "succeeded", tx=tx)
            registry.create(runtime="cli", task="x", requester_session_key=MAIN, tx=tx)
            raise RuntimeError("the run's end could not be written")

    with pytest.raises(RuntimeError):
        end_then_fail()
    assert dump(store) == before
    with store.transaction() as tx:
        finished = registry.finish(task.task_id, "succeeded", tx=tx)
    assert registry.get(task.task_id) == finished


# --- lookups -----------------------------------------------------------------------------


def test_lookups(registry: TaskRegistry, clock: FakeClock) -> None:
    a = spawn(registry, 1)
    clock.advance(1)
    b = spawn(registry, 2, requester_session_key="agent:main:other", owner_key="agent:main:other")
    clock.advance(1)
    c = spawn(registry, 3, child_session_key=MAIN, run_id="run-1", agent_id="reviewer")
    clock.advance(1)
    d = registry.create(
        runtime="cli", task="t", requester_session_key=MAIN, parent_flow_id="flow-1"
    )
    assert registry.by_run_id("run-1") == c
    assert registry.by_run_id("run-9") is None
    assert registry.for_session(MAIN) == [d, c, a]
    assert registry.for_session("agent:main:subagent:c2") == [b]
    assert registry.latest_for_session(MAIN) == d
    assert registry.latest_for_session("agent:main:none") is None
    assert registry.for_owner("agent:main:other") == [b]
    assert registry.for_agent("reviewer") == [c]
    assert registry.for_agent("main") == [d, b, a]
    assert registry.for_flow("flow-1") == [d]


def test_resolve_tries_id_then_run_then_session(
    registry: TaskRegistry, catalog: SessionCatalog, clock: FakeClock
) -> None:
    a = spawn(registry, 1)
    clock.advance(1)
    b = spawn(registry, 2, run_id=a.task_id)  # a run id equal to another task's id
    clock.advance(1)
    c = spawn(registry, 3, run_id="agent:main:subagent:c1")  # a run id equal to a session key
    assert registry.resolve(a.task_id) == a
    assert registry.resolve(f"  {b.task_id}  ") == b
    assert registry.resolve("run-1") == a
    assert registry.resolve("agent:main:subagent:c1") == c
    assert registry.resolve("agent:main:subagent:c2") == b
    assert registry.resolve(MAIN) == c
    assert registry.resolve("main") is None
    assert registry.resolve("main", canonical=catalog.canonical) == c
    assert registry.resolve("bad key", canonical=catalog.canonical) is None
    assert registry.resolve("   ") is None
    with pytest.raises(TaskNotFound) as error:
        registry.require_token("nothing")
    assert str(error.value) == "task not found: nothing"
    with pytest.raises(InvalidSessionKey):
        catalog.canonical("bad key")


def test_list_pages_with_filters_and_signed_cursors(
    registry: TaskRegistry, clock: FakeClock, tmp_path: Path
) -> None:
    made = []
    for n in range(7):
        made.append(spawn(registry, n, runtime="cli" if n % 2 else "subagent"))
        if n % 3 == 0:
            registry.finish(made[-1].task_id, "failed")
        clock.advance(1 if n % 2 else 0)
    newest_first = sorted(made, key=lambda t: (t.created_at, t.task_id), reverse=True)
    seen: list[str] = []
    cursor = None
    while True:
        page = registry.list(limit=3, cursor=cursor)
        seen.extend(t.task_id for t in page.tasks)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [t.task_id for t in newest_first]
    cli = registry.list(runtime="cli", limit=100)
    assert {t.task_id for t in cli.tasks} == {made[n].task_id for n in (1, 3, 5)}
    failed = registry.list(status="failed", runtime="subagent")
    assert {t.task_id for t in failed.tasks} == {made[n].task_id for n in (0, 6)}
    assert len(registry.list(owner_key=MAIN).tasks) == 7
    assert registry.list(session_key="agent:main:subagent:c4").tasks == [
        registry.get(made[4].task_id)
    ]
    first = registry.list(limit=2)
    assert first.next_cursor is not None
    with pytest.raises(InvalidCursor) as error:
        registry.list(limit=2, cursor=first.next_cursor, status="failed")
    assert str(error.value) == "invalid cursor: it belongs to a different query"
    other = TaskRegistry(SQLiteStore(tmp_path / "other.db"), clock=clock)
    with pytest.raises(InvalidCursor) as error:
        other.list(cursor=first.next_cursor)
    assert "signature mismatch" in str(error.value)
    other.store.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limit": 0}, "invalid limit (use an integer from 1 to 1000)"),
        ({"limit": 1001}, "invalid limit (use an integer from 1 to 1000)"),
        ({"limit": True}, "invalid limit (use an integer from 1 to 1000)"),
        (
            {"status": "done"},
            "invalid status: 'done' (use one of queued, running, succeeded, "
            "failed, timed_out, cancelled, lost)",
        ),
        ({"runtime": "x"}, "invalid runtime: 'x' (use one of subagent, acp, cli, cron)"),
    ],
)
def test_list_refuses_bad_filters(
    registry: TaskRegistry, options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidField) as error:
        registry.list(**options)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_summary(registry: TaskRegistry) -> None:
    empty = registry.summary().to_json()
    assert (empty["total"], empty["active"], empty["terminal"], empty["failures"]) == (0, 0, 0, 0)
    spawn(registry, 1)
    registry.create(runtime="cli", task="q", requester_session_key=MAIN)
    for n, status in enumerate(["succeeded", "failed", "timed_out", "lost", "cancelled"], 2):
        registry.finish(spawn(registry, n, runtime="acp").task_id, status)
    summary = registry.summary().to_json()
    assert summary == {
        "total": 7,
        "active": 2,
        "terminal": 5,
        "failures": 3,
        "byStatus": {
            "queued": 1,
            "running": 1,
            "succeeded": 1,
            "failed": 1,
            "timed_out": 1,
            "cancelled": 1,
            "lost": 1,
        },
        "byRuntime": {"subagent": 1, "acp": 5, "cli": 1, "cron": 0},
    }


def test_every_committed_change_is_published_as_task_changed(
    store: SQLiteStore, clock: FakeClock
) -> None:
    events = DomainEvents()
    heard: list[DomainEvent] = []
    events.subscribe(heard.append)
    registry = TaskRegistry(store, clock=clock, events=events)
    task = spawn(registry)
    registry.start(task.task_id)  # already running: nothing written, nothing told
    registry.progress(task.task_id, "halfway")
    registry.set_delivery(task.task_id, "delivered")
    registry.finish(task.task_id, "succeeded", summary="done")
    registry.finish(task.task_id, "failed")  # terminal: ignored, nothing told
    told = [event.task for event in heard if isinstance(event, TaskChanged)]
    assert len(told) == len(heard) == 4
    assert [(t.status, t.progress_summary, t.delivery_status) for t in told] == [
        ("running", None, task.delivery_status),
        ("running", "halfway", task.delivery_status),
        ("running", "halfway", "delivered"),
        ("succeeded", "halfway", "delivered"),
    ]
    assert told[-1] == registry.require(task.task_id)
    second = spawn(registry, 2)
    heard.clear()

    def cancel_then_roll_back() -> None:
        with store.transaction() as tx:
            registry.cancel(second.task_id, tx=tx)
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError, match="rolled back"):
        cancel_then_roll_back()
    assert heard == []
    assert registry.require(second.task_id).status == "running"
