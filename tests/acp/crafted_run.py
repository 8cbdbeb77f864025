"""Running ``crafted_agent.py`` as a real subprocess and reading back the traffic it recorded."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawline.acp_client.link import AgentLink, spawned_agent

from .schema_check import traffic_problems

AGENT = Path(__file__).with_name("crafted_agent.py")


def agent_env(scenario: str, log: Path) -> dict[str, str]:
    return {"CRAFTED_SCENARIO": scenario, "CRAFTED_LOG": str(log)}


def agent_command() -> list[str]:
    return [sys.executable, str(AGENT)]


@dataclass(frozen=True)
class Traffic:
    """What the crafted agent read and wrote, in order."""

    path: Path

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        inbound = [entry["in"] for entry in self.entries() if "in" in entry]
        return [m for m in inbound if method is None or m.get("method") == method]

    def params(self, method: str) -> list[Any]:
        return [message.get("params") for message in self.received(method)]

    def pids(self) -> list[int]:
        return [entry["pid"] for entry in self.entries() if "pid" in entry]

    def check_sent_requests(self) -> int:
        """Validate every request the client sent against the ACP schema (the crafted agent's
        answers are malformed on purpose, so only the client side is checked); their number."""
        requests = [message for message in self.received() if "method" in message]
        problems = traffic_problems(("client", message) for message in requests)
        assert problems == [], problems
        return len(requests)


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@asynccontextmanager
async def crafted_link(
    tmp_path: Path, scenario: str, *, require_load: bool = True
) -> AsyncIterator[tuple[AgentLink, Traffic]]:
    """A link that starts the crafted agent; on exit every agent process it started is gone."""
    log = tmp_path / f"{scenario}.jsonl"
    traffic = Traffic(log)
    command = agent_command()
    async with spawned_agent(
        command[0], *command[1:], env=agent_env(scenario, log), require_load=require_load
    ) as link:
        yield link, traffic
    assert all(process_gone(pid) for pid in traffic.pids()), traffic.pids()


def child_pids() -> set[int]:
    """The pids of this process's live children (from /proc)."""
    me, children = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] != "Z":
            children.add(int(entry.name))
    return children
