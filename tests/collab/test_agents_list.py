"""``agents_list`` and the agent registry ``sessions_spawn`` checks against it: the defined
agents are the requester's own, the default agent and the ``[[agents.list]]`` ids; the targets
are those the requester's ``allowAgents`` admits. Real services on SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.agents.tools.registry import tool_allowed
from clawline.config import Settings
from clawline.runtime import Runtime
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, invoke, tool_ctx, tool_of
from tests.collab.test_spawn_lineage import accepted, gated, limits, make_requester
from tests.collab.test_spawn_validation import UNKNOWN_AGENT, outcome, refused


def config(allow: list[str] | None = None, *listed: dict[str, Any]) -> dict[str, Any]:
    raw = limits() if allow is None else limits(allowAgents=allow)
    raw["agents"]["list"] = list(listed)
    return raw


async def listing(services: Runtime, requester: str = MAIN) -> dict[str, Any]:
    return await invoke(tool_of(services, "agents_list"), tool_ctx(services, requester))


@pytest.fixture
async def ops_default(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A runtime whose default agent is ``ops`` (``[sessions] default_agent``), main allowed
    to spawn any defined agent, ``critic`` listed."""
    raw = config(["*"], {"id": "critic", "name": "The Critic", "model": "offline"})
    settings = Settings(
        state_dir=tmp_path / "state", raw={**raw, "sessions": {"default_agent": "ops"}}
    )
    services = Runtime.open(settings)
    try:
        yield services
    finally:
        await services.runs.shutdown()
        services.close()


async def test_without_an_allowlist_only_the_own_agent(make_services: MakeServices) -> None:
    services = await make_services(config(None, {"id": "critic"}))
    assert await listing(services) == {
        "requester": "main",
        "allowAny": False,
        "agents": [{"id": "main", "configured": False, "model": "offline"}],
    }


async def test_any_lists_every_defined_agent_own_first(ops_default: Runtime) -> None:
    assert await listing(ops_default) == {
        "requester": "main",
        "allowAny": True,
        "agents": [
            {"id": "main", "configured": False, "model": "offline"},
            {"id": "critic", "name": "The Critic", "configured": True, "model": "offline"},
            {"id": "ops", "configured": False, "model": "offline"},
        ],
    }


async def test_patterns_and_names_select_among_defined_agents(
    make_services: MakeServices,
) -> None:
    raw = config(["rev*", "ghost"], {"id": "reviewer"}, {"id": "revisor"}, {"id": "critic"})
    services = await make_services(raw)
    result = await listing(services)
    assert result["allowAny"] is False
    assert [agent["id"] for agent in result["agents"]] == ["main", "reviewer", "revisor"]


async def test_the_requester_is_the_calling_sessions_agent(make_services: MakeServices) -> None:
    raw = config(None, {"id": "critic", "subagents": {"allowAgents": ["main"]}})
    services = await make_services(raw)
    result = await listing(services, "agent:critic:main")
    assert result["requester"] == "critic"
    assert [(a["id"], a["configured"]) for a in result["agents"]] == [
        ("critic", True),
        ("main", False),
    ]


async def test_spawn_accepts_exactly_the_listed_targets(ops_default: Runtime) -> None:
    gated(ops_default)
    await make_requester(ops_default)
    listed = [agent["id"] for agent in (await listing(ops_default))["agents"]]
    for target in listed:
        result = await accepted(ops_default, task="t", agentId=target)
        assert result["childSessionKey"].startswith(f"agent:{target}:subagent:")
    result = await refused(ops_default, task="t", agentId="nobody")
    assert outcome(result) == ("forbidden", UNKNOWN_AGENT.format("nobody", ", ".join(listed)))


async def test_subagents_do_not_get_the_tool(make_services: MakeServices) -> None:
    """As in OpenClaw: agents_list is a main-session tool, even for orchestrators."""
    services = await make_services(limits(maxSpawnDepth=2))
    gated(services)
    await make_requester(services)
    assert "agents_list" in services.runs.tools.names()
    child = services.store.get((await accepted(services, task="t"))["childSessionKey"])
    agent = services.runs.config.resolve_agent("main")
    assert tool_allowed("agents_list", agent, services.store.get(MAIN))
    assert tool_allowed("sessions_spawn", agent, child)  # an orchestrator
    assert not tool_allowed("agents_list", agent, child)
