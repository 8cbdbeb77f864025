"""The offline model: every directive, the turn kinds, and spawn waves."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence

import pytest

from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    ProviderError,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolCallDone,
)
from clawline.agents.providers.offline import OfflineProvider, plan_reply
from clawline.agents.steps import (
    A2A_CONTEXT_PREFIX,
    ANNOUNCE_STEP_MESSAGE,
    COMPLETION_EVENT_MARKER,
    REPLY_STEP_PREFIX,
)
from clawline.types import JSON

SYSTEM = 'You are the agent "main" of a clawline gateway.'


def user(text: str) -> ModelMessage:
    return ModelMessage("user", text)


def calls_of(messages: Sequence[ModelMessage]) -> list[tuple[str, dict[str, JSON]]]:
    plan = plan_reply(SYSTEM, messages)
    return [(call.name, dict(call.arguments)) for call in plan.calls]


def answered(messages: Sequence[ModelMessage], system: str = SYSTEM) -> str:
    plan = plan_reply(system, messages)
    assert plan.calls == []
    return plan.text


def round_trip(
    messages: list[ModelMessage], results: Sequence[JSON], system: str = SYSTEM
) -> list[ModelMessage]:
    """Append the offline model's tool calls and the given results (one per call)."""
    plan = plan_reply(system, messages)
    assert len(plan.calls) == len(results), plan
    out = [*messages, ModelMessage("assistant", "", tool_calls=plan.calls)]
    for call, details in zip(plan.calls, results, strict=True):
        out.append(ModelMessage("tool", json.dumps(details), tool_call_id=call.id, name=call.name))
    return out


def completion_event(task: str, status: str = "completed successfully") -> str:
    return "\n".join(
        [
            "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>",
            COMPLETION_EVENT_MARKER,
            "source: subagent",
            f"task: {task}",
            f"status: {status}",
            "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>",
        ]
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("spawn: review the plan", ("sessions_spawn", {"task": "review the plan"})),
        ("spawn critic: find flaws", ("sessions_spawn", {"task": "find flaws", "label": "critic"})),
        (
            "spawn thread scout: look around",
            ("sessions_spawn", {"task": "look around", "thread": True, "label": "scout"}),
        ),
        ("spawn thread: look", ("sessions_spawn", {"task": "look", "thread": True})),
        (
            "send critic: how is it going",
            ("sessions_send", {"label": "critic", "message": "how is it going"}),
        ),
        (
            "send agent:main:other: hello: there",
            ("sessions_send", {"sessionKey": "agent:main:other", "message": "hello: there"}),
        ),
        (
            "write notes/a.txt: hello world",
            ("write_file", {"path": "notes/a.txt", "content": "hello world"}),
        ),
        ("write a.txt: one\\ntwo", ("write_file", {"path": "a.txt", "content": "one\ntwo"})),
        ("read notes/a.txt", ("read_file", {"path": "notes/a.txt"})),
        ("list notes", ("list_files", {"path": "notes"})),
        ("list", ("list_files", {})),
        ("yield", ("sessions_yield", {})),
    ],
)
def test_each_tool_directive_becomes_its_tool_call(
    line: str, expected: tuple[str, dict[str, JSON]]
) -> None:
    assert calls_of([user(line)]) == [expected]


def test_several_directives_are_called_in_one_round_and_then_summarised() -> None:
    messages = [user("write a.txt: hi\nread a.txt\nplain words are ignored")]
    assert [name for name, _ in calls_of(messages)] == ["write_file", "read_file"]
    after = round_trip(messages, [{"status": "ok", "bytes": 2}, {"status": "ok", "content": "hi"}])
    assert answered(after) == "results: write_file ok; read_file ok: hi"


def test_errors_and_repeated_results_are_summarised_in_one_line() -> None:
    messages = [user("spawn: a\nspawn: b\nspawn: c\nread missing.txt")]
    accepted = {"status": "accepted", "childSessionKey": "k"}
    after = round_trip(
        messages,
        [accepted, accepted, accepted, {"status": "error", "error": "file not found\nmissing"}],
    )
    assert answered(after) == (
        "results: sessions_spawn accepted x3; read_file error: file not found\\nmissing"
    )


def test_a_message_without_directives_is_echoed() -> None:
    assert answered([user("hello there")]) == "echo: hello there"
    assert answered([user("earlier"), ModelMessage("assistant", "x"), user("now")]) == "echo: now"


def test_reply_answers_exactly_and_wins_over_the_summary() -> None:
    assert answered([user("reply: REPLY_SKIP")]) == "REPLY_SKIP"
    messages = [user("write a: b\nreply: wrote it")]
    assert answered(round_trip(messages, [{"status": "ok"}])) == "wrote it"


async def collect(provider: OfflineProvider, messages: Sequence[ModelMessage]) -> list[StreamItem]:
    stream = provider.stream(model="offline", system=SYSTEM, messages=messages, tools=[])
    return [item async for item in stream]


async def test_the_provider_streams_words_then_calls_then_finish() -> None:
    items = await collect(OfflineProvider(delay_ms=0), [user("reply: one two three")])
    assert items[:3] == [TextDelta("one "), TextDelta("two "), TextDelta("three")]
    assert isinstance(items[3], Finish)
    assert (items[3].stop_reason, items[3].usage.output) == ("stop", 3)
    items = await collect(OfflineProvider(delay_ms=0), [user("read a.txt")])
    assert isinstance(items[0], ToolCallDone)
    assert items[0].call.name == "read_file"
    assert isinstance(items[-1], Finish)
    assert items[-1].stop_reason == "toolUse"


async def test_sleep_waits_before_answering() -> None:
    started = time.monotonic()
    items = await collect(OfflineProvider(delay_ms=0), [user("sleep 120\nreply: awake")])
    assert time.monotonic() - started >= 0.11
    assert items[0] == TextDelta("awake")


async def test_sleep_is_cancellable() -> None:
    task = asyncio.create_task(collect(OfflineProvider(delay_ms=0), [user("sleep 60000")]))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_fail_makes_the_turn_fail_with_the_text() -> None:
    with pytest.raises(ProviderError, match=r"^the model gave up$"):
        await collect(OfflineProvider(delay_ms=0), [user("fail: the model gave up")])


def test_a_spawned_child_reads_the_task_of_its_subagent_message() -> None:
    message = (
        "[Subagent Context] You are running as a subagent (depth 1/1). Results auto-announce "
        "to your requester; do not busy-poll for status.\n\n[Subagent Task]: write r.txt: x"
    )
    assert calls_of([user(message)]) == [("write_file", {"path": "r.txt", "content": "x"})]
    plain = "[Subagent Context] You are a subagent.\n\n[Subagent Task]: summarise the plan"
    assert answered([user(plain)]) == "echo: summarise the plan"


def test_agent_to_agent_steps_skip_unless_told_to_reply() -> None:
    reply_step = f"{REPLY_STEP_PREFIX}\nCurrent agent: Agent 1 (requester)\nTurn 1 of 5."
    assert answered([user("how are you")], f"{SYSTEM}\n\n{reply_step}") == "REPLY_SKIP"
    assert answered([user("reply: fine, thanks")], f"{SYSTEM}\n\n{reply_step}") == "fine, thanks"
    assert answered([user(ANNOUNCE_STEP_MESSAGE)]) == "ANNOUNCE_SKIP"
    round_one = f"{SYSTEM}\n\n{A2A_CONTEXT_PREFIX}\nAgent 1 (requester) session: agent:main:main"
    assert answered([user("status?")], round_one) == "echo: status?"


def test_a_completion_event_is_acknowledged_in_one_line() -> None:
    event = completion_event("review the plan")
    assert answered([user("hi"), ModelMessage("assistant", "ok"), user(event)]) == (
        "ack: review the plan completed successfully"
    )
    two = completion_event("a") + "\n" + completion_event("b", "failed: boom")
    assert answered([user(two)]) == "ack: a completed successfully; b failed: boom"


ACCEPTED = {"status": "accepted", "childSessionKey": "agent:main:subagent:x", "runId": "r"}
REFUSED = {
    "status": "forbidden",
    "error": "sessions_spawn has reached max active children for this session (2/2)",
}


def test_a_spawn_wave_spawns_one_per_round_until_refused_then_resumes_on_completions() -> None:
    messages = [user("spawn 3 x: count to ten")]
    assert calls_of(messages) == [("sessions_spawn", {"task": "count to ten"})]
    messages = round_trip(messages, [ACCEPTED])
    messages = round_trip(messages, [ACCEPTED])
    messages = round_trip(messages, [REFUSED])  # the limit: this turn stops spawning
    summary = answered(messages)
    assert summary.startswith("results: sessions_spawn accepted x2; sessions_spawn forbidden")
    messages = [*messages, ModelMessage("assistant", summary), user(completion_event("t"))]
    # a completion frees a slot: the wave resumes with the third (and last) child
    assert calls_of(messages) == [("sessions_spawn", {"task": "count to ten"})]
    messages = round_trip(messages, [ACCEPTED])
    final = answered(messages)
    assert final == "ack: t completed successfully | results: sessions_spawn accepted"
    messages = [*messages, ModelMessage("assistant", final), user(completion_event("t"))]
    assert answered(messages) == "ack: t completed successfully"  # all 3 spawned


def test_a_newer_instruction_ends_an_older_wave() -> None:
    messages = round_trip([user("spawn 5 x: work")], [REFUSED])
    messages = [*messages, ModelMessage("assistant", "x"), user("something else")]
    messages = [*messages, ModelMessage("assistant", "y"), user(completion_event("work"))]
    assert answered(messages) == "ack: work completed successfully"


def test_wave_directives_of_the_first_round_come_with_the_other_tools() -> None:
    names = [name for name, _ in calls_of([user("write a: b\nspawn 2 x: go")])]
    assert names == ["write_file", "sessions_spawn"]


def test_tool_call_ids_are_unique_within_a_turn() -> None:
    messages = [user("spawn 3 x: go")]
    seen: set[str] = set()
    for _ in range(3):
        plan = plan_reply(SYSTEM, messages)
        call: ToolCall = plan.calls[0]
        assert call.id not in seen
        seen.add(call.id)
        messages = round_trip(messages, [ACCEPTED])


# --- wave slots: stable ids, so a spawn redone after a crash finds its child ---------------------


def wave_ids(messages: Sequence[ModelMessage]) -> list[str]:
    return [call.id for call in plan_reply(SYSTEM, messages).calls]


def test_wave_slots_are_named_after_the_wave_message_seq() -> None:
    messages = [
        ModelMessage("user", "earlier", seq=3),
        ModelMessage("user", "spawn 3 x: go", seq=8),
    ]
    assert wave_ids(messages) == ["offline-wave-8-0"]
    messages = round_trip(messages, [ACCEPTED])
    assert wave_ids(messages) == ["offline-wave-8-1"]
    # the identity does not move when older history is no longer read
    assert wave_ids(messages[1:]) == ["offline-wave-8-1"]
    messages = round_trip(round_trip(messages, [ACCEPTED]), [ACCEPTED])
    assert plan_reply(SYSTEM, messages).calls == []  # three slots accepted: the wave is done


def test_a_slot_cut_off_by_a_crash_is_asked_for_again_under_the_same_id() -> None:
    messages = round_trip([ModelMessage("user", "spawn 3 x: go", seq=4)], [ACCEPTED])
    cut = wave_ids(messages)
    assert cut == ["offline-wave-4-1"]
    # the crash: the call's result never reached the transcript, so the model is shown nothing
    # of it (conversation.model_messages drops a call without a result)
    messages = [*messages, ModelMessage("user", completion_event("go"), seq=9)]
    assert wave_ids(messages) == cut  # the spawn answers the child it already made
    messages = round_trip(messages, [ACCEPTED])
    assert wave_ids(messages) == ["offline-wave-4-2"]


def test_a_refused_slot_gets_a_new_id_but_an_interrupted_one_does_not() -> None:
    messages = round_trip([ModelMessage("user", "spawn 2 x: go", seq=1)], [REFUSED])
    messages = [*messages, ModelMessage("assistant", "x"), user(completion_event("t"))]
    assert wave_ids(messages) == ["offline-wave-1-0-r1"]
    plan = plan_reply(SYSTEM, messages)
    stand_in = {"status": "error", "error": "sessions_spawn was interrupted: the run was stopped"}
    interrupted = ModelMessage(
        "tool",
        json.dumps(stand_in),
        tool_call_id=plan.calls[0].id,
        name="sessions_spawn",
        is_error=True,
        interrupted=True,
    )
    messages = [
        *messages,
        ModelMessage("assistant", "", tool_calls=plan.calls),
        interrupted,
        ModelMessage("assistant", "aborted"),
        user(completion_event("t")),
    ]
    assert wave_ids(messages) == ["offline-wave-1-0-r1"]


def test_the_first_free_slot_is_asked_for_whatever_order_slots_were_accepted_in() -> None:
    def result(slot: int) -> list[ModelMessage]:
        call = ToolCall(f"offline-wave-2-{slot}", "sessions_spawn", {"task": "go"})
        return [
            ModelMessage("assistant", "", tool_calls=[call]),
            ModelMessage("tool", json.dumps(ACCEPTED), tool_call_id=call.id, name=call.name),
        ]

    # slot 1 and 3 accepted, slot 0's result lost (a crash), slot 2 never asked for
    messages = [ModelMessage("user", "spawn 5 x: go", seq=2), *result(1), *result(3)]
    assert wave_ids(messages) == ["offline-wave-2-0"]
    messages = [*messages, *result(0)]
    assert wave_ids(messages) == ["offline-wave-2-2"]  # 0 and 1 done, 3 still done
    messages = [*messages, *result(2)]
    assert wave_ids(messages) == ["offline-wave-2-4"]
    assert plan_reply(SYSTEM, [*messages, *result(4)]).calls == []
