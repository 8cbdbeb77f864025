"""The sweeper: retention of terminal tasks and lost-task detection, on a fake clock."""

from __future__ import annotations

import asyncio

from clawline.errors import StoreUnavailable
from clawline.records.task import TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.tasks.registry import TASK_RETENTION_MS, TaskRegistry
from clawline.tasks.sweeper import (
    LOST_ERROR,
    LOST_GRACE_MS,
    SWEEP_INTERVAL_MS,
    SweepResult,
    sweep,
    sweep_periodically,
)
from clawline.testing import FakeClock

MAIN = "agent:main:main"
DAY = 24 * 3600 * 1000


def child_task(registry: TaskRegistry, child: str, **options: object) -> TaskRecord:
    return registry.create(
        runtime="subagent",
        task=f"work in {child}",
        requester_session_key=MAIN,
        child_session_key=child,
        running=True,
        **options,  # type: ignore[arg-type]
    )


def test_constants_are_openclaw_defaults() -> None:
    assert (TASK_RETENTION_MS, LOST_GRACE_MS, SWEEP_INTERVAL_MS) == (7 * DAY, 300_000, 60_000)


def test_terminal_tasks_are_deleted_seven_days_after_they_end(
    registry: TaskRegistry, catalog: SessionCatalog, clock: FakeClock
) -> None:
    catalog.patch("agent:main:subagent:a", {})
    done = child_task(registry, "agent:main:subagent:a")
    registry.finish(done.task_id, "succeeded")
    clock.advance(DAY)
    later = child_task(registry, "agent:main:subagent:a", label="later")
    registry.finish(later.task_id, "failed")
    running = child_task(registry, "agent:main:subagent:a", label="running")
    clock.advance(6 * DAY - 1)
    assert sweep(registry) == SweepResult()
    clock.advance(1)
    assert sweep(registry).deleted == [done.task_id]
    assert registry.get(done.task_id) is None
    assert registry.events(done.task_id) == []
    clock.advance(DAY)
    assert sweep(registry).deleted == [later.task_id]
    assert registry.get(running.task_id) == running


def test_a_batch_bounds_one_pass(registry: TaskRegistry, clock: FakeClock) -> None:
    tasks = [
        registry.create(runtime="cli", task=f"t{n}", requester_session_key="") for n in range(5)
    ]
    for task in tasks:
        registry.finish(task.task_id, "failed")
    clock.advance(8 * DAY)
    assert len(sweep(registry, batch=2).deleted) == 2
    assert len(sweep(registry, batch=2).deleted) == 2
    assert len(sweep(registry, batch=2).deleted) == 1
    assert sweep(registry, batch=2).deleted == []


def test_tasks_whose_session_vanished_become_lost_after_the_grace_period(
    registry: TaskRegistry, catalog: SessionCatalog, clock: FakeClock
) -> None:
    catalog.patch("agent:main:subagent:alive", {})
    catalog.patch("agent:main:subagent:doomed", {})
    alive = child_task(registry, "agent:main:subagent:alive")
    doomed = child_task(registry, "agent:main:subagent:doomed")
    never = child_task(registry, "agent:main:subagent:never-created")
    catalog.delete("agent:main:subagent:doomed")
    clock.advance(LOST_GRACE_MS - 1)
    registry.progress(never.task_id, "still going")  # activity restarts the grace period
    clock.advance(1)
    result = sweep(registry)
    assert [task.task_id for task in result.lost] == [doomed.task_id]
    lost = registry.require(doomed.task_id)
    assert result.lost == [lost]
    assert (lost.status, lost.error, lost.ended_at) == ("lost", LOST_ERROR, clock.now_ms())
    assert lost.cleanup_after == clock.now_ms() + TASK_RETENTION_MS
    assert registry.events(doomed.task_id)[-1].kind == "lost"
    assert registry.require(alive.task_id).status == "running"
    assert registry.require(never.task_id).status == "running"
    clock.advance(LOST_GRACE_MS)
    assert [task.task_id for task in sweep(registry).lost] == [never.task_id]
    assert sweep(registry).lost == []


def test_a_session_scoped_task_without_a_child_depends_on_its_requester(
    registry: TaskRegistry, catalog: SessionCatalog, clock: FakeClock
) -> None:
    catalog.patch("agent:main:talk", {})
    talking = registry.create(runtime="cli", task="t", requester_session_key="agent:main:talk")
    orphan = registry.create(runtime="cli", task="t", requester_session_key="agent:main:gone")
    system = registry.create(
        runtime="cron", task="t", requester_session_key="", scope_kind="system"
    )
    clock.advance(LOST_GRACE_MS)
    assert [task.task_id for task in sweep(registry).lost] == [orphan.task_id]
    assert registry.require(talking.task_id).status == "queued"
    assert registry.require(system.task_id).status == "queued"


async def test_sweep_periodically_runs_until_stopped(
    registry: TaskRegistry, clock: FakeClock
) -> None:
    task = registry.create(runtime="cli", task="t", requester_session_key="agent:main:gone")
    clock.advance(LOST_GRACE_MS)
    results: list[SweepResult] = []
    stop = asyncio.Event()
    calls = 0

    async def call(fn: object, *args: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise StoreUnavailable("database went away")  # logged; the next pass goes on
        if calls == 3:
            stop.set()
        return fn(*args)  # type: ignore[operator]

    await asyncio.wait_for(
        sweep_periodically(registry, call, stop, interval_ms=1, on_result=results.append), 5
    )
    assert calls == 3
    assert [[t.task_id for t in r.lost] for r in results] == [[task.task_id], []]
