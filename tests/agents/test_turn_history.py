"""Reading a transcript back for a model: ordering, pairing, and the run's own message."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from clawline.agents.conversation import model_messages
from clawline.agents.providers.base import ModelMessage, StreamItem, ToolCall
from clawline.runtime import Runtime
from tests.agents.turn_support import EchoTool, ScriptedProvider, calls, install, text


def msg(seq: int, role: str, body: str = "", **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "role": role, "content": [{"type": "text", "text": body}], **extra}


def call(seq: int, call_id: str, say: str = "") -> dict[str, Any]:
    return msg(seq, "assistant", say, toolCalls=[{"id": call_id, "name": "t", "arguments": {}}])


def result(seq: int, call_id: str, body: str = "{}") -> dict[str, Any]:
    return msg(seq, "tool", body, toolCallId=call_id, name="t", isError=False)


def shape(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    return [
        (m.role, m.tool_call_id or ",".join(c.id for c in m.tool_calls) or m.content)
        for m in messages
    ]


def test_results_follow_their_calls_and_the_own_message_goes_last() -> None:
    history = [
        msg(1, "user", "one"),
        call(2, "a"),
        msg(3, "user", "two"),  # queued while run one was in its tool round
        result(4, "a"),
        msg(5, "assistant", "first answer"),
        msg(6, "user", "three"),  # queued behind run two
    ]
    assert shape(model_messages(history, current_seq=3)) == [
        ("user", "one"),
        ("assistant", "a"),
        ("tool", "a"),
        ("assistant", "first answer"),
        ("user", "two"),
    ]


def test_calls_without_results_and_results_without_calls_are_dropped() -> None:
    history = [
        msg(1, "user", "go"),
        call(2, "lost", say="trying"),  # the run was killed before the result
        result(3, "stray"),
        call(4, "gone"),
        msg(5, "assistant", "partial", stopReason="aborted"),
        msg(6, "user", "again"),
    ]
    assert shape(model_messages(history, current_seq=6)) == [
        ("user", "go"),
        ("assistant", "trying"),
        ("assistant", "partial"),
        ("user", "again"),
    ]


def test_attachments_and_unknown_roles() -> None:
    image = {"type": "image", "mimeType": "image/png", "data": "AAAA", "fileName": "a.png"}
    history: list[dict[str, Any]] = [
        {"seq": 1, "role": "user", "content": [{"type": "text", "text": "look"}, image]},
        {"seq": 2, "role": "system", "content": "ignored"},
        {"seq": 3, "role": "user", "content": [image]},
    ]
    assert [m.content for m in model_messages(history)] == [
        "look\n[image attached: a.png]",
        "[image attached: a.png]",
    ]
    arguments = model_messages([call(1, "x"), result(2, "x", '{"ok": true}')])
    assert arguments[0].tool_calls == [ToolCall("x", "t", {})]


async def test_a_queued_run_answers_its_own_message(services: Runtime) -> None:
    gate = asyncio.Event()

    class Gate(EchoTool):
        async def invoke(self, ctx: Any, args: Any) -> Any:
            await gate.wait()
            return await super().invoke(ctx, args)

    def answer(messages: Sequence[ModelMessage]) -> list[StreamItem]:
        return text(f"answer to {messages[-1].content}")

    provider = ScriptedProvider(calls(ToolCall("c1", "echo")), answer, answer)
    install(services, provider, Gate())
    first = await services.runs.send(session_key="main", message="one", idempotency_key="1")
    while not provider.seen:
        await asyncio.sleep(0.005)
    second = await services.runs.send(session_key="main", message="two", idempotency_key="2")
    gate.set()
    assert (await first.done).text == 'answer to {"status": "ok", "echo": {}}'
    assert (await second.done).text == "answer to two"
    assert [m.content for m in provider.seen[1].messages if m.role == "user"] == ["one"]
