"""The tool host (``ToolContext.host``): every tool call of a turn gets the runtime's host, and
a plugin's tool that spawns, sends, lists or reads history through it gets exactly what the
built-in session tools answer (``clawline.collab.tool_host``). Real runtime on SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.types import JSON
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, config, invoke, runner_of, tool_ctx, tool_of, transcript
from tests.collab.test_spawn_lineage import ended, make_requester

FOREIGN = "agent:reviewer:main"
TARGET = "agent:main:subagent:target"


class Probe:
    """Stands in for ``read_file``: records the context of every call it gets."""

    spec = ToolSpec("read_file", "Read a file (probe).")

    def __init__(self) -> None:
        self.contexts: list[ToolContext] = []

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        self.contexts.append(ctx)
        return ToolResult({"status": "ok", "content": "probed"})


def without_run_id(details: dict[str, Any]) -> dict[str, Any]:
    """``sessions_send`` answers a fresh ``runId`` each time; the rest must be equal."""
    return {name: value for name, value in details.items() if name != "runId"}


def details_of(result: ToolResult) -> dict[str, Any]:
    assert isinstance(result.details, dict)
    return dict(result.details)


async def test_every_tool_call_of_a_turn_gets_the_runtime_host(
    make_services: MakeServices,
) -> None:
    services = await make_services({"agents": {"echo_delay_ms": 0}}, scripted=False)
    probe = Probe()
    services.runs.tools.register(probe, replace=True)
    ack = await services.runs.send(
        session_key=MAIN, message="read a.txt\nread b.txt", idempotency_key="turn-1"
    )
    outcome = await asyncio.wait_for(ack.done, 10)
    assert outcome.status == "done", outcome
    assert len(probe.contexts) == 2
    for ctx in probe.contexts:
        assert ctx.host is services.tool_host
        assert (ctx.session_key, ctx.run_id, ctx.agent_id) == (MAIN, "turn-1", "main")
        assert ctx.tool_call_id
    assert probe.contexts[0].tool_call_id != probe.contexts[1].tool_call_id


async def test_listing_and_history_through_the_host_answer_as_the_tools_do(
    make_services: MakeServices,
) -> None:
    services = await make_services()
    await make_requester(services)
    await services.call(services.catalog.patch, TARGET, {"spawnedBy": MAIN})
    await services.call(services.catalog.patch, FOREIGN, {})
    ack = await services.runs.send(session_key=MAIN, message="hello", idempotency_key="m-1")
    await ack.done
    ctx = tool_ctx(services, MAIN)
    host = services.tool_host
    listed = details_of(await host.list_sessions(ctx, {"messageLimit": 2}))
    assert listed == await invoke(tool_of(services, "sessions_list"), ctx, messageLimit=2)
    assert sorted(row["key"] for row in listed["sessions"]) == [TARGET, "main"]
    history = details_of(await host.history(ctx, {"sessionKey": "main"}))
    assert history == await invoke(tool_of(services, "sessions_history"), ctx, sessionKey="main")
    assert [message["role"] for message in history["messages"]] == ["user", "assistant"]
    refused = await host.history(ctx, {"sessionKey": FOREIGN})
    assert refused.is_error
    assert details_of(refused) == await invoke(
        tool_of(services, "sessions_history"), ctx, sessionKey=FOREIGN
    )
    assert details_of(refused)["status"] == "forbidden"


async def test_a_send_through_the_host_runs_on_the_target_as_the_tool_does(
    make_services: MakeServices,
) -> None:
    services = await make_services(config(turns=0))
    await make_requester(services)
    await services.call(services.catalog.patch, TARGET, {"spawnedBy": MAIN})
    await services.call(services.catalog.patch, FOREIGN, {})
    runner_of(services).script(TARGET, "pong")
    ctx = tool_ctx(services, MAIN)
    sent = details_of(await services.tool_host.send(ctx, {"sessionKey": TARGET, "message": "ping"}))
    assert (sent["status"], sent["reply"], sent["sessionKey"]) == ("ok", "pong", TARGET)
    (call,) = runner_of(services).calls_on(TARGET)
    assert (call.message, call.origin, call.lane) == ("ping", "agent", "nested")
    assert [m.get("role") for m in transcript(services, TARGET)][:2] == ["user", "assistant"]
    arguments = {"sessionKey": FOREIGN, "message": "ping"}
    refused = await services.tool_host.send(ctx, arguments)
    assert refused.is_error
    by_tool = await invoke(tool_of(services, "sessions_send"), ctx, **arguments)
    assert without_run_id(details_of(refused)) == without_run_id(by_tool)
    assert by_tool["status"] == "forbidden"
    assert runner_of(services).calls_on(FOREIGN) == []


async def test_a_spawn_through_the_host_makes_a_child_of_the_calling_session(
    make_services: MakeServices,
) -> None:
    services = await make_services()
    await make_requester(services)
    ctx = tool_ctx(services, MAIN)
    spawned = details_of(await services.tool_host.spawn(ctx, {"task": "count", "label": "c"}))
    assert spawned["status"] == "accepted", spawned
    child = services.store.get(spawned["childSessionKey"])
    assert child is not None
    assert (child.spawned_by, child.spawn_depth, child.label) == (MAIN, 1, "c")
    record = await ended(services, spawned["runId"])
    assert (record.requester_session_key, record.task) == (MAIN, "count")
    bad = {"task": "t", "agentId": "Not Valid!"}
    refused = await services.tool_host.spawn(ctx, bad)
    assert refused.is_error
    assert details_of(refused) == await invoke(tool_of(services, "sessions_spawn"), ctx, **bad)
    assert [c.key for c in services.store.children(MAIN)] == [spawned["childSessionKey"]]


class SpawnsThroughHost:
    """Stands in for ``read_file``: spawns a child through ``ctx.host`` and answers its own
    result."""

    spec = ToolSpec("read_file", "Read a file (spawns instead).")

    def __init__(self) -> None:
        self.spawned: list[JSON] = []

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        assert ctx.record_result is not None  # the turn offers it to the tool it calls ...
        result = await ctx.host.spawn(ctx, {"task": "count"})
        self.spawned.append(result.details)
        return ToolResult({"status": "ok", "content": "spawned one"})


async def test_a_spawn_through_the_host_does_not_record_the_calling_tools_result(
    make_services: MakeServices,
) -> None:
    # ... and the host does not pass it on: the spawn's result is the plugin tool's to use,
    # the call's result in the transcript is the one the plugin tool returns, once
    services = await make_services({"agents": {"echo_delay_ms": 0}}, scripted=False)
    tool = SpawnsThroughHost()
    services.runs.tools.register(tool, replace=True)
    ack = await services.runs.send(session_key=MAIN, message="read a.txt", idempotency_key="t-1")
    outcome = await asyncio.wait_for(ack.done, 10)
    assert outcome.status == "done", outcome
    (spawned,) = tool.spawned
    assert isinstance(spawned, dict)
    assert spawned["status"] == "accepted"
    results = [m for m in transcript(services, MAIN) if m.get("role") == "tool"]
    assert [(m["name"], m["details"]) for m in results] == [
        ("read_file", {"status": "ok", "content": "spawned one"})
    ]
