"""OpenClaw's tool policy by depth, allow/deny overrides, and the turn applying it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from clawline.agents.providers.base import ToolCall
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.agents.tools.registry import ToolRegistry, is_leaf, tool_allowed
from clawline.config import AgentConfig, SubagentLimits, ToolPolicy
from clawline.records.session import SessionEntry
from clawline.runtime import Runtime
from clawline.types import JSON
from tests.agents.turn_support import EchoTool, ScriptedProvider, SpawnStub, calls, install, text

NAMES = [
    "read_file",
    "write_file",
    "sessions_spawn",
    "sessions_send",
    "sessions_list",
    "sessions_history",
    "subagents",
    "sessions_yield",
    "agents_list",
]


def agent(
    depth: int = 1,
    tools: ToolPolicy | None = None,
    subagent_tools: ToolPolicy | None = None,
) -> AgentConfig:
    return AgentConfig(
        id="main",
        model="offline",
        workspace=Path("/w"),
        timeout_seconds=0,
        subagents=SubagentLimits(max_spawn_depth=depth),
        tools=tools or ToolPolicy(),
        subagent_tools=subagent_tools or ToolPolicy(),
    )


def entry(depth: int | None, role: str | None = None) -> SessionEntry:
    key = "agent:main:main" if not depth else "agent:main:subagent:x"
    return SessionEntry(
        key=key,
        session_id="s",
        created_at=0,
        updated_at=0,
        root_session_key="agent:main:main",
        trace_id="t",
        lineage_path=(key,),
        spawn_depth=depth,
        subagent_role=role,
    )


def allowed(config: AgentConfig, session: SessionEntry | None) -> list[str]:
    return [name for name in NAMES if tool_allowed(name, config, session)]


FILE_AND_YIELD = ["read_file", "write_file", "sessions_yield"]
ORCHESTRATOR = [
    "read_file",
    "write_file",
    "sessions_spawn",
    "sessions_list",
    "sessions_history",
    "subagents",
    "sessions_yield",
]


def test_main_sessions_get_everything() -> None:
    assert allowed(agent(), None) == NAMES
    assert allowed(agent(), entry(0)) == NAMES


def test_leaf_subagents_lose_the_session_tools() -> None:
    assert allowed(agent(depth=1), entry(1)) == FILE_AND_YIELD
    assert allowed(agent(depth=2), entry(2)) == FILE_AND_YIELD


def test_depth_one_orchestrators_keep_spawn_list_history_and_subagents() -> None:
    assert allowed(agent(depth=2), entry(1)) == ORCHESTRATOR
    assert is_leaf(agent(depth=2), entry(2))
    assert not is_leaf(agent(depth=2), entry(1))


def test_the_recorded_role_wins_over_the_depth() -> None:
    assert allowed(agent(depth=3), entry(1, "leaf")) == FILE_AND_YIELD
    assert allowed(agent(depth=1), entry(1, "orchestrator")) == ORCHESTRATOR


def test_the_subagent_override_can_allow_deny_and_restrict() -> None:
    granted = agent(subagent_tools=ToolPolicy(allow=("sessions_list",)))
    assert allowed(granted, entry(1)) == ["sessions_list"]  # a non-empty allow is an allow-list
    both = agent(subagent_tools=ToolPolicy(allow=("sessions_list", "read_file"), deny=("read_*",)))
    assert allowed(both, entry(1)) == ["sessions_list"]  # deny wins
    denied = agent(subagent_tools=ToolPolicy(deny=("write_file",)))
    assert allowed(denied, entry(1)) == ["read_file", "sessions_yield"]
    assert allowed(denied, entry(0)) == NAMES  # the override is for subagents only


def test_the_agents_own_policy_applies_at_every_depth() -> None:
    config = agent(depth=2, tools=ToolPolicy(deny=("write_file", "sessions_*")))
    assert allowed(config, None) == ["read_file", "subagents", "agents_list"]
    assert allowed(config, entry(1)) == ["read_file", "subagents"]
    only = agent(tools=ToolPolicy(allow=("read_file",)))
    assert allowed(only, None) == ["read_file"]


class Named:
    def __init__(self, name: str) -> None:
        self.spec = ToolSpec(name, name)

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        raise AssertionError("not called")


def test_the_registry_filters_in_registration_order_and_refuses_duplicates() -> None:
    registry = ToolRegistry([Named(name) for name in NAMES])
    assert [t.spec.name for t in registry.tools_for(agent(depth=1), entry(1))] == FILE_AND_YIELD
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Named("read_file"))
    replacement = Named("read_file")
    registry.register(replacement, replace=True)
    assert registry.get("read_file") is replacement
    registry.unregister("read_file")
    assert registry.get("read_file") is None
    assert registry.names() == NAMES[1:]


async def test_a_leaf_session_is_offered_no_spawn_and_a_spawn_call_is_refused(
    services: Runtime,
) -> None:
    spawn_call = calls(ToolCall("s1", "sessions_spawn", {"task": "x"}))
    provider = ScriptedProvider(spawn_call, text("done"), spawn_call, text("done"))
    install(services, provider, EchoTool(), SpawnStub())
    ack = await services.runs.send(session_key="main", message="a", idempotency_key="a")
    await ack.done
    child = "agent:main:subagent:11111111-2222-3333-4444-555555555555"
    lineage = {"spawnedBy": "agent:main:main", "spawnDepth": 1, "subagentRole": "leaf"}
    await services.call(services.catalog.patch, child, lineage)
    ack = await services.runs.send(session_key=child, message="b", idempotency_key="b")
    await ack.done
    main_turn, _, child_turn, _ = provider.seen
    assert main_turn.tools == ["echo", "sessions_spawn"]
    assert child_turn.tools == ["echo"]
    child_entry = services.store.get(child)
    assert child_entry is not None
    results = [
        event.data["details"]
        for event in services.store.events(child_entry.session_id)
        if event.data.get("role") == "tool"
    ]
    assert results == [
        {
            "status": "forbidden",
            "error": "sessions_spawn is not allowed in this session (tool policy)",
        }
    ]
