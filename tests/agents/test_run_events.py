"""The events of one run: order, payload shapes, per-run seq, delta throttling, tool events."""

from __future__ import annotations

import asyncio

from clawline.agents.echo import EchoRunner
from clawline.agents.runner import RunContext, RunOutput
from clawline.gateway.bus import Audience, Event
from clawline.gateway.projection import CHAT_DELTA_INTERVAL_MS
from clawline.runtime import Runtime
from clawline.testing.wire import WireRecorder
from tests.agents.support import ToolRunner, agent_events, chat_events


def describe(event: Event) -> str:
    payload = event.payload
    if event.name == "chat":
        return f"chat:{payload['state']}"
    if event.name == "agent":
        data = payload["data"]
        assert isinstance(data, dict)
        return f"agent:{payload['stream']}" + (f":{data['phase']}" if "phase" in data else "")
    if event.name == "session.update":
        return f"update:{payload['event']}"
    if event.name == "session.message":
        message = payload["message"]
        assert isinstance(message, dict)
        return f"message:{message['role']}"
    return f"changed:{payload.get('phase') or payload.get('reason')}"


async def test_one_run_publishes_its_events_in_order(
    services: Runtime, events: WireRecorder
) -> None:
    services.runs.runner = EchoRunner(delay_ms=0)
    ack = await services.runs.send(session_key="main", message="hi", idempotency_key="r")
    await ack.done
    await events.settled()
    sequence = [describe(event) for event in events]
    streamed = ("chat:delta", "agent:assistant", "update:delta")
    deltas = [name for name in sequence if name in streamed]
    compact = [name for name in sequence if name not in streamed]
    assert compact == [
        "changed:create",
        "message:user",
        "changed:message",
        "changed:start",
        "agent:lifecycle:start",
        "message:assistant",
        "changed:message",
        "chat:final",
        "update:completed",
        "agent:lifecycle:end",
        "changed:end",
    ]
    assert deltas.count("agent:assistant") == 2  # "echo: "
    assert deltas.count("update:delta") == 2
    assert "hi"
    assert deltas.count("chat:delta") == 1
    start = next(e.payload for e in events if describe(e) == "changed:start")
    assert (start["reason"], start["runId"], start["status"]) == ("send", "r", "running")
    assert start["hasActiveRun"] is True
    end = events[-1].payload
    assert (end["reason"], end["phase"], end["status"], end["hasActiveRun"]) == (
        "send",
        "end",
        "done",
        False,
    )
    assert all(e.audience is Audience.OPERATORS for e in events if e.name in ("chat", "agent"))


async def test_payload_shapes_and_per_run_seq(services: Runtime, events: WireRecorder) -> None:
    services.runs.runner = EchoRunner(delay_ms=0)
    for key in ("a", "b"):
        await (
            await services.runs.send(session_key="main", message="x y", idempotency_key=key)
        ).done
    for run_id in ("a", "b"):
        await events.settled()
        chat = chat_events(events, run_id)
        agent = agent_events(events, run_id)
        assert [p["seq"] for p in chat] == list(range(1, len(chat) + 1))
        assert [p["seq"] for p in agent] == list(range(1, len(agent) + 1))
        for payload in agent:
            assert set(payload) == {"runId", "seq", "stream", "ts", "data", "sessionKey"}
            assert payload["sessionKey"] == "agent:main:main"
        final = chat[-1]
        assert final["state"] == "final"
        assert final["stopReason"] == "stop"
        message = final["message"]
        assert message["role"] == "assistant"
        assert message["content"] == [{"type": "text", "text": "echo: x y"}]
        assert isinstance(message["seq"], int)
        assert isinstance(message["id"], str)
        assistant = [p["data"] for p in agent if p["stream"] == "assistant"]
        assert [d["delta"] for d in assistant] == ["echo: ", "x ", "y"]
        assert assistant[-1]["text"] == "echo: x y"


async def test_chat_deltas_are_throttled_per_run(services: Runtime, events: WireRecorder) -> None:
    services.runs.runner = EchoRunner(delay_ms=0)
    words = " ".join(f"w{i}" for i in range(60))
    await (await services.runs.send(session_key="main", message=words, idempotency_key="f")).done
    await events.settled()
    assert len([p for p in agent_events(events, "f") if p["stream"] == "assistant"]) == 61
    assert len([p for p in chat_events(events, "f") if p["state"] == "delta"]) == 1

    services.runs.runner = EchoRunner(delay_ms=CHAT_DELTA_INTERVAL_MS + 30)
    await (await services.runs.send(session_key="main", message="a b", idempotency_key="s")).done
    await events.settled()
    deltas = [p["message"]["content"][0]["text"] for p in chat_events(events, "s")[:-1]]
    assert deltas == ["echo: ", "echo: a ", "echo: a b"]


class BurstRunner:
    """Two quick deltas, then a pause longer than the throttle interval."""

    async def run(self, ctx: RunContext) -> RunOutput:
        await ctx.emit_text("a")
        await ctx.emit_text("b")
        await asyncio.sleep(CHAT_DELTA_INTERVAL_MS * 2 / 1000)
        return RunOutput()


async def test_a_throttled_delta_is_sent_when_the_interval_ends(
    services: Runtime, events: WireRecorder
) -> None:
    services.runs.runner = BurstRunner()
    outcome = await (
        await services.runs.send(session_key="main", message="m", idempotency_key="b")
    ).done
    assert outcome.text == "ab"
    await events.settled()
    chat = chat_events(events, "b")
    assert [(p["state"], p["message"]["content"][0]["text"]) for p in chat] == [
        ("delta", "a"),
        ("delta", "ab"),
        ("final", "ab"),
    ]
    flags = [e.drop_if_slow for e in events if e.name == "chat"]
    assert flags == [True, True, False]


async def test_tool_activity_and_history_reach_the_runner(
    services: Runtime, events: WireRecorder
) -> None:
    services.runs.runner = ToolRunner()
    outcome = await (
        await services.runs.send(session_key="main", message="q", idempotency_key="t")
    ).done
    assert outcome.text == "answer 42 after 1 messages"
    await events.settled()
    tools = [p["data"] for p in agent_events(events, "t") if p["stream"] == "tool"]
    assert tools == [
        {"phase": "start", "name": "lookup", "toolCallId": "call-1", "args": {"q": "q"}},
        {"phase": "update", "name": "lookup", "toolCallId": "call-1", "partialResult": "half"},
        {
            "phase": "result",
            "name": "lookup",
            "toolCallId": "call-1",
            "result": {"answer": 42},
            "isError": False,
        },
    ]
    final = chat_events(events, "t")[-1]
    assert final["usage"] == {"input": 3, "output": 4}


class LateRunner:
    """Keeps a reference to its context and emits after the run ended."""

    ctx: RunContext | None = None

    async def run(self, ctx: RunContext) -> RunOutput:
        self.ctx = ctx
        return RunOutput(text="done")


async def test_emits_after_the_end_are_ignored(services: Runtime, events: WireRecorder) -> None:
    runner = LateRunner()
    services.runs.runner = runner
    await (await services.runs.send(session_key="main", message="m", idempotency_key="l")).done
    await events.settled()
    count = len(events)
    assert runner.ctx is not None
    await runner.ctx.emit_text("ghost")
    await runner.ctx.emit_tool("start", "t", "c")
    await events.settled()
    assert len(events) == count
