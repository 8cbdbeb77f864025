"""``clawline acp`` as a protocol endpoint: initialize, routing, errors, stdout hygiene."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import acp
import pytest
from acp.schema import InitializeResponse

from clawline import __version__
from tests.acp.conftest import BridgeFactory
from tests.acp.support import bridge_command

EXPECTED_INITIALIZE = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": False, "sse": False},
        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
    },
    "agentInfo": {"name": "clawline-acp", "title": "clawline ACP Gateway", "version": __version__},
    "authMethods": [],
}


async def test_initialize_result(acp_bridge: BridgeFactory) -> None:
    bridge = await acp_bridge()
    assert await bridge.initialize() == EXPECTED_INITIALIZE
    # a client that speaks a newer version gets the bridge's own (1) back
    newer = await bridge.call("initialize", {"protocolVersion": 2})
    assert newer["protocolVersion"] == 1
    typed = await bridge.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
    assert isinstance(typed, InitializeResponse)
    assert typed.agent_capabilities is not None
    assert typed.agent_capabilities.load_session


@pytest.mark.parametrize(
    "method",
    [
        "authenticate",
        "logout",
        "session/set_mode",
        "session/set_config_option",
        "session/delete",
        "session/fork",
        "nes/start",
        "no/such/method",
        "_clawline.dev/anything",
    ],
)
async def test_unknown_methods_are_method_not_found(acp_bridge: BridgeFactory, method: str) -> None:
    bridge = await acp_bridge()
    with pytest.raises(acp.RequestError) as caught:
        await bridge.call(method, {"sessionId": "agent:main:main", "methodId": "x"})
    assert caught.value.code == -32601
    assert str(caught.value) == "Method not found"
    assert caught.value.data == {"method": method}


async def test_unknown_notifications_are_ignored(acp_bridge: BridgeFactory) -> None:
    bridge = await acp_bridge()
    await bridge.notify("_clawline.dev/ping", {})
    await bridge.notify("no/such/notification", {"x": 1})
    await bridge.notify("session/cancel", {"sessionId": "never-created"})
    await bridge.notify("session/cancel", {"wrong": "shape"})
    assert (await bridge.initialize())["protocolVersion"] == 1
    assert bridge.process.returncode is None


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
        ("session/close", {"sessionId": "nope"}),
        ("session/load", {"sessionId": "agent:main:missing", "cwd": "/w", "mcpServers": []}),
        ("session/resume", {"sessionId": "agent:main:missing", "cwd": "/w"}),
        ("session/load", {"sessionId": "not a key at all", "cwd": "/w", "mcpServers": []}),
    ],
)
async def test_unknown_session_id_is_resource_not_found(
    acp_bridge: BridgeFactory, method: str, params: dict[str, object]
) -> None:
    bridge = await acp_bridge()
    with pytest.raises(acp.RequestError) as caught:
        await bridge.call(method, params)
    assert caught.value.code == -32002
    session_id = params["sessionId"]
    assert str(caught.value) == f"Session not found: {session_id}"
    assert caught.value.data == {"details": str(caught.value), "uri": session_id}


async def test_invalid_params(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge()
    with pytest.raises(acp.RequestError) as missing:
        await bridge.call("session/new", {"cwd": str(tmp_path)})  # mcpServers is required
    assert missing.value.code == -32602
    assert isinstance(missing.value.data, dict)
    assert missing.value.data["errors"]
    with pytest.raises(acp.RequestError) as no_prompt:
        await bridge.call("session/prompt", {"sessionId": "x"})
    assert no_prompt.value.code == -32602
    server = {"name": "fs", "command": "/bin/mcp", "args": [], "env": []}
    with pytest.raises(acp.RequestError) as mcp:
        await bridge.call("session/new", {"cwd": str(tmp_path), "mcpServers": [server]})
    assert mcp.value.code == -32602
    assert "does not support MCP servers" in str(mcp.value)


async def test_requests_run_concurrently(acp_bridge: BridgeFactory, tmp_path: Path) -> None:
    bridge = await acp_bridge("--no-prefix-cwd")
    session = await bridge.new_session(str(tmp_path))
    slow = asyncio.ensure_future(
        bridge.call(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "sleep 800"}]},
        )
    )
    listed = await asyncio.wait_for(bridge.call("session/list", {}), 5)
    assert not slow.done()
    assert isinstance(listed["sessions"], list)
    assert (await slow) == {"stopReason": "end_turn"}


async def test_stdout_carries_only_acp_and_logs_go_to_stderr(
    acp_bridge: BridgeFactory, tmp_path: Path
) -> None:
    bridge = await acp_bridge("--verbose")
    await bridge.initialize()
    session = await bridge.new_session(str(tmp_path))
    await bridge.call(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    )
    await bridge.notify("session/cancel", {"sessionId": "unknown"})
    await bridge.call("session/list", {})
    assert bridge.recorder.unparsed_lines == 0
    await asyncio.sleep(0.2)
    assert "nothing to cancel in unknown" in bridge.stderr_text()


async def test_an_unreachable_gateway_is_one_error_line(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *bridge_command("--url", "ws://127.0.0.1:1"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CLAWLINE_STATE_DIR": str(tmp_path / "state")},
    )
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 1
    assert out == b""
    assert err.decode().startswith("error: cannot connect to ws://127.0.0.1:1")
    assert len(err.decode().strip().splitlines()) == 1


async def test_stdin_from_dev_null_ends_the_bridge_at_once(tmp_path: Path) -> None:
    """``< /dev/null`` cannot be watched by epoll: it is read on a thread, and its end of input
    ends the bridge cleanly (it used to hang after a PermissionError)."""
    process = await asyncio.create_subprocess_exec(
        *bridge_command(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CLAWLINE_STATE_DIR": str(tmp_path / "state")},
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert (process.returncode, out) == (0, b""), err.decode()
    assert b"Traceback" not in err
