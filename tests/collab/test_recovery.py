"""Start-up recovery (``clawline.collab.recovery``): what a crash or a shutdown mid-run left
behind is ended as lost, its requesters get a completion saying so, running sessions become
failed; then :meth:`Announcer.start` delivers every pending row exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from clawline.collab import recovery as recovery_module
from clawline.collab.completion import LOST_ERROR
from clawline.collab.recovery import Recovery
from clawline.collab.spawn_plan import ChildPlan
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from tests.collab.conftest import MakeServices
from tests.collab.support import ScriptedRunner, runner_of, transcript
from tests.collab.test_announce_support import (
    MAIN,
    Gate,
    announcing,
    child,
    entry,
    inbox_row,
    occurrences,
    quiesce,
    record,
    requester,
    run_child,
    start_child,
    task_of,
    user_messages,
)

IDLE = "agent:main:idle"


@pytest.fixture
async def make(make_services: MakeServices) -> AsyncIterator[MakeServices]:
    async with announcing(make_services) as factory:
        yield factory


@dataclass
class Crash:
    """What a crash left: children whose runs were running (entries ``running``, records and
    tasks active), MAIN mid-turn, and things that had finished properly."""

    announced: list[ChildPlan]
    silent: ChildPlan
    finished: ChildPlan


async def crash(services: Runtime, clock: FakeClock) -> Crash:
    await requester(services)
    await requester(services, IDLE, status="done")
    finished = await run_child(services, reply="finished before the crash")
    await quiesce(services)
    announced = [await child(services, reply=None, label="first")]
    clock.advance(1)
    announced.append(await child(services, reply=None, task="second task"))
    clock.advance(1)
    silent = await child(services, reply=None, expects=False)
    for plan in [*announced, silent]:
        await services.call(
            services.catalog.patch, plan.child_key, {"status": "running", "startedAt": 1}
        )
    await services.call(services.catalog.patch, MAIN, {"status": "running"})
    clock.advance(90_000 - 2)
    return Crash(announced=announced, silent=silent, finished=finished)


def snapshot(services: Runtime, state: Crash) -> list[object]:
    plans = [*state.announced, state.silent, state.finished]
    store = services.store
    return [
        [store.runs.get(plan.run_id) for plan in plans],
        [store.tasks.get(plan.task_id) for plan in plans],
        [store.inbox.by_run(plan.run_id) for plan in plans],
        [store.get(key) for key in (MAIN, IDLE, *(plan.child_key for plan in plans))],
        [event.data for event in store.events(entry(services, MAIN).session_id)],
    ]


async def test_recover_now_ends_what_a_crash_left_running(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    state = await crash(services, clock)
    finished_before = record(services, state.finished.run_id)
    now = clock.now_ms()

    result = await services.call(services.recovery.recover_now)

    lost = [*state.announced, state.silent]
    assert result == Recovery(lost=[plan.run_id for plan in lost], announced=2, sessions_failed=1)
    for plan in lost:
        ended = record(services, plan.run_id)
        assert (ended.ended_at, ended.ended_reason) == (now, "subagent-error")
        assert dict(ended.outcome or {}) == {"status": "error", "error": LOST_ERROR}
        task = task_of(services, plan)
        assert (task.status, task.error, task.ended_at) == ("lost", LOST_ERROR, now)
        child_entry = entry(services, plan.child_key)
        assert (child_entry.status, child_entry.ended_at) == ("failed", now)
        assert child_entry.extra.get("abortedLastRun") is True
    assert task_of(services, state.silent).delivery_status == "not_applicable"
    assert services.store.inbox.by_run(state.silent.run_id) is None

    first, second = (inbox_row(services, plan.run_id) for plan in state.announced)
    assert first.id < second.id
    expected = ((first, "task: first", "1m 30s"), (second, "task: second task", "1m 29s"))
    for row, task_line, runtime in expected:
        assert (row.requester_session_key, row.status, row.created_at) == (MAIN, "lost", now)
        assert row.pending
        text = str(row.payload["text"])
        lines = text.split("\n")
        assert task_line in lines
        assert f"status: failed: {LOST_ERROR}" in lines
        assert "<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>\n(no output)\n" in text
        assert any(line.startswith(f"Stats: runtime {runtime} • sessionKey ") for line in lines)

    main = entry(services, MAIN)
    assert (main.status, main.ended_at, main.extra.get("abortedLastRun")) == ("failed", now, True)
    assert entry(services, IDLE).status == "done"
    assert record(services, state.finished.run_id) == finished_before
    assert task_of(services, state.finished).delivery_status == "delivered"


async def test_recovery_twice_changes_nothing_the_second_time(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    state = await crash(services, clock)
    await services.call(services.recovery.recover_now)
    after_first = snapshot(services, state)
    clock.advance(5_000)
    again = await services.call(services.recovery.recover_now)
    assert again == Recovery(lost=[], announced=0, sessions_failed=0)
    assert snapshot(services, state) == after_first


async def test_start_recovers_then_delivers_every_pending_row_once(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    state = await crash(services, clock)
    runner_of(services).script(MAIN, "two children were lost")
    before = len(user_messages(services))
    await services.announcer.start()
    await quiesce(services)

    rows = [inbox_row(services, plan.run_id) for plan in state.announced]
    assert rows[0].delivery_seq is not None
    assert rows[0].delivery_seq == rows[1].delivery_seq  # together, in one turn
    assert [task_of(services, p).delivery_status for p in state.announced] == ["delivered"] * 2
    delivered = user_messages(services)[before:]
    assert len(delivered) == 1
    assert delivered[0]["internalEvents"] == [row.payload["event"] for row in rows]
    completion_turns = runner_of(services).calls_on(MAIN)[1:]  # [0]: the finished child's
    assert [turn.run_id for turn in completion_turns] == [f"announce:{rows[0].id}-{rows[1].id}"]
    assert entry(services, MAIN).status == "done"  # its announce turn ran

    after = snapshot(services, state)
    assert await services.call(services.recovery.recover_now) == Recovery([], 0, 0)
    await services.announcer.tick()
    await quiesce(services)
    assert snapshot(services, state) == after
    assert len(runner_of(services).calls_on(MAIN)) == 2


async def restarted(services: Runtime, clock: FakeClock) -> Runtime:
    """Another process on the same store (the gateway after a restart)."""
    again = Runtime.open(services.settings, clock=clock)
    again.runs.runner = ScriptedRunner("acknowledged")
    return again


async def close(services: Runtime) -> None:
    await services.runs.shutdown()
    await services.announcer.stop()
    services.close()


async def test_a_restart_after_a_crash_delivers_the_lost_completions_once(
    make: MakeServices,
) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    state = await crash(services, clock)
    first = await restarted(services, clock)
    try:
        await first.announcer.start()
        await quiesce(first)
    finally:
        await close(first)
    rows = [inbox_row(services, plan.run_id) for plan in state.announced]
    assert all(row.delivery_seq is not None for row in rows)
    markers = [f"\nstatus: failed: {LOST_ERROR}\n"]
    assert occurrences(services, markers) == [1]  # one message carrying both events
    assert "task: first\n" in text_of_last_completion(services)
    after = snapshot(services, state)

    second = await restarted(services, clock)
    try:
        await second.announcer.start()
        await quiesce(second)
        assert isinstance(second.runs.runner, ScriptedRunner)
        assert second.runs.runner.calls == []
    finally:
        await close(second)
    assert snapshot(services, state) == after


def text_of_last_completion(services: Runtime) -> str:
    messages = [m for m in user_messages(services) if "internalEvents" in m]
    content = messages[-1]["content"]
    assert isinstance(content, list)
    first = content[0]
    assert isinstance(first, dict)
    return str(first["text"])


async def test_a_shutdown_mid_run_is_recovered_as_lost_on_the_next_start(
    make: MakeServices,
) -> None:
    """A graceful shutdown aborts running children without announcing them; the next start
    finds their records active and ends them as lost, with a completion for the requester."""
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    gate = Gate("cut off")
    plan = await child(services, reply=gate)
    await start_child(services, plan)
    await asyncio.wait_for(gate.entered.wait(), 5)
    await services.runs.shutdown()
    assert record(services, plan.run_id).active
    assert task_of(services, plan).status == "running"
    assert services.store.inbox.by_run(plan.run_id) is None

    later = await restarted(services, clock)
    try:
        await later.announcer.start()
        await quiesce(later)
    finally:
        await close(later)
    assert task_of(services, plan).status == "lost"
    row = inbox_row(services, plan.run_id)
    assert (row.status, row.delivery_seq is not None) == ("lost", True)
    assert entry(services, plan.child_key).status == "failed"
    assert occurrences(services, [f"\nstatus: failed: {LOST_ERROR}\n"]) == [1]
    assert [m.get("role") for m in transcript(services, MAIN)] == ["user", "assistant"]


async def test_recovery_works_through_many_records_in_batches(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recovery_module, "RECOVERY_BATCH", 2)
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    plans = []
    for n in range(5):
        plans.append(await child(services, reply=None, task=f"job {n}"))
        clock.advance(1)
    others = [f"agent:main:busy-{n}" for n in range(5)]
    for key in others:
        await requester(services, key, status="running")
    result = await services.call(services.recovery.recover_now)
    assert result.lost == [plan.run_id for plan in plans]
    assert (result.announced, result.sessions_failed) == (5, 5)
    assert [task_of(services, plan).status for plan in plans] == ["lost"] * 5
    assert [entry(services, key).status for key in others] == ["failed"] * 5
    assert services.store.runs.active() == []
    assert len(services.store.inbox.pending_for(MAIN)) == 5
