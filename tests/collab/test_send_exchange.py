"""sessions_send: the ping-pong after round 1 and the announce step on the target."""

from __future__ import annotations

import pytest

from clawline.agents.tools.base import Tool
from clawline.runtime import Runtime
from clawline.testing.wire import WireRecorder
from tests.collab.conftest import MakeServices
from tests.collab.support import (
    MAIN,
    Call,
    config,
    invoke,
    runner_of,
    settle,
    tool_ctx,
    tool_of,
    transcript,
)

TARGET = "agent:main:subagent:target"
ANNOUNCE = "Agent-to-agent announce step."
SILENT_SENTENCE = (
    'If you want to remain silent, reply exactly "ANNOUNCE_SKIP". Any other reply will be '
    "posted to the target channel. After this reply, the agent-to-agent conversation is over."
)


def send(services: Runtime) -> Tool:
    return tool_of(services, "sessions_send")


async def setup(make_services: MakeServices, turns: int | None = None) -> Runtime:
    services = await make_services(config(turns=turns))
    await services.call(services.catalog.patch, MAIN, {})
    await services.call(services.catalog.patch, TARGET, {"spawnedBy": MAIN})
    return services


async def exchange(services: Runtime, message: str = "hello") -> list[Call]:
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message=message, sessionKey=TARGET
    )
    assert details["status"] == "ok"
    await settle(services)
    return runner_of(services).calls[1:]


def steps(calls: list[Call]) -> list[tuple[str, str]]:
    return [(call.session_key, call.message) for call in calls]


def announces(services: Runtime) -> list[dict[str, object]]:
    return [dict(m) for m in transcript(services, TARGET) if m.get("a2aAnnounce") is True]


async def test_ping_pong_alternates_starting_on_the_requester(make_services: MakeServices) -> None:
    services = await setup(make_services, turns=3)
    runner = runner_of(services)
    runner.script(TARGET, "t-round-1", "t-turn-2", "ANNOUNCE_SKIP")
    runner.script(MAIN, "r-turn-1", "r-turn-3")
    calls = await exchange(services)
    assert steps(calls) == [
        (MAIN, "t-round-1"),
        (TARGET, "r-turn-1"),
        (MAIN, "t-turn-2"),
        (TARGET, ANNOUNCE),
    ]
    assert all(
        (call.lane, call.origin, call.deliver) == ("nested", "agent", False) for call in calls
    )
    first, second, third = (call.extra or "" for call in calls[:3])
    assert first == "\n".join(
        [
            "Agent-to-agent reply step:",
            "Current agent: Agent 1 (requester).",
            "Turn 1 of 3.",
            f"Agent 1 (requester) session: {MAIN}.",
            "Agent 1 (requester) channel: webchat.",
            f"Agent 2 (target) session: {TARGET}.",
            "Agent 2 (target) channel: webchat.",
            'If you want to stop the ping-pong, reply exactly "REPLY_SKIP".',
        ]
    )
    assert "Current agent: Agent 2 (target).\nTurn 2 of 3." in second
    assert "Current agent: Agent 1 (requester).\nTurn 3 of 3." in third
    announce = calls[3].extra or ""
    assert announce.splitlines()[0] == "Agent-to-agent announce step:"
    assert "Original request: hello" in announce
    assert "Round 1 reply: t-round-1" in announce
    assert "Latest reply: r-turn-3" in announce
    assert announce.endswith(SILENT_SENTENCE)
    assert announces(services) == []  # ANNOUNCE_SKIP


@pytest.mark.parametrize("stop", ["REPLY_SKIP", "  REPLY_SKIP \n", ""])
async def test_ping_pong_stops_on_reply_skip_or_an_empty_reply(
    make_services: MakeServices, stop: str
) -> None:
    services = await setup(make_services)
    runner = runner_of(services)
    runner.script(TARGET, "t-round-1", "t-turn-2", "ANNOUNCE_SKIP")
    runner.script(MAIN, "r-turn-1", stop)
    calls = await exchange(services)
    assert steps(calls) == [
        (MAIN, "t-round-1"),
        (TARGET, "r-turn-1"),
        (MAIN, "t-turn-2"),
        (TARGET, ANNOUNCE),
    ]
    assert "Latest reply: t-turn-2" in (calls[-1].extra or "")


async def test_no_reply_does_not_stop_the_ping_pong(make_services: MakeServices) -> None:
    services = await setup(make_services, turns=2)
    runner = runner_of(services)
    runner.script(TARGET, "t-round-1", "REPLY_SKIP", "ANNOUNCE_SKIP")
    runner.script(MAIN, "NO_REPLY")
    calls = await exchange(services)
    assert steps(calls) == [(MAIN, "t-round-1"), (TARGET, "NO_REPLY"), (TARGET, ANNOUNCE)]


@pytest.mark.parametrize(("configured", "expected"), [(9, 5), (5, 5), (1, 1), (0, 0), (-1, 0)])
async def test_max_ping_pong_turns_is_clamped(
    make_services: MakeServices, configured: int, expected: int
) -> None:
    services = await setup(make_services, turns=configured)
    runner = runner_of(services)
    runner.default = "more"
    runner.script(TARGET, "t-round-1")
    calls = await exchange(services)
    assert len(calls) == expected + 1
    assert steps(calls)[-1] == (TARGET, ANNOUNCE)
    if expected:
        assert f"Turn {expected} of {expected}." in (calls[-2].extra or "")


async def test_the_announce_reply_is_posted_to_the_target(make_services: MakeServices) -> None:
    services = await setup(make_services, turns=0)
    runner_of(services).script(TARGET, "t-round-1", "  All done: 42.  ")
    async with WireRecorder(services) as seen:
        await exchange(services)
        await seen.settled()
    posted = announces(services)
    assert len(posted) == 1
    assert posted[0]["role"] == "assistant"
    assert posted[0]["content"] == [{"type": "text", "text": "All done: 42."}]
    published = [
        event.payload["message"]
        for event in seen
        if event.name == "session.message" and event.payload["sessionKey"] == TARGET
    ]
    assert any(isinstance(m, dict) and m.get("a2aAnnounce") is True for m in published)


@pytest.mark.parametrize("silent", ["ANNOUNCE_SKIP", " NO_REPLY ", ""])
async def test_skip_tokens_suppress_the_announce(make_services: MakeServices, silent: str) -> None:
    services = await setup(make_services, turns=0)
    runner_of(services).script(TARGET, "t-round-1", silent)
    calls = await exchange(services)
    assert steps(calls) == [(TARGET, ANNOUNCE)]
    assert announces(services) == []


async def test_no_round_one_reply_no_exchange(make_services: MakeServices) -> None:
    services = await setup(make_services)
    runner_of(services).script(TARGET, "   ")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="hello", sessionKey=TARGET
    )
    assert (details["status"], details["reply"]) == ("ok", None)
    await settle(services)
    assert len(runner_of(services).calls) == 1


async def test_sending_to_itself_skips_the_ping_pong(make_services: MakeServices) -> None:
    services = await setup(make_services)
    runner_of(services).script(MAIN, "self reply", "ANNOUNCE_SKIP")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="note", sessionKey="main"
    )
    assert (details["status"], details["reply"], details["sessionKey"]) == (
        "ok",
        "self reply",
        "main",
    )
    await settle(services)
    assert steps(runner_of(services).calls) == [(MAIN, "note"), (MAIN, ANNOUNCE)]


async def test_a_failed_step_ends_the_ping_pong(make_services: MakeServices) -> None:
    services = await setup(make_services)
    runner = runner_of(services)

    async def broken(ctx: object) -> str:
        raise RuntimeError("step failed")

    runner.script(TARGET, "t-round-1", "ANNOUNCE_SKIP")
    runner.script(MAIN, broken)
    calls = await exchange(services)
    assert steps(calls) == [(MAIN, "t-round-1"), (TARGET, ANNOUNCE)]
