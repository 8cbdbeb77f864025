"""The acp runtime inside a real gateway (offline model for ordinary sessions), seen over the
wire: ``chat.history`` of a child, a ``chat.send`` follow-up to a persistent child,
``tasks.cancel``, ``sessions.delete`` and the gateway stopping."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.acp_runtime.support import (
    MAIN,
    Traffic,
    acp_config,
    alive,
    calls,
    eventually,
    eventually_async,
    gone,
    pids,
    spawn,
)
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

THREADS = {"channels": {"webchat": {"threadBindings": {"spawnAcpSessions": True}}}}


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[RunningGateway, WireClient, Path]]:
    log = tmp_path / "tiny.jsonl"
    state = tmp_path / "state"
    settings = Settings(state_dir=state, raw={**acp_config(log), **THREADS})
    traffic = Traffic()
    gateway_settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(state, settings=settings, gateway_settings=gateway_settings) as gw:
        gw.runtime.acp.observers.append(traffic)
        client = await WireClient.open(gw.url)
        frame = await client.connect(token=TOKEN)
        assert frame["ok"] is True, frame
        await gw.runtime.call(gw.runtime.catalog.patch, MAIN, {})
        try:
            yield gw, client, log
        finally:
            await client.close()
    assert [pid for pid in pids(log) if alive(pid)] == []  # the gateway's stop ended them
    assert traffic.problems() == []


def texts(history: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for message in history["messages"]:
        content = message.get("content") or []
        text = "".join(block.get("text", "") for block in content if isinstance(block, dict))
        out.append((message["role"], text))
    return out


async def test_a_child_through_the_gateway(
    gateway: tuple[RunningGateway, WireClient, Path],
) -> None:
    gw, client, _ = gateway
    result = await spawn(gw.runtime, task="report", agentId="tiny", label="reporter")
    child = result["childSessionKey"]
    await client.ok("agent.wait", {"runId": result["runId"], "timeoutMs": 10_000})
    history = await client.ok("chat.history", {"sessionKey": child})
    assert texts(history) == [
        ("user", "report"),
        ("assistant", ""),
        ("tool", "echoed report"),
        ("assistant", "tiny heard: report done."),
    ]
    assert history["messages"][1]["toolCalls"][0]["name"] == "echo"
    listed = await client.ok("sessions.list", {})
    row = next(row for row in listed["sessions"] if row["key"] == child)
    assert row["spawnedBy"] == MAIN

    # the requester's turn ran on the completion (offline model)
    async def delivered() -> bool:
        history = await client.ok("chat.history", {"sessionKey": MAIN})
        return any(
            role == "user" and "[Internal task completion event]" in text
            for role, text in texts(history)
        )

    await eventually_async(delivered)
    tasks = await client.ok("tasks.list", {"sessionKey": child})
    assert [(t["runtime"], t["status"]) for t in tasks["tasks"]] == [("acp", "succeeded")]


async def test_a_persistent_child_over_the_wire(
    gateway: tuple[RunningGateway, WireClient, Path],
) -> None:
    gw, client, log = gateway
    result = await spawn(gw.runtime, task="first", agentId="tiny", thread=True)
    child = result["childSessionKey"]
    await client.ok("agent.wait", {"runId": result["runId"], "timeoutMs": 10_000})
    (pid,) = pids(log)
    sent = await client.ok(
        "chat.send", {"sessionKey": child, "message": "sleep 30000", "idempotencyKey": "s1"}
    )
    await eventually(lambda: len(calls(log, "session/prompt")) == 2)
    tasks = await client.ok("tasks.list", {"sessionKey": child})
    # a follow-up chat.send makes no task of its own; cancel the run through chat.abort
    assert [t["status"] for t in tasks["tasks"]] == ["succeeded"]
    await client.ok("chat.abort", {"sessionKey": child, "runId": sent["runId"]})
    await eventually(lambda: len(calls(log, "session/cancel")) == 1)
    assert alive(pid)  # the agent answered the cancel: the persistent process stays
    await client.ok("chat.send", {"sessionKey": child, "message": "third", "idempotencyKey": "s2"})
    done = await client.ok("agent.wait", {"runId": "s2", "timeoutMs": 10_000})
    assert done["status"] == "ok"
    history = await client.ok("chat.history", {"sessionKey": child})
    assert texts(history)[-1] == ("assistant", "tiny heard: third done.")
    assert pids(log) == [pid]
    await client.ok("sessions.delete", {"key": child})
    await gone(pid)


async def test_tasks_cancel_stops_a_running_acp_task(
    gateway: tuple[RunningGateway, WireClient, Path],
) -> None:
    gw, client, log = gateway
    result = await spawn(gw.runtime, task="sleep 30000", agentId="tiny")
    child = result["childSessionKey"]
    await eventually(lambda: bool(calls(log, "session/prompt")))
    (pid,) = pids(log)
    tasks = await client.ok("tasks.list", {"sessionKey": child})
    (task,) = tasks["tasks"]
    cancelled = await client.ok("tasks.cancel", {"taskId": task["taskId"]})
    assert cancelled["aborted"] is True
    assert cancelled["task"]["status"] == "cancelled"
    await gone(pid)
    assert len(calls(log, "session/cancel")) == 1


async def test_stopping_the_gateway_stops_persistent_agents(tmp_path: Path) -> None:
    log = tmp_path / "tiny.jsonl"
    state = tmp_path / "state"
    settings = Settings(state_dir=state, raw={**acp_config(log), **THREADS})
    async with running_gateway(state, settings=settings) as gw:
        await gw.runtime.call(gw.runtime.catalog.patch, MAIN, {})
        result = await spawn(gw.runtime, task="hi", agentId="tiny", thread=True)
        await gw.runtime.runs.wait_outcome(result["runId"], 10_000)
        (pid,) = pids(log)
        assert alive(pid)
    assert not alive(pid)
