"""The sweeper: retention of terminal tasks and lost-task detection, on a fake clock."""

from __future__ import annotations

from pathlib import Path

from clawline.config import Settings
from clawline.records.task import TaskRecord
from clawline.runtime import Runtime
from clawline.sessions.catalog import SessionCatalog
from clawline.tasks.registry import TASK_RETENTION_MS, TaskRegistry
from clawline.tasks.sweeper import (
    LOST_ERROR,
    LOST_GRACE_MS,
    SWEEP_INTERVAL_MS,
    SweepResult,
    sweep,
)
from clawline.testing import FakeClock, drained, eventually

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


async def test_the_runtime_sweeps_tasks_every_interval(tmp_path: Path) -> None:
    """The task sweep runs in the runtime's background task group: a pass at start-up, then
    one every SWEEP_INTERVAL_MS of the runtime's clock (virtual time here)."""
    clock = FakeClock()
    runtime = Runtime.open(Settings(state_dir=tmp_path), clock=clock)
    try:
        registry = runtime.tasks
        first = registry.create(runtime="cli", task="t", requester_session_key="agent:main:gone")
        clock.advance(LOST_GRACE_MS)
        await runtime.start()
        await eventually(lambda: registry.require(first.task_id).status == "lost")
        # The first pass ends and its loop goes to sleep on the clock before time moves on: a
        # clock moved while the pass still runs would leave the next one a full interval away.
        await drained(runtime)
        second = registry.create(runtime="cli", task="u", requester_session_key="agent:main:gone")
        await clock.run_for(LOST_GRACE_MS + SWEEP_INTERVAL_MS)
        await eventually(lambda: registry.require(second.task_id).status == "lost")
        assert registry.require(second.task_id).error == LOST_ERROR
        await runtime.stop()
    finally:
        runtime.close()
