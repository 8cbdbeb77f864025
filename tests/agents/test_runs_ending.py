"""How runs end other than by finishing: abort, timeout, runner failure, shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawline.agents import execution
from clawline.agents.echo import EchoRunner
from clawline.agents.run import RunsClosed
from clawline.runtime import Runtime
from clawline.testing import FakeClock, drained
from clawline.testing.wire import WireRecorder
from tests.agents.support import (
    BlockingRunner,
    FailingRunner,
    StubbornRunner,
    agent_events,
    chat_events,
)

MAIN = "agent:main:main"


def entry_of(services: Runtime, key: str = MAIN) -> dict[str, Any]:
    entry = services.store.get(key)
    assert entry is not None
    return entry.to_json()


async def test_abort_kills_the_running_run(services: Runtime, events: WireRecorder) -> None:
    runner = BlockingRunner(partial="half an answer")
    services.runs.runner = runner
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="r1")
    await runner.started.wait()
    assert await services.runs.abort("main") == ["r1"]
    outcome = ack.done.result()
    assert (outcome.status, outcome.text) == ("killed", "half an answer")
    entry = entry_of(services)
    assert (entry["status"], entry["abortedLastRun"]) == ("killed", True)
    assert not services.runs.has_active_run(MAIN)
    await events.settled()
    chat = chat_events(events, "r1")
    assert chat[-1]["state"] == "aborted"
    assert chat[-1]["message"]["content"][0]["text"] == "half an answer"
    end = agent_events(events, "r1")[-1]
    assert end["data"]["phase"] == "end"
    assert (end["data"]["stopReason"], end["data"]["aborted"]) == ("aborted", True)
    assert runner.contexts[0].cancelled


async def test_abort_of_one_queued_run_leaves_the_running_one(
    services: Runtime, events: WireRecorder
) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    first = await services.runs.send(session_key="main", message="1", idempotency_key="r1")
    await runner.started.wait()
    second = await services.runs.send(session_key="main", message="2", idempotency_key="r2")
    assert await services.runs.abort("main", "r2") == ["r2"]
    assert second.done.result().status == "killed"
    assert second.done.result().started_at is None
    assert not first.done.done()
    await events.settled()
    assert [e["state"] for e in chat_events(events, "r2")] == ["aborted"]
    assert agent_events(events, "r2") == []
    runner.release.set()
    assert (await first.done).status == "done"
    assert len(runner.contexts) == 1


async def test_abort_aborts_queued_and_running_runs(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="1", idempotency_key="r1")
    await runner.started.wait()
    await services.runs.send(session_key="main", message="2", idempotency_key="r2")
    assert sorted(await services.runs.abort("main")) == ["r1", "r2"]
    assert services.runs.active_runs() == []
    assert len(runner.contexts) == 1


async def test_abort_with_nothing_to_abort(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    await services.runs.send(session_key="main", message="1", idempotency_key="r1")
    assert await services.runs.abort("agent:main:other") == []
    assert await services.runs.abort("main", "no-such-run") == []
    assert services.runs.has_active_run(MAIN)
    runner.release.set()


async def test_a_run_past_its_timeout_ends_as_timeout(
    services: Runtime, events: WireRecorder
) -> None:
    services.runs.runner = EchoRunner(delay_ms=40)
    ack = await services.runs.send(
        session_key="main", message="a b c d e f g h", idempotency_key="t", timeout_ms=100
    )
    outcome = await ack.done
    assert outcome.status == "timeout"
    assert outcome.error == "run timed out after 100 ms"
    assert entry_of(services)["status"] == "timeout"
    await events.settled()
    error = chat_events(events, "t")[-1]
    assert (error["state"], error["errorKind"]) == ("error", "timeout")
    end = agent_events(events, "t")[-1]["data"]
    assert (end["phase"], end["aborted"], end["stopReason"]) == ("end", True, "timeout")


async def test_a_failing_runner_ends_the_run_as_failed(
    services: Runtime, events: WireRecorder
) -> None:
    services.runs.runner = FailingRunner("model exploded", partial="so far")
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="f")
    outcome = await ack.done
    assert (outcome.status, outcome.error) == ("failed", "model exploded")
    assert entry_of(services)["status"] == "failed"
    await events.settled()
    error = chat_events(events, "f")[-1]
    assert error["state"] == "error"
    assert (error["errorMessage"], error["errorKind"]) == ("model exploded", "unknown")
    lifecycle = agent_events(events, "f")[-1]["data"]
    assert (lifecycle["phase"], lifecycle["error"]) == ("error", "model exploded")
    changed = [e.payload for e in events if e.name == "sessions.changed"]
    assert changed[-1]["phase"] == "error"
    assert changed[-1]["status"] == "failed"
    replay = await services.runs.send(session_key="main", message="m", idempotency_key="f")
    assert replay.cached is not None
    assert (replay.status, replay.cached["summary"]) == ("error", "model exploded")


async def test_a_runner_that_ignores_cancellation_is_ended_after_the_grace(
    services: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execution, "ABORT_GRACE_S", 0.05)
    runner = StubbornRunner(holdout=0.5)
    services.runs.runner = runner
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="s")
    await runner.started.wait()
    assert await asyncio.wait_for(services.runs.abort("main"), 0.4) == ["s"]
    assert ack.done.result().status == "killed"
    await asyncio.wait_for(runner.finished.wait(), 5)  # the stubborn runner runs out on its own


async def test_shutdown_kills_every_run_and_refuses_new_ones(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    running = await services.runs.send(session_key="a", message="1", idempotency_key="r1")
    await runner.started.wait()
    queued = await services.runs.send(session_key="a", message="2", idempotency_key="r2")
    await services.runs.shutdown()
    assert running.done.result().status == "killed"
    assert queued.done.result().status == "killed"
    entry = entry_of(services, "agent:main:a")
    assert (entry["status"], entry["abortedLastRun"]) == ("killed", True)
    assert entry["endedAt"] is not None
    with pytest.raises(RunsClosed, match="shutting down"):
        await services.runs.send(session_key="a", message="3", idempotency_key="r3")


async def test_a_session_deleted_mid_run_is_not_recreated(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    ack = await services.runs.send(session_key="gone", message="m", idempotency_key="g")
    await runner.started.wait()
    await services.call(services.catalog.delete, "agent:main:gone")
    runner.release.set()
    assert (await ack.done).status == "done"
    assert services.store.get("agent:main:gone") is None


async def test_a_run_timeout_runs_on_the_runtime_clock(faked: Runtime, clock: FakeClock) -> None:
    runner = BlockingRunner()
    faked.runs.runner = runner
    ack = await faked.runs.send(
        session_key="main", message="m", idempotency_key="t", timeout_ms=60_000
    )
    await runner.started.wait()
    await clock.run_for(59_999)
    await drained(faked)
    assert not ack.done.done()  # a minute of virtual time has not passed yet
    await clock.run_for(1)
    outcome = await asyncio.wait_for(ack.done, 5)
    assert (outcome.status, outcome.error) == ("timeout", "run timed out after 60000 ms")
