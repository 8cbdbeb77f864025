"""The waiting helpers of ``clawline.testing`` wait for what they promise, and fail when it does
not come: ``eventually`` for a condition, ``settled`` until the runtime is idle, ``drained``
until it has done all it can without a new outside event."""

from __future__ import annotations

import asyncio

import pytest

from clawline.agents.echo import EchoRunner
from clawline.runtime import Runtime
from clawline.testing import drained, eventually, settled
from tests.agents.support import BlockingRunner


async def test_eventually_fails_naming_what_never_came() -> None:
    with pytest.raises(AssertionError, match="waiting for the sky to fall"):
        await eventually(lambda: False, timeout=0.05, what="the sky to fall")


async def test_eventually_takes_an_async_check() -> None:
    answers = iter([False, False, True])

    async def check() -> bool:
        return next(answers)

    await eventually(check, timeout=5)
    assert next(answers, "spent") == "spent"


async def test_settled_waits_for_the_run_to_end(services: Runtime) -> None:
    services.runs.runner = EchoRunner(delay_ms=20)
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="s")
    assert services.busy
    await settled(services)
    assert ack.done.done()
    assert not services.busy


async def test_settled_fails_while_a_run_is_held(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="m", idempotency_key="s")
    with pytest.raises(AssertionError, match="did not come to rest"):
        await settled(services, timeout=0.1)
    runner.release.set()
    await settled(services)


async def test_drained_returns_after_a_chain_of_store_calls_and_tasks(services: Runtime) -> None:
    done: list[int] = []
    owned: set[asyncio.Task[None]] = set()

    async def step(n: int) -> None:
        await services.workers.run(done.append, n)
        if n < 30:
            owned.add(asyncio.get_running_loop().create_task(step(n + 1)))

    owned.add(asyncio.get_running_loop().create_task(step(1)))
    await drained(services)
    assert done == list(range(1, 31))
    await asyncio.gather(*owned)


async def test_drained_returns_while_a_run_is_held_and_fails_while_work_goes_on(
    services: Runtime,
) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="m", idempotency_key="s")
    await drained(services)  # held: nothing more can happen without the release
    assert services.busy
    assert len(runner.contexts) == 1

    async def forever() -> None:
        while True:
            await services.workers.run(lambda: None)
            await asyncio.sleep(0)
            asyncio.get_running_loop().create_task(asyncio.sleep(0))

    churn = asyncio.get_running_loop().create_task(forever())
    try:
        with pytest.raises(AssertionError, match="did not drain"):
            await drained(services, timeout=0.2)
    finally:
        churn.cancel()
        runner.release.set()
    await settled(services)
