"""Tool call ids as durable keys: the turn loop makes a reused id unique and keeps the id of a
call redone after a crash (:mod:`clawline.agents.call_ids`), and a call the crash left without
a result never reaches a real provider unanswered (:func:`model_messages`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawline.agents.call_ids import CallIds
from clawline.agents.conversation import (
    convert_all,
    model_messages,
    tool_call_message,
    tool_result_message,
)
from clawline.agents.providers.base import ToolCall
from clawline.agents.tools.base import ToolResult
from clawline.config import Settings
from clawline.runtime import Runtime
from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeToolCall
from tests.agents.turn_support import EchoTool, ScriptedProvider, calls, install, text

TASK = {"task": "count to ten"}


def spawn_call(call_id: str, arguments: Mapping[str, Any] = TASK) -> ToolCall:
    return ToolCall(call_id, "sessions_spawn", dict(arguments))


def asked(seq: int, *items: ToolCall) -> dict[str, Any]:
    return {"seq": seq, **tool_call_message("", items)}


def answered(seq: int, call: ToolCall, *, interrupted: bool = False) -> dict[str, Any]:
    result = ToolResult({"status": "accepted"})
    return {"seq": seq, **tool_result_message(call, result, interrupted=interrupted)}


def user(seq: int, text_: str) -> dict[str, Any]:
    return {"seq": seq, "role": "user", "content": [{"type": "text", "text": text_}]}


# --- the rule ----------------------------------------------------------------------------------


def test_an_id_with_a_result_is_rewritten_deterministically() -> None:
    first = spawn_call("call_0")
    history = [user(1, "go"), asked(2, first), answered(3, first)]
    ids = CallIds(convert_all(history))
    assert ids.assign(spawn_call("call_0")).id == "call_0-dup1"
    assert ids.assign(spawn_call("call_0")).id == "call_0-dup2"  # taken by this turn now
    assert ids.assign(spawn_call("call_9")).id == "call_9"  # new ids are kept
    # the same history gives the same ids
    assert CallIds(convert_all(history)).assign(spawn_call("call_0")).id == "call_0-dup1"
    again = [*history, asked(4, spawn_call("call_0-dup1")), answered(5, spawn_call("call_0-dup1"))]
    assert CallIds(convert_all(again)).assign(spawn_call("call_0")).id == "call_0-dup2"


def test_a_dangling_id_is_kept_for_its_redo_only() -> None:
    cut = spawn_call("offline-wave-7-3")
    history = [user(7, "spawn 5 x: count to ten"), asked(8, cut), user(9, "completion")]
    assert (
        CallIds(convert_all(history)).assign(spawn_call("offline-wave-7-3")).id
        == "offline-wave-7-3"
    )
    other_task = spawn_call("offline-wave-7-3", {"task": "something else"})
    assert CallIds(convert_all(history)).assign(other_task).id == "offline-wave-7-3-dup1"
    other_tool = ToolCall("offline-wave-7-3", "write_file", TASK)
    assert CallIds(convert_all(history)).assign(other_tool).id == "offline-wave-7-3-dup1"
    # a reused id whose rewrite was cut off: the redo reaches the same rewritten id
    used = spawn_call("call_0")
    cut_rewrite = spawn_call("call_0-dup1")
    crashed = [asked(1, used), answered(2, used), asked(3, cut_rewrite)]
    assert CallIds(convert_all(crashed)).assign(spawn_call("call_0")).id == "call_0-dup1"


def test_an_interrupted_stand_in_is_no_result() -> None:
    aborted = spawn_call("call_5")
    history = [asked(1, aborted), answered(2, aborted, interrupted=True)]
    assert history[1]["interrupted"] is True
    assert CallIds(convert_all(history)).assign(spawn_call("call_5")).id == "call_5"
    finished = [*history, asked(3, aborted), answered(4, aborted)]
    assert CallIds(convert_all(finished)).assign(spawn_call("call_5")).id == "call_5-dup1"


def test_ids_repeated_within_a_reply_or_empty_are_made_unique() -> None:
    ids = CallIds([])
    assigned = [ids.assign(spawn_call(call_id)).id for call_id in ("call_0", "call_0", "", "")]
    assert assigned == ["call_0", "call_0-dup1", "call-dup1", "call-dup2"]


# --- what providers get ------------------------------------------------------------------------


def test_a_dangling_call_is_dropped_and_a_redo_replaces_an_interrupted_attempt() -> None:
    cut, aborted, redone = spawn_call("c1"), spawn_call("c2"), spawn_call("c2")
    history = [
        user(1, "go"),
        {"seq": 2, **tool_call_message("spawning", [cut])},  # the crash cut it off
        asked(3, aborted),
        answered(4, aborted, interrupted=True),
        asked(5, redone),
        answered(6, redone),
        user(7, "next"),
    ]
    messages = model_messages(history, current_seq=7)
    shape = [(m.role, m.content if m.role != "tool" else m.tool_call_id) for m in messages]
    assert shape == [
        ("user", "go"),
        ("assistant", "spawning"),
        ("assistant", ""),
        ("tool", "c2"),
        ("user", "next"),
    ]
    assert messages[1].tool_calls == []
    assert messages[2].tool_calls == [redone]
    assert [m.seq for m in messages] == [1, 2, 5, 6, 7]
    assert not messages[3].interrupted


def test_a_reused_id_pairs_each_result_with_its_own_call() -> None:
    one, two = spawn_call("call_0", {"task": "one"}), spawn_call("call_0", {"task": "two"})
    history = [
        asked(1, one),
        {"seq": 2, **tool_result_message(one, ToolResult("first"))},
        asked(3, two),
        {"seq": 4, **tool_result_message(two, ToolResult("second"))},
    ]
    messages = model_messages(history)
    pairs = [
        (m.tool_calls[0].arguments["task"], n.content)
        for m, n in zip(messages[::2], messages[1::2], strict=True)
    ]
    assert pairs == [("one", "first"), ("two", "second")]


def test_an_interrupted_result_without_a_redo_reaches_the_model() -> None:
    aborted = spawn_call("c1")
    messages = model_messages([asked(1, aborted), answered(2, aborted, interrupted=True)])
    assert [m.role for m in messages] == ["assistant", "tool"]
    assert messages[1].interrupted


async def test_the_turn_loop_rewrites_a_reused_id_end_to_end(services: Runtime) -> None:
    """A provider answering ``c0`` in every turn: the second turn's call runs as ``c0-dup1``
    (the tool sees it), and the model then reads two distinct ids."""
    provider = ScriptedProvider(
        calls(ToolCall("c0", "echo", {"n": 1})),
        text("one"),
        calls(ToolCall("c0", "echo", {"n": 2})),
        text("two"),
    )
    echo = EchoTool()
    install(services, provider, echo)
    for n in (1, 2):
        ack = await services.runs.send(session_key="main", message=f"m{n}", idempotency_key=f"{n}")
        assert (await ack.done).status == "done"
    assert [ctx.tool_call_id for ctx in echo.contexts] == ["c0", "c0-dup1"]
    seen = provider.seen[3].messages
    assert [call.id for m in seen for call in m.tool_calls] == ["c0", "c0-dup1"]
    assert [m.tool_call_id for m in seen if m.role == "tool"] == ["c0", "c0-dup1"]


async def test_openai_gets_unique_answered_tool_calls_after_a_crash(tmp_path: Path) -> None:
    """Through the real OpenAI SDK against the fake server, whose ids are ``call_0`` in every
    reply: a call left without a result by a crash is not sent, and a reused id is sent
    rewritten, each call followed by its result."""
    script = [
        FakeReply(tool_calls=(FakeToolCall("echo", {"n": 1}),)),
        FakeReply(text="first done"),
        FakeReply(tool_calls=(FakeToolCall("echo", {"n": 2}),)),
        FakeReply(text="second done"),
    ]
    async with FakeModelServer(script) as server:
        raw = {
            "agents": {"defaults": {"model": "openai/test"}},
            "models": {
                "providers": {"openai": {"baseUrl": server.openai_base_url, "maxRetries": 0}}
            },
        }
        services = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
        services.runs.tools.register(EchoTool())
        try:
            ack = await services.runs.send(session_key="main", message="one", idempotency_key="1")
            assert (await ack.done).text == "first done"
            dangling = tool_call_message("trying", [ToolCall("call_7", "echo", {"n": 0})])
            await services.call(
                services.catalog.append, "agent:main:main", "message", {**dangling, "runId": "x"}
            )
            ack = await services.runs.send(session_key="main", message="two", idempotency_key="2")
            assert (await ack.done).text == "second done"
        finally:
            await services.runs.shutdown()
            services.close()
    sent = server.requests[3].body["messages"]
    call_ids = [call["id"] for m in sent for call in m.get("tool_calls") or []]
    assert call_ids == ["call_0", "call_0-dup1"]
    for index, message in enumerate(sent):
        for offset, call in enumerate(message.get("tool_calls") or []):
            answer = sent[index + 1 + offset]
            assert (answer["role"], answer["tool_call_id"]) == ("tool", call["id"])
    assert {"role": "assistant", "content": "trying"} in sent
