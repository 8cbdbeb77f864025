"""Session mapping: session/new key resolution, load (replay first), resume, close; the
gateway the bridge uses without ``--url``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import acp
import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import gateway_client, seed, text_of

FRESH_KEY = re.compile(
    r"agent:main:acp-bridge:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


async def gateway_row(gateway: RunningGateway, key: str) -> dict[str, Any] | None:
    entry = await gateway.runtime.call(gateway.runtime.catalog.get, key)
    return None if entry is None else entry.to_json()


async def test_new_session_gets_a_fresh_gateway_key(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge()
    result = await bridge.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    first = result["sessionId"]
    assert FRESH_KEY.fullmatch(first), first
    assert result["_meta"] == {"sessionKey": first}
    second = await bridge.new_session(str(tmp_path))
    assert second != first
    assert FRESH_KEY.fullmatch(second)
    assert await gateway_row(acp_gateway, first) is None  # no row until the first prompt
    await bridge.call("session/prompt", {"sessionId": first, "prompt": text("hi")})
    assert await gateway_row(acp_gateway, first) is not None
    listed = [row["sessionId"] for row in (await bridge.call("session/list", {}))["sessions"]]
    assert listed == [first]


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"sessionKey": "work"}, "agent:main:work"),
        ({"session": "agent:main:work"}, "agent:main:work"),
        ({"key": "WORK"}, "agent:main:work"),
        ({"sessionKey": "main"}, "agent:main:main"),
        ({"sessionLabel": "Deep Work"}, "agent:main:work"),
        ({"label": "Deep Work"}, "agent:main:work"),
        ({"sessionLabel": "Deep Work", "sessionKey": "other"}, "agent:main:work"),
        ({"sessionKey": "work", "requireExisting": True}, "agent:main:work"),
        ({"sessionKey": "not-yet", "requireExistingSession": False}, "agent:main:not-yet"),
    ],
)
async def test_new_session_meta_chooses_the_gateway_session(
    acp_bridge: BridgeFactory,
    acp_gateway: RunningGateway,
    tmp_path: Path,
    meta: dict[str, Any],
    expected: str,
) -> None:
    await seed(acp_gateway, [("agent:main:work", {"label": "Deep Work"})])
    bridge = await acp_bridge()
    assert await bridge.new_session(str(tmp_path), **meta) == expected


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"sessionLabel": "nope"}, "Unable to resolve session label: nope"),
        ({"sessionKey": "ghost", "requireExisting": True}, "Session key not found: ghost"),
        (
            {"key": "agent:x:ghost", "requireExistingSession": True},
            "Session key not found: agent:x:ghost",
        ),
    ],
)
async def test_new_session_resolution_errors(
    acp_bridge: BridgeFactory, tmp_path: Path, meta: dict[str, Any], message: str
) -> None:
    bridge = await acp_bridge()
    with pytest.raises(acp.RequestError) as caught:
        await bridge.new_session(str(tmp_path), **meta)
    assert caught.value.code == -32002
    assert str(caught.value) == message
    assert caught.value.data == {"details": message}


async def test_an_invalid_key_is_invalid_params(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge()
    with pytest.raises(acp.RequestError) as caught:
        await bridge.new_session(str(tmp_path), sessionKey="bad key")
    assert caught.value.code == -32602
    assert "invalid session key" in str(caught.value)


async def test_command_line_defaults(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    await seed(acp_gateway, [("agent:main:work", {"label": "Deep Work"})])
    by_key = await acp_bridge("--session", "work")
    assert await by_key.new_session(str(tmp_path)) == "agent:main:work"
    assert await by_key.new_session(str(tmp_path), sessionKey="other") == "agent:main:other"
    by_label = await acp_bridge("--session-label", "Deep Work")
    assert await by_label.new_session(str(tmp_path)) == "agent:main:work"
    strict = await acp_bridge("--session", "ghost", "--require-existing")
    with pytest.raises(acp.RequestError) as caught:
        await strict.new_session(str(tmp_path))
    assert str(caught.value) == "Session key not found: ghost"
    # the request's _meta overrides the command's --require-existing
    assert await strict.new_session(str(tmp_path), requireExisting=False) == "agent:main:ghost"


async def test_reset_session(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path), sessionKey="work")
    await bridge.call("session/prompt", {"sessionId": key, "prompt": text("remember me")})
    before = await gateway_row(acp_gateway, key)
    assert before is not None
    await bridge.new_session(str(tmp_path), sessionKey="work", resetSession=True)
    after = await gateway_row(acp_gateway, key)
    assert after is not None
    assert after["sessionId"] != before["sessionId"]
    async with gateway_client(acp_gateway) as client:
        history = await client.request("chat.history", {"sessionKey": key})
    assert isinstance(history, dict)
    assert history["messages"] == []
    # --reset-session on a session that does not exist yet resets nothing and succeeds
    resetting = await acp_bridge("--reset-session", "--session", "brand-new")
    assert await resetting.new_session(str(tmp_path)) == "agent:main:brand-new"


async def test_load_replays_the_history_before_answering(
    acp_bridge: BridgeFactory, tmp_path: Path
) -> None:
    writer = await acp_bridge()
    key = await writer.new_session("/w")  # a short [Working directory: /w] prefix
    await writer.call(
        "session/prompt", {"sessionId": key, "prompt": text("write notes.txt: hi\nlist")}
    )
    await writer.call("session/prompt", {"sessionId": key, "prompt": text("and now?")})

    reader = await acp_bridge()
    assert (
        await reader.call("session/load", {"sessionId": key, "cwd": "/w", "mcpServers": []}) == {}
    )
    answered_at = reader.recorder.index_of_response("session/load")
    notifications = [
        index
        for index, (sender, message) in enumerate(reader.recorder.traffic)
        if sender == "agent" and message.get("method") == "session/update"
    ]
    assert notifications
    assert max(notifications) < answered_at
    updates = reader.recorder.updates(key)
    kinds = [update["sessionUpdate"] for update in updates]
    assert kinds == [
        "user_message_chunk",
        "tool_call",
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "agent_message_chunk",
        "user_message_chunk",
        "agent_message_chunk",
        "session_info_update",
    ]
    assert text_of(updates, "user_message_chunk") == "write notes.txt: hi\nlistand now?"
    assert text_of(updates, "agent_message_chunk").startswith("results: write_file ok")
    assert updates[1]["title"] == "write_file"
    assert updates[1]["rawInput"] == {
        "path": "notes.txt",
        "content": "hi",
    }
    assert updates[3]["status"] == "completed"
    assert updates[3]["rawOutput"]["details"]["path"] == "notes.txt"
    chunks = [u for u in updates if u["sessionUpdate"].endswith("_chunk")]
    assert all(":" in chunk["messageId"] for chunk in chunks)
    assert len({chunk["messageId"] for chunk in chunks}) == len(chunks)
    info = updates[-1]
    assert info["_meta"]["sessionKey"] == key
    assert info["title"] == "write notes.txt: hi list"
    # the loaded session takes prompts
    await reader.call("session/prompt", {"sessionId": key, "prompt": text("more")})


async def test_resume_restores_without_replay(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    writer = await acp_bridge("--no-prefix-cwd")
    key = await writer.new_session(str(tmp_path))
    await writer.call("session/prompt", {"sessionId": key, "prompt": text("one")})
    reader = await acp_bridge("--no-prefix-cwd")
    assert await reader.call("session/resume", {"sessionId": key, "cwd": str(tmp_path)}) == {}
    assert [u["sessionUpdate"] for u in reader.recorder.updates()] == ["session_info_update"]
    await reader.call("session/prompt", {"sessionId": key, "prompt": text("two")})
    assert text_of(reader.recorder.updates(key), "agent_message_chunk") == "echo: two"


async def test_load_and_resume_under_another_id(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    await seed(acp_gateway, [("agent:main:work", {"label": "Deep Work"})])
    bridge = await acp_bridge("--no-prefix-cwd")
    params = {
        "sessionId": "editor-1",
        "cwd": "/w",
        "mcpServers": [],
        "_meta": {"sessionKey": "work"},
    }
    assert await bridge.call("session/load", params) == {}
    resumed = {"sessionId": "editor-2", "cwd": "/w", "_meta": {"sessionLabel": "Deep Work"}}
    assert await bridge.call("session/resume", resumed) == {}
    for session_id in ("editor-1", "editor-2"):
        await bridge.call("session/prompt", {"sessionId": session_id, "prompt": text(session_id)})
    async with gateway_client(acp_gateway) as client:
        history = await client.request("chat.history", {"sessionKey": "agent:main:work"})
    assert isinstance(history, dict)
    users = [m["content"][0]["text"] for m in history["messages"] if m["role"] == "user"]
    assert users == ["editor-1", "editor-2"]


async def test_close_forgets_the_session(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge()
    key = await bridge.new_session(str(tmp_path))
    await bridge.call("session/prompt", {"sessionId": key, "prompt": text("hi")})
    assert await bridge.call("session/close", {"sessionId": key}) == {}
    with pytest.raises(acp.RequestError) as caught:
        await bridge.call("session/prompt", {"sessionId": key, "prompt": text("again")})
    assert caught.value.code == -32002
    with pytest.raises(acp.RequestError) as twice:
        await bridge.call("session/close", {"sessionId": key})
    assert twice.value.code == -32002
    await bridge.call("session/resume", {"sessionId": key, "cwd": str(tmp_path)})
    await bridge.call("session/prompt", {"sessionId": key, "prompt": text("back")})


async def test_without_url_the_state_directory_gateway_is_used(
    acp_bridge: BridgeFactory, tmp_path: Path
) -> None:
    state = tmp_path / "shared-state"
    first = await acp_bridge("--verbose", "--no-prefix-cwd", url=None, state_dir=state)
    key = await first.new_session(str(tmp_path))
    await first.call("session/prompt", {"sessionId": key, "prompt": text("hello")})
    assert (state / "gateway.json").exists()
    assert "started an in-process gateway" in first.stderr_text()
    second = await acp_bridge("--verbose", url=None, state_dir=state)
    listed = await second.call("session/list", {})
    assert [row["sessionId"] for row in listed["sessions"]] == [key]
    assert "started an in-process gateway" not in second.stderr_text()
