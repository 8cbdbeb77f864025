"""Helpers for the acp spawn runtime tests: the tiny agent's config and log, process checks,
recorded ACP traffic (validated against the v1 schema), spawning through the real tool."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent

from clawline.collab.acp.child_agent import AgentProcess
from clawline.runtime import Runtime
from tests.acp.schema_check import Sender, traffic_problems
from tests.collab.support import MAIN, invoke, tool_ctx
from tests.collab.test_spawn_lineage import spawn_tool

__all__ = [
    "MAIN",
    "TINY",
    "Traffic",
    "acp_config",
    "alive",
    "calls",
    "cwd_of",
    "environment_of",
    "eventually",
    "eventually_async",
    "gone",
    "log_entries",
    "pids",
    "spawn",
]

TINY = Path(__file__).with_name("tiny_agent.py")


def acp_config(log: Path, *, env: Mapping[str, str] | None = None, **acp: Any) -> dict[str, Any]:
    """A config mapping with one ACP agent, ``tiny`` (grace 0.3 s unless ``acp`` says)."""
    section: dict[str, Any] = {
        "shutdownGraceSeconds": 0.3,
        "agents": {
            "tiny": {
                "command": [sys.executable, str(TINY)],
                "env": {"TINY_LOG": str(log), **(env or {})},
            }
        },
    }
    section.update(acp)
    return {"acp": section}


def log_entries(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def calls(log: Path, method: str) -> list[dict[str, Any]]:
    """The params of every ``method`` the tiny agents handled."""
    return [entry["params"] for entry in log_entries(log) if entry.get("call") == method]


def pids(log: Path) -> list[int]:
    return [int(entry["pid"]) for entry in log_entries(log) if "pid" in entry]


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, it was read
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


async def eventually_async(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def gone(pid: int, timeout: float = 10.0) -> None:
    await eventually(lambda: not alive(pid), timeout)


class Traffic:
    """Records every message of every agent connection; :meth:`problems` validates each
    connection's exchange against the ACP v1 schema."""

    def __init__(self) -> None:
        self.connections: dict[int, list[tuple[Sender, dict[str, Any]]]] = {}

    def __call__(self, process: AgentProcess, event: StreamEvent) -> None:
        sender: Sender = "client" if event.direction is StreamDirection.OUTGOING else "agent"
        self.connections.setdefault(id(process), []).append((sender, event.message))

    def sent(self, method: str) -> list[dict[str, Any]]:
        """The params of every ``method`` clawline sent."""
        return [
            message.get("params") or {}
            for exchange in self.connections.values()
            for sender, message in exchange
            if sender == "client" and message.get("method") == method
        ]

    def problems(self) -> list[str]:
        return [p for exchange in self.connections.values() for p in traffic_problems(exchange)]


async def spawn(services: Runtime, key: str = MAIN, **args: Any) -> dict[str, Any]:
    """``sessions_spawn`` (runtime ``acp``, agent ``tiny`` unless given) from ``key``."""
    args.setdefault("runtime", "acp")
    return await invoke(spawn_tool(services), tool_ctx(services, key), **args)


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode() for key, value in pairs}


def cwd_of(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/cwd")
