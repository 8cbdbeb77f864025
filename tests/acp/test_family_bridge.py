"""The family operation against clawline's own bridge, ``python -m clawline acp``, as a real
subprocess over a seeded state directory (it starts its gateway in its own process)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from clawline.acp_client.family_loader import Member, get_session_family
from clawline.acp_client.link import AgentLink, spawned_agent
from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock
from clawline.testing.live_gateway import RunningGateway
from tests.cli.helpers import START_MS, seed_family

from .support import BridgeProcess, Recorder, seed

MAIN, A, B, C = (
    f"agent:main:{name}" for name in ("main", "subagent:a", "subagent:b", "subagent:c")
)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """main ← a ← c and main ← b (tests/cli/helpers.py::seed_family)."""
    state = tmp_path / "state"
    store = SQLiteStore(state / "clawline.db")
    try:
        seed_family(SessionCatalog(store, clock=FakeClock(START_MS)), FakeClock(START_MS))
    finally:
        store.close()
    return state


INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def requests(recorder: Recorder) -> list[tuple[str, Any]]:
    """``(method, params)`` of every request we sent."""
    return [
        (message["method"], message["params"])
        for sender, message in recorder.traffic
        if sender == "client" and "method" in message
    ]


def newest_first(members: list[Member]) -> list[str]:
    """The keys, after checking they are newest ``updatedAt`` first, ties by key."""
    order = [
        (-datetime.fromisoformat(m["updatedAt"] or "").timestamp(), m["sessionKey"])
        for m in members
    ]
    assert order == sorted(order)
    return [m["sessionKey"] for m in members]


@asynccontextmanager
async def bridge(state_dir: Path, recorder: Recorder) -> AsyncIterator[AgentLink]:
    command = ["-m", "clawline", "--state-dir", str(state_dir), "acp"]
    async with spawned_agent(sys.executable, *command, observers=[recorder.observe]) as link:
        yield link
        process = link.process
    assert process is not None
    assert process.returncode is not None


async def test_family_from_the_bridge(state_dir: Path) -> None:
    recorder = Recorder()
    async with bridge(state_dir, recorder) as link:
        family = await get_session_family(link, MAIN)
        nested = await get_session_family(link, A)
        leaf = await get_session_family(link, C)
        unknown = await get_session_family(link, "agent:main:nobody")
    assert family["success"] is True
    assert family["current"] is not None
    assert family["current"]["sessionKey"] == MAIN
    assert family["current"]["parentSessionKey"] is None
    children = family["children"]
    assert sorted((m["sessionKey"], m["parentSessionKey"]) for m in children) == [
        (A, MAIN),
        (B, MAIN),
    ]
    assert newest_first(children) in ([A, B], [B, A])
    assert all(m["title"] for m in children)
    assert [m["sessionKey"] for m in nested["children"]] == [C]
    assert nested["current"] is not None
    assert nested["current"]["parentSessionKey"] == MAIN
    assert leaf["success"] is True
    assert leaf["children"] == []
    assert unknown == {"success": True, "current": None, "children": []}
    assert requests(recorder) == [("initialize", INIT), *[("session/list", {})] * 4]
    assert recorder.problems() == []


async def test_loaded_session_is_left_alone(state_dir: Path) -> None:
    recorder = Recorder()
    async with bridge(state_dir, recorder) as link:
        load = {"sessionId": A, "cwd": str(state_dir), "mcpServers": []}
        await link.request("session/load", load)
        family = await get_session_family(link, MAIN)
        again = await get_session_family(link, MAIN)
    assert family == again
    assert family["success"] is True
    assert [method for method, _ in requests(recorder)].count("session/load") == 1
    assert recorder.problems() == []


async def test_family_through_the_acp_bridge_fixture(
    acp_gateway: RunningGateway, acp_bridge: Callable[..., Awaitable[BridgeProcess]]
) -> None:
    """The SDK connection of the shared fixture (bridge → test gateway with token auth); the
    fixture validates all traffic against the schema and stops the bridge."""
    await seed(
        acp_gateway,
        [
            (MAIN, {"displayName": "Main chat"}),
            (A, {"parentSessionKey": MAIN}),
            (C, {"parentSessionKey": A}),
            (B, {"spawnedBy": MAIN}),
            ("agent:main:acp:x", {"parentSessionKey": MAIN}),
        ],
    )
    bridge = await acp_bridge()
    link = AgentLink.over(bridge.conn, bridge.process)
    family = await get_session_family(link, MAIN)
    nested = await get_session_family(link, A)
    current = family["current"]
    assert current is not None
    assert (current["sessionKey"], current["title"], current["parentSessionKey"]) == (
        MAIN,
        "Main chat",
        None,
    )
    assert newest_first(family["children"]) in ([A, B], [B, A])
    assert [m["sessionKey"] for m in nested["children"]] == [C]
    sent = [m["method"] for s, m in bridge.recorder.traffic if s == "client" and "method" in m]
    assert sent == ["initialize", "session/list", "session/list"]
