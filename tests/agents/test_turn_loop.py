"""The turn loop: model rounds, tool calls, the transcript and the events they produce."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any, cast

import pytest

from clawline.agents.providers.base import ProviderError, ToolCall, Usage
from clawline.agents.turn import MAX_TOOL_ROUNDS
from clawline.gateway.bus import Event
from clawline.runtime import Runtime
from clawline.testing.wire import WireRecorder
from tests.agents.support import agent_events
from tests.agents.turn_support import (
    BlockingTool,
    EchoTool,
    ErrorTool,
    RaisingTool,
    ScriptedProvider,
    YieldTool,
    calls,
    install,
    text,
)

MAIN = "agent:main:main"


def transcript(services: Runtime, key: str = MAIN) -> list[dict[str, Any]]:
    entry = services.store.get(key)
    assert entry is not None
    return [dict(event.data) for event in services.store.events(entry.session_id)]


def tool_events(events: Iterable[Event], run_id: str) -> list[dict[str, Any]]:
    return [e["data"] for e in agent_events(events, run_id) if e["stream"] == "tool"]


async def run(services: Runtime, message: str, key: str = "main", **kwargs: Any) -> Any:
    ack = await services.runs.send(
        session_key=key, message=message, idempotency_key=f"run-{message}", **kwargs
    )
    return await ack.done


async def test_a_tool_round_then_a_final_answer(services: Runtime, events: WireRecorder) -> None:
    echo = EchoTool()
    provider = ScriptedProvider(
        calls(ToolCall("c1", "echo", {"x": 1}), say="let me check", usage=Usage(1, 1)),
        text("all good", Usage(2, 3)),
    )
    install(services, provider, echo)
    outcome = await run(services, "hi", extra_system_prompt="Be brief.")
    assert (outcome.status, outcome.text) == ("done", "all good")
    assert outcome.usage == {"input": 3, "output": 4, "totalTokens": 7}
    user, call_message, result, final = transcript(services)
    assert user["role"] == "user"
    assert user["runId"] == "run-hi"
    assert call_message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "let me check"}],
        "toolCalls": [{"id": "c1", "name": "echo", "arguments": {"x": 1}}],
        "stopReason": "toolUse",
        "runId": "run-hi",
    }
    details = {"status": "ok", "echo": {"x": 1}}
    assert result == {
        "role": "tool",
        "content": [{"type": "text", "text": json.dumps(details)}],
        "toolCallId": "c1",
        "name": "echo",
        "isError": False,
        "details": details,
        "runId": "run-hi",
    }
    assert final["content"] == [{"type": "text", "text": "all good"}]
    assert (final["role"], final["runId"], final["stopReason"]) == ("assistant", "run-hi", "stop")
    await events.settled()
    assert tool_events(events, "run-hi") == [
        {"phase": "start", "name": "echo", "toolCallId": "c1", "args": {"x": 1}},
        {
            "phase": "result",
            "name": "echo",
            "toolCallId": "c1",
            "result": details,
            "isError": False,
        },
    ]
    published = [
        cast(Any, e.payload)["message"]["role"] for e in events if e.name == "session.message"
    ]
    assert published == ["user", "assistant", "tool", "assistant"]
    streamed = [e for e in agent_events(events, "run-hi") if e["stream"] == "assistant"]
    assert streamed[-1]["data"]["text"] == "let me check\n\nall good"
    first, second = provider.seen
    assert first.system.endswith("\n\nBe brief.")
    assert first.tools == ["echo"]
    assert [m.role for m in first.messages] == ["user"]
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    assert second.messages[1].tool_calls == [ToolCall("c1", "echo", {"x": 1})]
    assert json.loads(second.messages[2].content) == details
    ctx = echo.contexts[0]
    assert (ctx.session_key, ctx.run_id, ctx.tool_call_id, ctx.agent_id) == (
        MAIN,
        "run-hi",
        "c1",
        "main",
    )
    assert ctx.entry is not None
    assert ctx.entry.key == MAIN
    assert ctx.agent is not None
    assert ctx.agent.model == "script/test"
    assert ctx.workspace.is_dir()
    assert ctx.workspace.name == "main"


async def test_a_refusal_is_an_error_result_the_model_reads(
    services: Runtime, events: WireRecorder
) -> None:
    provider = ScriptedProvider(calls(ToolCall("c1", "refuse")), text("understood"))
    install(services, provider, ErrorTool())
    assert (await run(services, "try")).text == "understood"
    result = transcript(services)[2]
    assert result["isError"] is True
    assert result["details"] == {"status": "forbidden", "error": "not today"}
    await events.settled()
    assert tool_events(events, "run-try")[1]["isError"] is True
    seen = provider.seen[1].messages[-1]
    assert (seen.role, seen.is_error, seen.name) == ("tool", True, "refuse")


async def test_a_tool_that_raises_becomes_an_error_result_and_is_logged(
    services: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    install(
        services, ScriptedProvider(calls(ToolCall("c1", "boom")), text("recovered")), RaisingTool()
    )
    with caplog.at_level(logging.WARNING, logger="clawline.agents"):
        outcome = await run(services, "go")
    assert (outcome.status, outcome.text) == ("done", "recovered")
    assert transcript(services)[2]["details"] == {"status": "error", "error": "boom failed: kaput"}
    assert any("tool boom failed" in record.getMessage() for record in caplog.records)


async def test_unknown_tools_and_broken_arguments_are_answered_not_run(services: Runtime) -> None:
    echo = EchoTool()
    broken = ToolCall("c2", "echo", error="arguments are not valid JSON (oops)")
    install(services, ScriptedProvider(calls(ToolCall("c1", "nope"), broken), text("ok")), echo)
    await run(services, "x")
    errors = [m["details"] for m in transcript(services) if m["role"] == "tool"]
    assert errors == [
        {"status": "error", "error": "Tool nope not found"},
        {"status": "error", "error": "echo: arguments are not valid JSON (oops)"},
    ]
    assert echo.contexts == []


async def test_the_turn_ends_after_max_tool_rounds(services: Runtime) -> None:
    provider = ScriptedProvider(lambda messages: calls(ToolCall(f"c{len(messages)}", "echo")))
    install(services, provider, EchoTool())
    outcome = await run(services, "loop")
    assert outcome.status == "done"
    assert outcome.stop_reason == "maxToolRounds"
    assert outcome.text == (
        f"[turn stopped: the model still wanted tools after {MAX_TOOL_ROUNDS} tool rounds]"
    )
    messages = transcript(services)
    assert sum(m["role"] == "tool" for m in messages) == MAX_TOOL_ROUNDS
    assert len(provider.seen) == MAX_TOOL_ROUNDS + 1
    assert messages[-1]["content"][0]["text"] == outcome.text


async def test_an_abort_cancels_the_running_tool(services: Runtime) -> None:
    blocking = BlockingTool()
    provider = ScriptedProvider(calls(ToolCall("c1", "wait")), text("never"))
    install(services, provider, blocking)
    ack = await services.runs.send(session_key="main", message="m", idempotency_key="k")
    await blocking.started.wait()
    assert await services.runs.abort("main") == ["k"]
    outcome = await ack.done
    assert outcome.status == "killed"
    assert blocking.cancelled
    assert len(provider.seen) == 1
    interrupted = transcript(services)[2]
    assert interrupted["details"] == {
        "status": "error",
        "error": "wait was interrupted: the run was stopped",
    }


async def test_a_turn_ending_tool_stops_the_loop(services: Runtime) -> None:
    provider = ScriptedProvider(calls(ToolCall("y", "sessions_yield"), say="waiting for kids"))
    install(services, provider, YieldTool())
    outcome = await run(services, "yield")
    assert (outcome.status, outcome.text) == ("done", "waiting for kids")
    assert len(provider.seen) == 1
    assert [m["role"] for m in transcript(services)] == ["user", "assistant", "tool", "assistant"]


async def test_a_provider_error_fails_the_run(services: Runtime) -> None:
    def broken(messages: object) -> list[Any]:
        raise ProviderError("model provider openai failed: HTTP 500: down")

    install(services, ScriptedProvider(broken))
    outcome = await run(services, "q")
    assert (outcome.status, outcome.error) == (
        "failed",
        "model provider openai failed: HTTP 500: down",
    )


async def test_the_next_turn_sees_the_earlier_tool_rounds(services: Runtime) -> None:
    provider = ScriptedProvider(
        calls(ToolCall("c1", "echo", {"n": 1})), text("first"), text("second")
    )
    install(services, provider, EchoTool())
    await run(services, "one")
    await run(services, "two")
    last = provider.seen[-1].messages
    assert [(m.role, m.content) for m in last if m.role != "tool"] == [
        ("user", "one"),
        ("assistant", ""),
        ("assistant", "first"),
        ("user", "two"),
    ]
    assert last[1].tool_calls[0].id == last[2].tool_call_id == "c1"


async def test_a_bad_model_reference_fails_the_run(services: Runtime) -> None:
    rig = install(services, ScriptedProvider(text("x")))
    rig.runner.config = type(rig.runner.config)(
        state_dir=services.settings.state_dir,
        defaults=type(rig.runner.config.defaults)(model="mystery/m"),
    )
    outcome = await run(services, "q")
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert outcome.error.startswith('invalid model "mystery/m": unknown provider "mystery"')
