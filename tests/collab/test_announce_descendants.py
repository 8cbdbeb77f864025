"""As in OpenClaw, an orchestrator is announced to its requester only once its own children have
settled, with the reply of its latest turn (the one that read their completions)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from clawline.agents.runner import RunContext
from clawline.collab.completion import STOPPED_ERROR
from clawline.collab.spawn_plan import ChildPlan
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from tests.collab.conftest import MakeServices
from tests.collab.support import Reply, runner_of
from tests.collab.test_announce_support import (
    MAIN,
    Gate,
    announcing,
    child,
    eventually,
    inbox_row,
    quiesce,
    record,
    requester,
    start_child,
    task_of,
    user_messages,
)
from tests.collab.test_recovery import close, restarted

DEPTH_TWO = {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}}


def spawning(
    services: Runtime, holder: list[ChildPlan], reply: Reply
) -> Callable[[RunContext], Awaitable[str]]:
    """An orchestrator turn that creates and starts a grandchild, then answers at once."""

    async def turn(ctx: RunContext) -> str:
        grandchild = await child(
            services, ctx.session_key, reply=reply, task="dig deeper", max_depth=2
        )
        await start_child(services, grandchild)
        holder.append(grandchild)
        return "orchestrator: dispatched"

    return turn


async def test_the_requester_hears_the_orchestrator_after_its_children(
    make_services: MakeServices,
) -> None:
    async with announcing(make_services) as make:
        services = await make(DEPTH_TWO)
        await requester(services)
        gate = Gate("grandchild found it")
        grandchildren: list[ChildPlan] = []
        orchestrator = await child(services, reply=None, task="lead the search", max_depth=2)
        runner_of(services).script(
            orchestrator.child_key,
            spawning(services, grandchildren, gate),
            "orchestrator: final answer from the grandchild's result",
        )
        await start_child(services, orchestrator)
        await gate.entered.wait()
        await quiesce_except_gate(services, orchestrator)

        # Its first turn is over, but its child still runs: no announce yet.
        assert record(services, orchestrator.run_id).active
        assert services.store.inbox.by_run(orchestrator.run_id) is None
        assert orchestrator.child_key in services.subagents.deferred()

        gate.open()
        await eventually(lambda: not record(services, orchestrator.run_id).active)
        await quiesce(services)

        ended = record(services, orchestrator.run_id)
        assert ended.frozen_result_text == "orchestrator: final answer from the grandchild's result"
        row = inbox_row(services, orchestrator.run_id)
        assert row.requester_session_key == MAIN
        assert "final answer from the grandchild" in str(row.payload["text"])
        assert "orchestrator: dispatched" not in str(row.payload["text"])
        # the grandchild's completion went to the orchestrator, the orchestrator's to MAIN
        assert inbox_row(services, grandchildren[0].run_id).requester_session_key == (
            orchestrator.child_key
        )
        announced = [m for m in user_messages(services) if "announce" in m]
        assert len(announced) == 1
        assert services.subagents.deferred() == set()


async def test_a_silent_grandchild_does_not_hold_the_orchestrator_forever(
    make_services: MakeServices,
) -> None:
    async with announcing(make_services) as make:
        services = await make(DEPTH_TWO)
        await requester(services)
        gate = Gate("ANNOUNCE_SKIP")
        grandchildren: list[ChildPlan] = []
        orchestrator = await child(services, reply=None, task="lead", max_depth=2)
        runner_of(services).script(orchestrator.child_key, spawning(services, grandchildren, gate))
        await start_child(services, orchestrator)
        await gate.entered.wait()
        await quiesce_except_gate(services, orchestrator)
        assert record(services, orchestrator.run_id).active

        gate.open()  # the grandchild ends silently: no inbox row, no turn on the orchestrator
        await eventually(lambda: not record(services, orchestrator.run_id).active)
        await quiesce(services)
        assert services.store.inbox.by_run(grandchildren[0].run_id) is None
        assert record(services, orchestrator.run_id).frozen_result_text == (
            "orchestrator: dispatched"
        )
        assert inbox_row(services, orchestrator.run_id).delivered_at is not None


async def test_a_failed_orchestrator_is_announced_at_once(make_services: MakeServices) -> None:
    async with announcing(make_services) as make:
        services = await make(DEPTH_TWO)
        await requester(services)
        gate = Gate("late result")
        grandchildren: list[ChildPlan] = []
        orchestrator = await child(services, reply=None, task="lead", max_depth=2)
        dispatch = spawning(services, grandchildren, gate)

        async def dispatch_then_fail(ctx: RunContext) -> str:
            await dispatch(ctx)
            raise RuntimeError("orchestrator broke")

        runner_of(services).script(orchestrator.child_key, dispatch_then_fail)
        await start_child(services, orchestrator)
        await eventually(lambda: not record(services, orchestrator.run_id).active)
        assert record(services, grandchildren[0].run_id).active  # still running
        assert inbox_row(services, orchestrator.run_id).status == "failed"
        gate.open()
        await quiesce(services)


async def quiesce_except_gate(services: Runtime, orchestrator: ChildPlan) -> None:
    """Wait until the orchestrator's first turn and its run-end hook are done."""
    await eventually(lambda: orchestrator.child_key in services.subagents.deferred())
    await eventually(lambda: not services.runs.has_active_run(orchestrator.child_key))


async def deferred_orchestrator(services: Runtime, never: str) -> tuple[ChildPlan, list[ChildPlan]]:
    """An orchestrator whose first turn ended while its grandchild (gated on ``never``) runs,
    its deferral stored."""
    await requester(services)
    grandchildren: list[ChildPlan] = []
    orchestrator = await child(services, reply=None, task="lead", max_depth=2)
    gate = Gate(never)
    runner_of(services).script(orchestrator.child_key, spawning(services, grandchildren, gate))
    await start_child(services, orchestrator)
    await gate.entered.wait()
    await quiesce_except_gate(services, orchestrator)
    await eventually(lambda: record(services, orchestrator.run_id).deferred_outcome is not None)
    return orchestrator, grandchildren


async def test_a_deferred_orchestrator_survives_a_crash(make_services: MakeServices) -> None:
    """Its deferral is in the store: the next process adopts it, delivers the (lost)
    grandchild's completion to it, and announces its reply to that once nothing is pending."""
    async with announcing(make_services) as make:
        clock = FakeClock()
        services = await make(DEPTH_TWO, clock)
        orchestrator, grandchildren = await deferred_orchestrator(services, "never answered")
        stored = record(services, orchestrator.run_id).deferred_outcome
        assert stored is not None
        assert (stored["status"], stored["text"]) == ("done", "orchestrator: dispatched")
        await services.runs.shutdown()  # the process dies with the grandchild in flight

        later = await restarted(services, clock)
        try:
            await later.announcer.start()
            await eventually(lambda: not record(services, orchestrator.run_id).active)
            await quiesce(later)
            assert later.subagents.deferred() == set()
        finally:
            await close(later)

        assert task_of(services, grandchildren[0]).status == "lost"
        lost = inbox_row(services, grandchildren[0].run_id)
        assert (lost.requester_session_key, lost.delivered_at is not None) == (
            orchestrator.child_key,
            True,
        )
        ended = record(services, orchestrator.run_id)
        assert ended.ended_reason is not None
        assert ended.frozen_result_text == "acknowledged"  # its turn on the lost completion
        assert task_of(services, orchestrator).status == "succeeded"
        row = inbox_row(services, orchestrator.run_id)
        assert (row.requester_session_key, row.delivered_at is not None) == (MAIN, True)
        assert [m for m in user_messages(services) if "announce" in m] != []


async def test_a_deferred_orchestrator_is_not_lost_at_a_clean_stop_and_adopted_again(
    make_services: MakeServices,
) -> None:
    async with announcing(make_services) as make:
        clock = FakeClock()
        services = await make(DEPTH_TWO, clock)
        orchestrator, grandchildren = await deferred_orchestrator(services, "cut off by the stop")
        await services.runs.shutdown()
        result = await services.recovery.recover(error=STOPPED_ERROR)  # the clean stop's pass
        assert result.lost == [grandchildren[0].run_id]
        assert record(services, orchestrator.run_id).active  # left for adoption

        again = await restarted(services, clock)
        await again.instance.acquire()  # registered: what it adopts, a running instance holds
        try:
            assert await again.subagents.adopt_deferred() == 1
            assert await again.subagents.adopt_deferred() == 0  # it answers for it now
            await again.announcer.start()
            await eventually(lambda: not record(services, orchestrator.run_id).active)
            await quiesce(again)
        finally:
            await again.instance.release()
            await close(again)
        assert inbox_row(services, orchestrator.run_id).requester_session_key == MAIN
