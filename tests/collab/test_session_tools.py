"""sessions_list, sessions_history and sessions_yield (docs/collaboration.md)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import orjson
import pytest

from clawline.agents.messages import MESSAGE_EVENT
from clawline.agents.tools.base import Tool, ToolResult
from clawline.collab.session_tools import SessionsYieldTool
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from clawline.types import JSONObject
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, config, invoke, tool_ctx, tool_of

CHILD = "agent:main:subagent:child"
GRANDCHILD = "agent:main:subagent:grandchild"
OTHER = "agent:main:dashboard:other"
FOREIGN = "agent:reviewer:main"
CRON = "agent:main:cron:nightly"
GROUP = "agent:main:discord:group:dev"

yielding = SessionsYieldTool()


def listing(services: Runtime) -> Tool:
    return tool_of(services, "sessions_list")


def history(services: Runtime) -> Tool:
    return tool_of(services, "sessions_history")


async def add(services: Runtime, key: str, changes: dict[str, Any] | None = None) -> None:
    await services.call(services.catalog.patch, key, changes or {})


async def say(services: Runtime, key: str, role: str, text: str, **extra: Any) -> None:
    data: JSONObject = {"role": role, "content": [{"type": "text", "text": text}], **extra}
    await services.call(services.catalog.append, key, MESSAGE_EVENT, data)


async def family(services: Runtime) -> None:
    await add(services, MAIN)
    await add(services, CHILD, {"spawnedBy": MAIN, "label": "helper"})
    await add(services, GRANDCHILD, {"spawnedBy": CHILD})
    await add(services, OTHER)
    await add(services, FOREIGN)


def keys_of(details: JSONObject) -> list[str]:
    sessions = details["sessions"]
    assert isinstance(sessions, list)
    assert details["count"] == len(sessions)
    return sorted(str(row["key"]) for row in sessions if isinstance(row, dict))


# --- sessions_list -----------------------------------------------------------------------------


async def test_list_shows_what_the_visibility_allows(make_services: MakeServices) -> None:
    tree = await make_services()
    await family(tree)
    assert keys_of(await invoke(listing(tree), tool_ctx(tree, MAIN))) == [CHILD, "main"]
    assert keys_of(await invoke(listing(tree), tool_ctx(tree, CHILD))) == [CHILD, GRANDCHILD]
    own = await make_services(config(visibility="self"))
    await family(own)
    assert keys_of(await invoke(listing(own), tool_ctx(own, CHILD))) == [CHILD]
    agent = await make_services(config(visibility="agent"))
    await family(agent)
    assert keys_of(await invoke(listing(agent), tool_ctx(agent, MAIN))) == [
        OTHER,
        CHILD,
        GRANDCHILD,
        "main",
    ]
    everyone = await make_services(config(visibility="all", a2a=True))
    await family(everyone)
    assert FOREIGN in keys_of(await invoke(listing(everyone), tool_ctx(everyone, MAIN)))
    disabled = await make_services(config(visibility="all"))
    await family(disabled)
    assert FOREIGN not in keys_of(await invoke(listing(disabled), tool_ctx(disabled, MAIN)))


async def test_list_applies_the_limit_before_visibility(make_services: MakeServices) -> None:
    clock = FakeClock()
    services = await make_services(clock=clock)
    await add(services, MAIN)
    await add(services, CHILD, {"spawnedBy": MAIN})
    for index in range(3):
        clock.advance(1000)
        await add(services, f"agent:main:dashboard:d{index}")
    assert keys_of(await invoke(listing(services), tool_ctx(services, MAIN), limit=3)) == []
    assert keys_of(await invoke(listing(services), tool_ctx(services, MAIN), limit=5)) == [
        CHILD,
        "main",
    ]
    assert keys_of(await invoke(listing(services), tool_ctx(services, MAIN))) == [CHILD, "main"]


async def test_list_filters_by_kind_and_activity(make_services: MakeServices) -> None:
    clock = FakeClock()
    services = await make_services(config(visibility="agent"), clock=clock)
    await add(services, MAIN)
    await add(services, CRON)
    clock.advance(10 * 60_000)
    await add(services, GROUP)
    ctx = tool_ctx(services, MAIN)
    assert keys_of(await invoke(listing(services), ctx, kinds=["cron"])) == [CRON]
    assert keys_of(await invoke(listing(services), ctx, kinds=["GROUP", "main", "bogus"])) == [
        GROUP,
        "main",
    ]
    assert keys_of(await invoke(listing(services), ctx, kinds=["bogus"])) == [CRON, GROUP, "main"]
    assert keys_of(await invoke(listing(services), ctx, activeMinutes=5)) == [GROUP]


async def test_list_rows(make_services: MakeServices) -> None:
    services = await make_services(config(visibility="agent"))
    await add(services, MAIN, {"model": "offline", "lastChannel": "discord", "sendPolicy": "allow"})
    await add(services, CHILD, {"spawnedBy": MAIN, "label": "helper", "status": "running"})
    await add(services, CRON)
    rows = {
        row["key"]: row
        for row in (await invoke(listing(services), tool_ctx(services, MAIN)))["sessions"]
        if isinstance(row, dict)
    }
    main = rows["main"]
    assert main["kind"] == "main"
    assert main["agentId"] == "main"
    assert main["channel"] == "discord"
    assert main["lastChannel"] == "discord"
    assert main["model"] == "offline"
    assert main["sendPolicy"] == "allow"
    assert main["childSessions"] == [CHILD]
    assert "spawnedBy" not in main
    assert "messages" not in main
    child = rows[CHILD]
    assert (child["kind"], child["channel"], child["spawnedBy"]) == ("other", "unknown", "main")
    assert (child["label"], child["status"]) == ("helper", "running")
    assert isinstance(child["sessionId"], str)
    assert isinstance(child["updatedAt"], int)
    assert rows[CRON]["channel"] == "internal"
    assert rows[CRON]["kind"] == "cron"


async def test_list_messages(make_services: MakeServices) -> None:
    services = await make_services()
    await add(services, MAIN)
    for index in range(25):
        await say(services, MAIN, "user", f"question {index}")
        await say(services, MAIN, "tool", f"tool output {index}", toolCallId=f"c{index}")
        await say(services, MAIN, "assistant", f"answer {index} sk-abcdefghijklmnopqrstuvwx")
    rows = (await invoke(listing(services), tool_ctx(services, MAIN), messageLimit=50))["sessions"]
    assert isinstance(rows, list)
    messages = rows[0]["messages"]
    assert isinstance(messages, list)
    assert len(messages) <= 20
    assert all(m["role"] != "tool" for m in messages)
    assert messages[-1]["content"] == [{"type": "text", "text": "answer 24 [REDACTED]"}]
    few = (await invoke(listing(services), tool_ctx(services, MAIN), messageLimit=2))["sessions"]
    assert [m["role"] for m in few[0]["messages"]] == ["assistant"]
    none = (await invoke(listing(services), tool_ctx(services, MAIN), messageLimit=0))["sessions"]
    assert "messages" not in none[0]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"limit": 0}, "limit must be a number >= 1"),
        ({"activeMinutes": 0}, "activeMinutes must be a number >= 1"),
        ({"messageLimit": -1}, "messageLimit must be a number >= 0"),
        ({"kinds": "main"}, "kinds must be an array of strings"),
    ],
)
async def test_list_argument_errors(services: Runtime, args: dict[str, Any], error: str) -> None:
    details = await invoke(listing(services), tool_ctx(services, MAIN), **args)
    assert details == {"status": "error", "error": error}


# --- sessions_history --------------------------------------------------------------------------


async def test_history_by_key_and_by_session_id(services: Runtime) -> None:
    await family(services)
    await say(services, CHILD, "user", "do it")
    await say(services, CHILD, "assistant", "done")
    entry = services.store.get(CHILD)
    assert entry is not None
    for reference in (CHILD, entry.session_id):
        details = await invoke(history(services), tool_ctx(services, MAIN), sessionKey=reference)
        assert details["sessionKey"] == CHILD
        messages = details["messages"]
        assert isinstance(messages, list)
        assert [(m["role"], m["content"][0]["text"]) for m in messages] == [
            ("user", "do it"),
            ("assistant", "done"),
        ]
        assert details["truncated"] is False
        assert details["droppedMessages"] is False
        assert details["contentTruncated"] is False
        assert details["contentRedacted"] is False
        assert details["bytes"] == len(orjson.dumps(messages))


async def test_history_refusals(services: Runtime) -> None:
    await family(services)
    ctx = tool_ctx(services, MAIN)
    assert await invoke(history(services), ctx) == {
        "status": "error",
        "error": "sessionKey required",
    }
    unknown = str(uuid.uuid4())
    assert await invoke(history(services), ctx, sessionKey=unknown) == {
        "status": "error",
        "error": f"Session not found: {unknown} (use the full sessionKey from sessions_list)",
    }
    assert await invoke(history(services), ctx, sessionKey=GRANDCHILD) == {
        "status": "forbidden",
        "error": "Session history visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree).",
    }
    assert await invoke(history(services), ctx, sessionKey=FOREIGN) == {
        "status": "forbidden",
        "error": "Session history visibility is restricted. Set tools.sessions.visibility=all "
        "to allow cross-agent access.",
    }


async def test_history_a2a_disabled_message(make_services: MakeServices) -> None:
    services = await make_services(config(visibility="all"))
    await family(services)
    assert await invoke(history(services), tool_ctx(services, MAIN), sessionKey=FOREIGN) == {
        "status": "forbidden",
        "error": "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to "
        "allow cross-agent access.",
    }


async def test_history_strips_tools_unless_asked(services: Runtime) -> None:
    await family(services)
    await say(services, CHILD, "user", "read it")
    await say(
        services,
        CHILD,
        "assistant",
        "",
        toolCalls=[{"id": "c1", "name": "read_file", "arguments": {"path": "a"}}],
    )
    await say(services, CHILD, "tool", '{"text":"x"}', toolCallId="c1", name="read_file")
    await say(services, CHILD, "assistant", "it says x")
    ctx = tool_ctx(services, MAIN)
    plain = (await invoke(history(services), ctx, sessionKey=CHILD))["messages"]
    assert [m["role"] for m in plain] == ["user", "assistant"]
    full = (await invoke(history(services), ctx, sessionKey=CHILD, includeTools=True))["messages"]
    assert [m["role"] for m in full] == ["user", "assistant", "tool", "assistant"]
    assert full[1]["toolCalls"][0]["name"] == "read_file"
    last_two = (await invoke(history(services), ctx, sessionKey=CHILD, limit=2))["messages"]
    assert [m["role"] for m in last_two] == ["assistant"]
    bad = await invoke(history(services), ctx, sessionKey=CHILD, includeTools="yes")
    assert bad == {"status": "error", "error": "includeTools must be true or false"}


async def test_history_sanitises_text(services: Runtime) -> None:
    await family(services)
    await say(
        services,
        CHILD,
        "assistant",
        "<think>secret plan</think>Result: token=abcdef123456 and <|im_end|>"
        "\n<relevant-memories>old stuff</relevant-memories>done",
    )
    await say(services, CHILD, "user", "x" * 5000)
    details = await invoke(history(services), tool_ctx(services, MAIN), sessionKey=CHILD)
    messages = details["messages"]
    assert isinstance(messages, list)
    assert messages[0]["content"][0]["text"] == "Result: token=[REDACTED] and \ndone"
    clipped = messages[1]["content"][0]["text"]
    assert clipped == "x" * 4000 + "\n…(truncated)…"
    assert details["contentRedacted"] is True
    assert details["contentTruncated"] is True
    assert details["truncated"] is True
    assert details["droppedMessages"] is False


async def test_history_fits_80_kib(services: Runtime) -> None:
    await family(services)
    for index in range(40):
        await say(services, CHILD, "user", f"{index:02d}" + "y" * 3000)
    details = await invoke(history(services), tool_ctx(services, MAIN), sessionKey=CHILD)
    messages = details["messages"]
    assert isinstance(messages, list)
    assert 0 < len(messages) < 40
    assert messages[-1]["content"][0]["text"].startswith("39")
    assert isinstance(details["bytes"], int)
    assert details["bytes"] <= 80 * 1024
    assert (details["droppedMessages"], details["truncated"]) == (True, True)


async def test_history_omits_a_message_too_large_alone(services: Runtime) -> None:
    await family(services)
    blocks = [{"type": "text", "text": "z" * 3900} for _ in range(30)]
    await services.call(
        services.catalog.append, CHILD, MESSAGE_EVENT, {"role": "assistant", "content": blocks}
    )
    details = await invoke(history(services), tool_ctx(services, MAIN), sessionKey=CHILD)
    messages = details["messages"]
    assert isinstance(messages, list)
    assert len(messages) == 1
    assert messages[0]["content"] == "[sessions_history omitted: message too large]"
    assert messages[0]["role"] == "assistant"
    assert details["droppedMessages"] is True


async def test_history_of_a_session_without_messages(services: Runtime) -> None:
    await family(services)
    details = await invoke(history(services), tool_ctx(services, MAIN), sessionKey="main")
    assert (details["sessionKey"], details["messages"]) == ("main", [])


# --- sessions_yield ----------------------------------------------------------------------------


async def test_yield_ends_the_turn(services: Runtime) -> None:
    result = await yielding.invoke(tool_ctx(services, MAIN), {})
    assert result == ToolResult({"status": "yielded", "message": "Turn yielded."}, ends_turn=True)
    result = await yielding.invoke(tool_ctx(services, MAIN), {"message": "waiting for kids"})
    assert result.details == {"status": "yielded", "message": "waiting for kids"}
    assert (result.ends_turn, result.is_error) == (True, False)


async def test_yield_errors(services: Runtime) -> None:
    ctx = tool_ctx(services, MAIN)
    no_session = await yielding.invoke(replace(ctx, session_key=""), {})
    assert no_session.details == {"status": "error", "error": "No session context"}
    assert not no_session.ends_turn
    no_turn = await yielding.invoke(replace(ctx, run_id=""), {})
    assert no_turn.details == {"status": "error", "error": "Yield not supported in this context"}
    assert not no_turn.ends_turn
