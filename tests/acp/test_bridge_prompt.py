"""session/prompt: the chat.send it makes, the updates it streams, cancellation, limits."""

from __future__ import annotations

import asyncio
import base64
import re
from pathlib import Path
from typing import Any

import acp
import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import BridgeProcess, gateway_client, seed, text_of

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


async def history(gateway: RunningGateway, key: str) -> list[dict[str, Any]]:
    async with gateway_client(gateway) as client:
        result = await client.request("chat.history", {"sessionKey": key})
    assert isinstance(result, dict)
    messages: list[dict[str, Any]] = result["messages"]
    return messages


async def prompt(bridge: BridgeProcess, session_id: str, value: str) -> Any:
    return await bridge.call("session/prompt", {"sessionId": session_id, "prompt": text(value)})


async def until_running(gateway: RunningGateway, key: str) -> None:
    async with asyncio.timeout(10):
        while not gateway.runtime.runs.has_active_run(key):
            await asyncio.sleep(0.02)


async def test_prompt_streams_the_answer(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    assert await prompt(bridge, key, "one two three four") == {"stopReason": "end_turn"}
    updates = bridge.recorder.updates(key)
    chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) > 1
    assert text_of(updates, "agent_message_chunk") == "echo: one two three four"
    assert updates[-1]["sessionUpdate"] == "session_info_update"
    answered = bridge.recorder.index_of_response("session/prompt")
    last_update = max(
        i for i, (s, m) in enumerate(bridge.recorder.traffic) if m.get("method") == "session/update"
    )
    assert last_update < answered
    # the SDK client parsed every update too
    assert len(bridge.collector.updates) == len(updates)


async def test_chat_send_uses_the_run_id_as_idempotency_key(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge()
    key = await bridge.new_session(str(tmp_path))
    await prompt(bridge, key, "hi")
    await prompt(bridge, key, "hi")  # the same text twice: two runs, not a replay
    messages = await history(acp_gateway, key)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    run_ids = [m["runId"] for m in messages]
    assert all(UUID.fullmatch(run_id) for run_id in run_ids)
    assert run_ids[0] == run_ids[1] != run_ids[2] == run_ids[3]


async def test_working_directory_prefix(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    project = home / "proj"
    project.mkdir(parents=True)
    bridge = await acp_bridge(env={"HOME": str(home)})
    key = await bridge.new_session(str(project))
    await prompt(bridge, key, "with prefix")
    await bridge.call(
        "session/prompt",
        {"sessionId": key, "prompt": text("/status"), "_meta": {"prefixCwd": False}},
    )
    plain = await bridge.new_session("/srv/x", sessionKey="plain", prefixCwd=False)
    await prompt(bridge, plain, "no prefix")
    other = await bridge.new_session("/srv/x", sessionKey="other")
    await prompt(bridge, other, "elsewhere")
    users = [
        m["content"][0]["text"] for m in await history(acp_gateway, key) if m["role"] == "user"
    ]
    assert users == ["[Working directory: ~/proj]\n\nwith prefix", "/status"]
    plain_users = [m for m in await history(acp_gateway, plain) if m["role"] == "user"]
    assert plain_users[0]["content"][0]["text"] == "no prefix"
    other_users = [m for m in await history(acp_gateway, other) if m["role"] == "user"]
    assert other_users[0]["content"][0]["text"] == "[Working directory: /srv/x]\n\nelsewhere"


async def test_no_prefix_cwd_option(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    await bridge.call(
        "session/prompt", {"sessionId": key, "prompt": text("asked"), "_meta": {"prefixCwd": True}}
    )
    await prompt(bridge, key, "plain")
    users = [
        m["content"][0]["text"] for m in await history(acp_gateway, key) if m["role"] == "user"
    ]
    assert users == [f"[Working directory: {tmp_path}]\n\nasked", "plain"]


async def test_tool_calls_are_streamed(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    assert await prompt(bridge, key, "write a.txt: alpha\nread missing.txt") == {
        "stopReason": "end_turn"
    }
    updates = bridge.recorder.updates(key)
    tools = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert [(u["sessionUpdate"], u.get("title"), u["status"]) for u in tools] == [
        ("tool_call", "write_file", "in_progress"),
        ("tool_call_update", None, "completed"),
        ("tool_call", "read_file", "in_progress"),
        ("tool_call_update", None, "failed"),
    ]
    assert tools[0]["rawInput"] == {"path": "a.txt", "content": "alpha"}
    assert tools[0]["kind"] == "edit"
    assert tools[2]["kind"] == "read"
    assert tools[1]["rawOutput"]["details"]["path"] == "a.txt"
    assert tools[3]["rawOutput"]["isError"] is True
    first_text = next(
        i for i, u in enumerate(updates) if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert first_text > updates.index(tools[-1])


async def test_cancel_ends_the_turn_as_cancelled(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    turn = asyncio.ensure_future(prompt(bridge, key, "sleep 30000"))
    await until_running(acp_gateway, key)
    await bridge.conn.cancel(session_id=key)
    assert await asyncio.wait_for(turn, 10) == {"stopReason": "cancelled"}
    entry = await acp_gateway.runtime.call(acp_gateway.runtime.catalog.get, key)
    assert entry is not None
    assert entry.status == "killed"
    assert await prompt(bridge, key, "still here") == {"stopReason": "end_turn"}


async def test_cancel_right_after_the_prompt(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    turn = asyncio.ensure_future(prompt(bridge, key, "sleep 30000"))
    await asyncio.sleep(0)
    await bridge.notify("session/cancel", {"sessionId": key})
    assert await asyncio.wait_for(turn, 10) == {"stopReason": "cancelled"}


async def test_close_and_a_new_prompt_cancel_the_turn_in_flight(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    first = asyncio.ensure_future(prompt(bridge, key, "sleep 30000"))
    await until_running(acp_gateway, key)
    assert await asyncio.wait_for(prompt(bridge, key, "next"), 10) == {"stopReason": "end_turn"}
    assert await asyncio.wait_for(first, 10) == {"stopReason": "cancelled"}
    third = asyncio.ensure_future(prompt(bridge, key, "sleep 30000"))
    await until_running(acp_gateway, key)
    assert await bridge.call("session/close", {"sessionId": key}) == {}
    assert await asyncio.wait_for(third, 10) == {"stopReason": "cancelled"}


async def test_prompt_size_limit(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge()
    key = await bridge.new_session(str(tmp_path))
    with pytest.raises(acp.RequestError) as caught:
        await prompt(bridge, key, "é" * (1024 * 1024 + 1))  # 2 MiB + 2 bytes of UTF-8
    assert caught.value.code == -32602
    assert str(caught.value) == "Prompt exceeds maximum allowed size of 2097152 bytes"
    assert await acp_gateway.runtime.call(acp_gateway.runtime.catalog.get, key) is None
    assert await prompt(bridge, key, "x" * (2 * 1024 * 1024 - 100)) == {"stopReason": "end_turn"}


async def test_prompt_blocks_become_message_and_attachments(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    blocks = [
        {"type": "text", "text": "look at these"},
        {"type": "resource_link", "uri": "file:///w/spec.md", "name": "spec.md"},
        {"type": "resource", "resource": {"uri": "file:///w/a.py", "text": "print(1)"}},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {"uri": "file:///w/data.bin", "blob": PNG, "mimeType": "application/x"},
        },
    ]
    result = await bridge.call("session/prompt", {"sessionId": key, "prompt": blocks})
    assert result == {"stopReason": "end_turn"}
    user = next(m for m in await history(acp_gateway, key) if m["role"] == "user")
    content = user["content"]
    assert content[0] == {
        "type": "text",
        "text": "look at these\n[spec.md](file:///w/spec.md)\n[Resource: file:///w/a.py]\nprint(1)",
    }
    assert (content[1]["type"], content[1]["mimeType"]) == ("image", "image/png")
    assert (content[2]["type"], content[2]["fileName"]) == ("file", "data.bin")
    with pytest.raises(acp.RequestError) as audio:
        await bridge.call(
            "session/prompt",
            {"sessionId": key, "prompt": [{"type": "audio", "data": PNG, "mimeType": "audio/wav"}]},
        )
    assert audio.value.code == -32602


async def test_a_failed_run_ends_the_turn_with_its_error(
    acp_bridge: BridgeFactory, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    assert await prompt(bridge, key, "fail: the model is down") == {"stopReason": "end_turn"}
    said = text_of(bridge.recorder.updates(key), "agent_message_chunk")
    assert said.endswith("Error: the model is down")


async def test_session_info_update_carries_the_lineage(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    root = "agent:main:main"
    child = "agent:main:subagent:11111111-1111-4111-8111-111111111111"
    lineage = {
        "spawnedBy": root,
        "spawnDepth": 1,
        "subagentRole": "orchestrator",
        "subagentControlScope": "children",
        "spawnedWorkspaceDir": "/w/repo",
        "spawnedCwd": "/w/repo/pkg",
        "displayName": "Reviewer",
    }
    await seed(acp_gateway, [(root, {}), (child, lineage)])
    bridge = await acp_bridge("--no-prefix-cwd")
    await bridge.call("session/resume", {"sessionId": child, "cwd": "/w/repo/pkg"})
    await prompt(bridge, child, "review")
    infos = [
        u for u in bridge.recorder.updates(child) if u["sessionUpdate"] == "session_info_update"
    ]
    assert len(infos) == 2  # after the resume and after the prompt
    entry = await acp_gateway.runtime.call(acp_gateway.runtime.catalog.get, child)
    assert entry is not None
    assert infos[-1] == {
        "sessionUpdate": "session_info_update",
        "title": "Reviewer",
        "updatedAt": infos[-1]["updatedAt"],
        "_meta": {
            "sessionKey": child,
            "kind": "direct",
            "parentSessionId": root,
            "spawnedBy": root,
            "spawnDepth": 1,
            "subagentRole": "orchestrator",
            "subagentControlScope": "children",
            "spawnedWorkspaceDir": "/w/repo",
            "spawnedCwd": "/w/repo/pkg",
            "rootSessionKey": root,
            "traceId": entry.trace_id,
            "lineage": {"parent": root, "path": f"/{root}/{child}", "depth": 1},
        },
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", infos[-1]["updatedAt"])


async def test_a_run_aborted_elsewhere_ends_the_turn_as_cancelled(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    key = await bridge.new_session(str(tmp_path))
    turn = asyncio.ensure_future(prompt(bridge, key, "sleep 30000"))
    await until_running(acp_gateway, key)
    async with gateway_client(acp_gateway) as client:
        aborted = await client.request("chat.abort", {"sessionKey": key})
    assert isinstance(aborted, dict)
    assert aborted["aborted"] is True
    assert await asyncio.wait_for(turn, 10) == {"stopReason": "cancelled"}
