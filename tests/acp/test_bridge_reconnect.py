"""The bridge and a gateway that goes away: turns in flight fail, later requests reconnect."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import acp
import pytest

from tests.acp.conftest import BridgeFactory
from tests.acp.support import TOKEN


@asynccontextmanager
async def gateway_process(state: Path, port: int = 0) -> AsyncIterator[tuple[str, int]]:
    """``clawline gateway run`` as a subprocess: its URL and pid; killed on exit if alive."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clawline",
        "--state-dir",
        str(state),
        "gateway",
        "run",
        "--port",
        str(port),
        "--auth",
        "token",
        "--token",
        TOKEN,
        "--log-level",
        "warning",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        yield line.decode().split()[-1], process.pid
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_a_lost_gateway_fails_the_turn_and_the_bridge_reconnects(
    acp_bridge: BridgeFactory, tmp_path: Path
) -> None:
    state = tmp_path / "remote-gateway"
    async with gateway_process(state) as (url, pid):
        port = int(url.rsplit(":", 1)[1])
        bridge = await acp_bridge("--no-prefix-cwd", url=url)
        key = await bridge.new_session(str(tmp_path))
        prompt = {"sessionId": key, "prompt": [{"type": "text", "text": "sleep 30000"}]}
        turn = asyncio.ensure_future(bridge.call("session/prompt", prompt))
        await asyncio.sleep(1.0)
        assert not turn.done()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(acp.RequestError) as lost:
            await asyncio.wait_for(turn, 15)
        assert lost.value.code == -32603
        assert "connection was lost" in str(lost.value)
        with pytest.raises(acp.RequestError) as down:
            await bridge.call("session/list", {})
        assert down.value.code == -32603
    async with gateway_process(state, port):
        again = {"sessionId": key, "prompt": [{"type": "text", "text": "back again"}]}
        assert await bridge.call("session/prompt", again) == {"stopReason": "end_turn"}
        listed = await bridge.call("session/list", {})
        assert [row["sessionId"] for row in listed["sessions"]] == [key]
