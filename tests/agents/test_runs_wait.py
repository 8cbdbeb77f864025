"""RunManager.wait (``agent.wait``): running, finished, unknown and later runs."""

from __future__ import annotations

import asyncio
import time

from clawline.agents.echo import EchoRunner
from clawline.runtime import Runtime
from clawline.testing import drained
from tests.agents.support import BlockingRunner, FailingRunner


async def test_wait_for_a_running_run(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="m", idempotency_key="w")
    waiting = asyncio.create_task(services.runs.wait("w", 5_000))
    await runner.started.wait()
    assert not waiting.done()
    runner.release.set()
    result = await waiting
    assert result["runId"] == "w"
    assert result["status"] == "ok"
    assert isinstance(result["startedAt"], int)
    assert isinstance(result["endedAt"], int)
    assert "error" not in result


async def test_wait_for_a_finished_run_answers_from_the_cache(services: Runtime) -> None:
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="w")
    outcome = await ack.done
    started = time.monotonic()
    result = await services.runs.wait("w", 10_000)
    assert time.monotonic() - started < 1
    assert result == {
        "runId": "w",
        "status": "ok",
        "startedAt": outcome.started_at,
        "endedAt": outcome.ended_at,
    }


async def test_wait_that_runs_out_answers_timeout(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="m", idempotency_key="w")
    assert await services.runs.wait("w", 50) == {"runId": "w", "status": "timeout"}
    runner.release.set()


async def test_wait_for_an_unknown_run_times_out(services: Runtime) -> None:
    started = time.monotonic()
    assert await services.runs.wait("nobody", 80) == {"runId": "nobody", "status": "timeout"}
    assert time.monotonic() - started >= 0.07


async def test_wait_for_a_run_that_starts_later(services: Runtime) -> None:
    services.runs.runner = EchoRunner(delay_ms=0)
    waiting = asyncio.create_task(services.runs.wait("later", 5_000))
    await drained(services)  # the wait is registered before the run exists
    assert not waiting.done()
    await services.runs.send(session_key="main", message="m", idempotency_key="later")
    assert (await waiting)["status"] == "ok"


async def test_wait_reports_errors(services: Runtime) -> None:
    services.runs.runner = FailingRunner("no model")
    await services.runs.send(session_key="main", message="m", idempotency_key="f")
    failed = await services.runs.wait("f", 5_000)
    assert (failed["status"], failed["error"]) == ("error", "no model")

    services.runs.runner = BlockingRunner()
    await services.runs.send(session_key="main", message="m", idempotency_key="k")
    await services.runs.abort("main")
    killed = await services.runs.wait("k", 5_000)
    assert (killed["status"], killed["error"]) == ("error", "aborted")

    services.runs.runner = EchoRunner(delay_ms=50)
    await services.runs.send(
        session_key="main", message="a b c d", idempotency_key="t", timeout_ms=20
    )
    timed_out = await services.runs.wait("t", 5_000)
    assert (timed_out["status"], timed_out["error"]) == ("timeout", "run timed out after 20 ms")
    assert "endedAt" in timed_out
