"""Stopping ACP runs and agents: ``subagents kill``, aborts, run timeouts, an agent that
ignores SIGTERM, a crashing agent, a cancel the agent ignores, and the gateway's shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from clawline.runtime import Runtime
from clawline.testing import settled
from tests.acp_runtime.conftest import Acp, MakeAcp
from tests.acp_runtime.support import MAIN, alive, calls, eventually, gone, log_entries, spawn
from tests.collab.support import invoke, tool_ctx, tool_of

THREADS = {"channels": {"webchat": {"threadBindings": {"spawnAcpSessions": True}}}}


def task_of(services: Runtime, child: str) -> Any:
    (task,) = [t for t in services.tasks.for_session(child) if t.child_session_key == child]
    return task


async def started(acp: Acp, task: str, **args: Any) -> tuple[str, int]:
    """Spawn and wait until the agent is inside the prompt; the child key and the pid."""
    result = await spawn(acp.services, task=task, agentId="tiny", **args)
    assert result["status"] == "accepted", result
    child = result["childSessionKey"]
    live = acp.services.acp.child(child)
    assert live is not None
    pid = live.process.pid
    assert pid is not None
    await eventually(lambda: bool(calls(acp.log, "session/prompt")))
    return child, pid


async def test_subagents_kill_cancels_the_turn_and_stops_the_agent(acp: Acp) -> None:
    services = acp.services
    child, pid = await started(acp, "sleep 30000")
    kill = {"action": "kill", "target": child}
    result = await invoke(tool_of(services, "subagents"), tool_ctx(services, MAIN), **kill)
    assert result["status"] == "ok"
    await gone(pid)
    assert [c["sessionId"] for c in calls(acp.log, "session/cancel")] == [
        calls(acp.log, "session/prompt")[0]["sessionId"]
    ]
    assert task_of(services, child).status == "cancelled"
    (record,) = services.store.runs.by_child(child)
    assert record.suppress_announce_reason == "killed"
    await settled(services)
    assert services.store.inbox.pending_for(MAIN) == []
    assert acp.runner.calls_on(MAIN) == []


async def test_an_abort_sends_session_cancel_and_ends_the_oneshot_agent(acp: Acp) -> None:
    services = acp.services
    child, pid = await started(acp, "sleep 30000")
    await services.runs.abort(child)
    await gone(pid)
    assert len(calls(acp.log, "session/cancel")) == 1
    await eventually(lambda: task_of(services, child).status == "cancelled")
    entry = services.store.get(child)
    assert entry is not None
    assert entry.status == "killed"


async def test_a_run_timeout_times_the_task_out(acp: Acp) -> None:
    services = acp.services
    child, pid = await started(acp, "sleep 30000", runTimeoutSeconds=1)
    await eventually(lambda: task_of(services, child).status == "timed_out")
    await gone(pid)
    assert len(calls(acp.log, "session/cancel")) == 1
    # announced as timed out
    await eventually(lambda: bool(acp.runner.calls_on(MAIN)))
    assert "status: timed out" in acp.runner.calls_on(MAIN)[0].message


async def test_an_agent_ignoring_sigterm_is_killed_after_the_grace(
    make_acp: MakeAcp, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "clawline.collab.acp")
    acp = await make_acp(env={"TINY_STUBBORN": "1"}, shutdownGraceSeconds=0.4)
    services = acp.services
    result = await spawn(services, task="hello", agentId="tiny")
    live = services.acp.child(result["childSessionKey"])
    assert live is not None
    process = live.process.process
    assert process is not None
    loop = asyncio.get_running_loop()
    await eventually(lambda: task_of(services, result["childSessionKey"]).terminal)
    ended = loop.time()
    await gone(process.pid)
    waited = loop.time() - ended
    assert await asyncio.wait_for(process.wait(), 5) == -9  # SIGKILL
    assert 0.4 <= waited < 5, waited  # EOF and SIGTERM were each given the grace period
    assert {"exit": True} in log_entries(acp.log)  # it saw EOF, and stayed
    messages = [record.getMessage() for record in caplog.records]
    steps = [m for m in messages if "did not exit on EOF" in m or "ignored SIGTERM" in m]
    assert len(steps) == 2
    assert "did not exit on EOF" in steps[0]


async def test_an_agent_that_ignores_cancel_is_stopped(make_acp: MakeAcp) -> None:
    acp = await make_acp(extra=THREADS)
    services = acp.services
    services.acp.cancel_wait_s = 0.3
    child, pid = await started(acp, "sleep 30000\ndeaf", thread=True)
    await services.runs.abort(child)
    await gone(pid)  # persistent, but it did not answer the cancel: closed
    assert services.acp.child(child) is None


async def test_a_persistent_agent_survives_an_answered_cancel(make_acp: MakeAcp) -> None:
    acp = await make_acp(extra=THREADS)
    services = acp.services
    child, pid = await started(acp, "sleep 30000", thread=True)
    await services.runs.abort(child)
    await eventually(lambda: task_of(services, child).terminal)
    assert alive(pid)
    ack = await services.runs.send(session_key=child, message="again", idempotency_key="a2")
    outcome = await ack.done
    assert outcome.text == "tiny heard: again done."


async def test_a_crashing_agent_fails_the_run(acp: Acp) -> None:
    services = acp.services
    child, pid = await started(acp, "crash")
    await eventually(lambda: task_of(services, child).status == "failed")
    await gone(pid)
    assert task_of(services, child).error == "ACP process exited with code 5"
    await eventually(lambda: bool(acp.runner.calls_on(MAIN)))
    assert "status: failed: ACP process exited with code 5" in acp.runner.calls_on(MAIN)[0].message


async def test_a_prompt_error_fails_the_run_with_the_agents_text(acp: Acp) -> None:
    services = acp.services
    child, pid = await started(acp, "fail: no quota")
    await eventually(lambda: task_of(services, child).status == "failed")
    assert task_of(services, child).error == "no quota"
    await gone(pid)


async def test_shutdown_stops_every_agent(make_acp: MakeAcp) -> None:
    acp = await make_acp(extra=THREADS)
    services = acp.services
    persistent, first = await started(acp, "hello", thread=True)
    await eventually(lambda: task_of(services, persistent).terminal)
    busy, second = await started(acp, "sleep 30000")
    assert alive(first)
    await services.runs.shutdown()
    assert not alive(first)
    assert not alive(second)
    # the busy run was cut off by the shutdown: its record is left for start-up recovery
    (record,) = services.store.runs.by_child(busy)
    assert record.active


async def test_permission_requests_follow_the_permission_mode(make_acp: MakeAcp) -> None:
    expected = {
        "approve-reads": ("yes", "no"),
        "approve-all": ("yes", "yes"),
        "deny-all": ("no", "no"),
    }
    for mode, (read, edit) in expected.items():
        acp = await make_acp(permissionMode=mode)
        result = await spawn(acp.services, task="ask read\nask edit", agentId="tiny")
        ack = await acp.services.runs.wait_outcome(result["runId"], 10_000)
        assert ack is not None
        assert ack.text.startswith(f"permission: {read}\npermission: {edit}\n"), ack.text


async def test_session_close_is_sent_first_when_supported(make_acp: MakeAcp) -> None:
    acp = await make_acp(env={"TINY_CLOSE": "1"})
    child, pid = await started(acp, "hello")
    await eventually(lambda: task_of(acp.services, child).terminal)
    await gone(pid)
    (opened,) = calls(acp.log, "session/new")
    assert calls(acp.log, "session/close") == [{"sessionId": opened["sessionId"]}]
    order = [entry.get("call") or next(iter(entry)) for entry in log_entries(acp.log)]
    assert order.index("session/close") < order.index("exit")
    assert len(acp.traffic.sent("session/close")) == 1


async def test_no_session_close_without_the_capability(acp: Acp) -> None:
    _, pid = await started(acp, "hello")
    await gone(pid)
    assert acp.traffic.sent("session/close") == []
