"""``chat.history``: contents, limits, clipping, unknown sessions."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.agents.echo import EchoRunner
from clawline.testing.live_gateway import RunningGateway
from tests.gateway.wire import WireClient


async def converse(client: WireClient, *messages: str, key: str = "main") -> None:
    for n, text in enumerate(messages):
        await client.ok(
            "chat.send", {"sessionKey": key, "message": text, "idempotencyKey": f"{key}{n}"}
        )
        await client.ok("agent.wait", {"runId": f"{key}{n}"})


def texts(history: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"][0]["text"]) for m in history["messages"]]


async def test_history_holds_the_conversation(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    await gw.runtime.call(gw.runtime.catalog.patch, "main", {"thinkingLevel": "high"})
    await converse(client, "one", "two")
    history = await client.ok("chat.history", {"sessionKey": "main"})
    entry = gw.runtime.store.get("agent:main:main")
    assert entry is not None
    assert history["sessionKey"] == "agent:main:main"
    assert history["sessionId"] == entry.session_id
    assert (history["thinkingLevel"], history["fastMode"], history["verboseLevel"]) == (
        "high",
        None,
        None,
    )
    assert texts(history) == [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "two"),
        ("assistant", "echo: two"),
    ]
    first = history["messages"][0]
    assert first["seq"] == 1
    assert first["id"] == f"{entry.session_id}:1"
    assert isinstance(first["timestamp"], int)
    assert history["messages"][1]["stopReason"] == "stop"


async def test_limit_keeps_the_last_messages(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    await converse(client, "one", "two", "three")
    history = await client.ok("chat.history", {"sessionKey": "main", "limit": 3})
    assert texts(history) == [
        ("assistant", "echo: two"),
        ("user", "three"),
        ("assistant", "echo: three"),
    ]
    assert [m["seq"] for m in history["messages"]] == [4, 5, 6]


async def test_long_text_is_clipped_with_a_marker(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    await converse(client, "x" * 50)
    history = await client.ok("chat.history", {"sessionKey": "main", "maxChars": 20})
    user, reply = history["messages"]
    assert user["content"][0] == {
        "type": "text",
        "text": "x" * 20 + "…[truncated: 30 more characters]",
        "truncated": True,
    }
    assert reply["content"][0]["text"] == "echo: " + "x" * 14 + "…[truncated: 36 more characters]"
    whole = await client.ok("chat.history", {"sessionKey": "main"})
    assert whole["messages"][0]["content"][0]["text"] == "x" * 50


async def test_an_unknown_session_has_no_messages(client: WireClient) -> None:
    history = await client.ok("chat.history", {"sessionKey": "agent:main:nobody"})
    assert history == {
        "sessionKey": "agent:main:nobody",
        "sessionId": None,
        "messages": [],
        "thinkingLevel": None,
        "fastMode": None,
        "verboseLevel": None,
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "invalid chat.history params: sessionKey is required"),
        ({"sessionKey": "m", "limit": 0}, "invalid chat.history params: limit must be >= 1"),
        ({"sessionKey": "m", "limit": 1001}, "invalid chat.history params: limit must be <= 1000"),
        ({"sessionKey": "m", "maxChars": 0}, "invalid chat.history params: maxChars must be >= 1"),
        (
            {"sessionKey": "m", "maxChars": 500_001},
            "invalid chat.history params: maxChars must be <= 500000",
        ),
        ({"sessionKey": "m", "before": 3}, "invalid chat.history params: unknown key 'before'"),
        ({"sessionKey": "a b"}, "invalid session key: whitespace"),
    ],
)
async def test_history_refusals(client: WireClient, params: dict[str, Any], message: str) -> None:
    frame = await client.call("chat.history", params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"].startswith(message)


async def test_the_answer_fits_six_mebibytes(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    await converse(client, *(f"{n}" + "y" * 499_999 for n in range(7)))
    history = await client.ok(
        "chat.history", {"sessionKey": "main", "maxChars": 500_000}, timeout=20
    )
    seqs = [m["seq"] for m in history["messages"]]
    assert seqs == list(range(15 - len(seqs), 15))
    assert 10 <= len(seqs) < 14
    assert sum(len(m["content"][0]["text"]) for m in history["messages"]) <= 6 * 1024 * 1024
