"""``clawline acp`` as a subprocess driven with raw bytes: for lines no ACP client would send.

:func:`raw_bridge` starts ``python -m clawline acp --url … --token …`` with stdin and stdout as
pipes (stderr to a file) and stops it on exit: stdin closed, then terminate, then kill, and the
process must be gone. :class:`RawBridge` writes lines as given and reads the answers as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.acp.support import STDOUT_LIMIT, TOKEN, bridge_command

__all__ = ["ANSWER_TIMEOUT_S", "RawBridge", "peak_rss", "raw_bridge"]

ANSWER_TIMEOUT_S = 20.0
_STOP_GRACE_S = 5.0


def peak_rss(pid: int) -> int:
    """``VmHWM`` of a process, in bytes: the most memory it has held at once."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


@dataclass
class RawBridge:
    process: asyncio.subprocess.Process
    stderr: Path

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    async def write(self, data: bytes) -> None:
        self.stdin.write(data)
        await self.stdin.drain()

    async def send(self, message: object) -> None:
        await self.write(orjson.dumps(message) + b"\n")

    async def receive(self) -> dict[str, Any]:
        """The next message the bridge writes (fails when none comes in time)."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), ANSWER_TIMEOUT_S)
        assert line.endswith(b"\n"), f"stdout ended: {line!r:.200}"
        message = orjson.loads(line)
        assert isinstance(message, dict), message
        return message

    async def call(self, method: str, params: object, request_id: int | str) -> dict[str, Any]:
        """Send a valid request; its answer (messages before it, e.g. updates, are skipped)."""
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = await self.receive()
            if "method" not in message and message.get("id") == request_id:
                return message

    def stderr_text(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")


@contextlib.asynccontextmanager
async def raw_bridge(url: str, tmp_path: Path, name: str = "raw") -> AsyncIterator[RawBridge]:
    stderr = tmp_path / f"{name}.stderr"
    env = {**os.environ, "CLAWLINE_STATE_DIR": str(tmp_path / f"{name}-state")}
    with stderr.open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            *bridge_command("--url", url, "--token", TOKEN),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            env=env,
            cwd=tmp_path,
            limit=STDOUT_LIMIT,
        )
    try:
        yield RawBridge(process, stderr)
    finally:
        await _stop(process)
    assert process.returncode is not None


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
        with contextlib.suppress(ConnectionError):
            await process.stdin.wait_closed()
    try:
        await asyncio.wait_for(process.wait(), _STOP_GRACE_S)
        return
    except TimeoutError:
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), _STOP_GRACE_S)
    except TimeoutError:
        process.kill()
        await process.wait()
