"""sessions_send from inside a running turn: steps on the requester run beside its own turn
(the nested lane), so a wait-mode exchange cannot deadlock on the requester's session queue."""

from __future__ import annotations

import asyncio

from clawline.agents.runner import RunContext
from clawline.agents.tools.base import Tool
from clawline.runtime import Runtime
from clawline.testing import drained
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, config, invoke, runner_of, settle, tool_ctx, tool_of

TARGET = "agent:main:subagent:target"


def send(services: Runtime) -> Tool:
    return tool_of(services, "sessions_send")


async def setup(make_services: MakeServices, turns: int = 5) -> Runtime:
    services = await make_services(config(turns=turns))
    await services.call(services.catalog.patch, MAIN, {})
    await services.call(services.catalog.patch, TARGET, {"spawnedBy": MAIN})
    return services


async def test_a_requester_mid_turn_gets_its_ping_pong_step(make_services: MakeServices) -> None:
    """The requester's turn calls sessions_send (wait mode) and then waits for the ping-pong
    step on its own session before it ends. Queued behind that turn, the step could never
    run; on the nested lane it does."""
    services = await setup(make_services)
    runner = runner_of(services)
    step_seen = asyncio.Event()
    results: list[dict[str, object]] = []
    states: list[bool] = []

    async def requester_turn(ctx: RunContext) -> str:
        details = await invoke(
            send(services),
            tool_ctx(services, MAIN, run_id=ctx.run_id),
            message="hi",
            sessionKey=TARGET,
        )
        results.append(details)
        await asyncio.wait_for(step_seen.wait(), 5)
        return "requester done"

    async def requester_step(ctx: RunContext) -> str:
        states.append(services.runs.has_active_run(MAIN))
        step_seen.set()
        return "REPLY_SKIP"

    runner.script(MAIN, requester_turn, requester_step)
    runner.script(TARGET, "t-round-1", "ANNOUNCE_SKIP")
    ack = await services.runs.send(session_key=MAIN, message="start", idempotency_key="turn")
    outcome = await asyncio.wait_for(asyncio.shield(ack.done), 10)
    assert (outcome.status, outcome.text) == ("done", "requester done")
    assert results[0]["status"] == "ok"
    assert results[0]["reply"] == "t-round-1"
    assert states == [True]  # the step ran while the requester's own run was active
    await settle(services)
    step = runner.calls_on(MAIN)[1]
    assert (step.message, step.lane) == ("t-round-1", "nested")
    entry = services.store.get(MAIN)
    assert entry is not None
    assert entry.status == "done"


async def test_a_send_to_its_own_session_from_its_turn_completes(
    make_services: MakeServices,
) -> None:
    services = await setup(make_services)
    runner = runner_of(services)
    results: list[dict[str, object]] = []

    async def turn(ctx: RunContext) -> str:
        details = await invoke(
            send(services),
            tool_ctx(services, MAIN, run_id=ctx.run_id),
            message="note to self",
            sessionKey="main",
            timeoutSeconds=5,
        )
        results.append(details)
        return "turn done"

    runner.script(MAIN, turn, "noted", "ANNOUNCE_SKIP")
    ack = await services.runs.send(session_key=MAIN, message="start", idempotency_key="turn")
    outcome = await asyncio.wait_for(asyncio.shield(ack.done), 10)
    assert (outcome.status, outcome.text) == ("done", "turn done")
    assert (results[0]["status"], results[0]["reply"]) == ("ok", "noted")
    await settle(services)


async def test_nested_runs_leave_the_entry_status_to_the_running_turn(services: Runtime) -> None:
    runner = runner_of(services)
    release = asyncio.Event()
    statuses: list[str | None] = []

    async def long_turn(ctx: RunContext) -> str:
        await release.wait()
        return "long done"

    runner.script(MAIN, long_turn, "nested done")
    main = await services.runs.send(session_key=MAIN, message="one", idempotency_key="main")
    while not runner.calls_on(MAIN):
        await asyncio.sleep(0.01)
    nested = await services.runs.send(
        session_key=MAIN, message="two", idempotency_key="nested", bypass_queue=True
    )
    done = await asyncio.wait_for(asyncio.shield(nested.done), 5)
    assert done.text == "nested done"
    entry = services.store.get(MAIN)
    assert entry is not None
    statuses.append(entry.status)
    assert services.runs.has_active_run(MAIN)
    release.set()
    await main.done
    entry = services.store.get(MAIN)
    assert entry is not None
    statuses.append(entry.status)
    assert statuses == ["running", "done"]
    assert not services.runs.has_active_run(MAIN)


async def test_nested_runs_of_one_session_run_one_after_another(services: Runtime) -> None:
    runner = runner_of(services)
    release = asyncio.Event()

    async def first(ctx: RunContext) -> str:
        await release.wait()
        return "first"

    runner.script(MAIN, first, "second")
    one = await services.runs.send(
        session_key=MAIN, message="a", idempotency_key="n1", bypass_queue=True
    )
    two = await services.runs.send(
        session_key=MAIN, message="b", idempotency_key="n2", bypass_queue=True
    )
    await drained(services)
    assert len(runner.calls_on(MAIN)) == 1
    assert not two.done.done()
    release.set()
    assert (await one.done).text == "first"
    assert (await two.done).text == "second"


async def test_shutdown_cancels_a_pending_exchange(make_services: MakeServices) -> None:
    services = await setup(make_services)
    never = asyncio.Event()

    async def stuck(ctx: RunContext) -> str:
        await never.wait()
        return "never"

    runner_of(services).script(TARGET, stuck)
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="m", sessionKey=TARGET, timeoutSeconds=0
    )
    assert details["status"] == "accepted"
    tasks = services.runs.background_tasks()
    assert len(tasks) == 1
    await asyncio.wait_for(services.runs.shutdown(), 10)
    assert tasks[0].cancelled()
    assert services.runs.background_tasks() == []


async def test_no_exchange_starts_once_shutdown_began(services: Runtime) -> None:
    started: list[bool] = []

    async def exchange() -> None:
        started.append(True)

    await services.runs.shutdown()
    task = services.runs.spawn_background(exchange(), name="late")
    await asyncio.wait([task])
    assert task.cancelled()
    assert started == []
    assert services.runs.background_tasks() == []
