"""Agent-to-agent policy and the visibility guard (docs/collaboration.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.collab.policy import (
    Action,
    VisibilityGuard,
    a2a_allowed,
    load_guard,
    matches_allow,
)
from clawline.config import AgentToAgentPolicy, Visibility, parse_agents_config
from clawline.runtime import Runtime
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, config

CHILD = "agent:main:subagent:child"
GRANDCHILD = "agent:main:subagent:grandchild"
OTHER = "agent:main:dashboard:other"
ACP_CHILD = "agent:codex:acp:child"
FOREIGN = "agent:reviewer:main"

SEND_CROSS = (
    "Session send visibility is restricted. Set tools.sessions.visibility=all to allow "
    "cross-agent access."
)
SEND_SELF = (
    "Session send visibility is restricted to the current session (tools.sessions.visibility=self)."
)
SEND_TREE = (
    "Session send visibility is restricted to the current session tree "
    "(tools.sessions.visibility=tree)."
)
SEND_DISABLED = (
    "Agent-to-agent messaging is disabled. Set tools.agentToAgent.enabled=true to allow "
    "cross-agent sends."
)
SEND_DENIED = "Agent-to-agent messaging denied by tools.agentToAgent.allow."
LIST_DISABLED = (
    "Agent-to-agent listing is disabled. Set tools.agentToAgent.enabled=true to allow "
    "cross-agent visibility."
)


def guard(
    visibility: Visibility,
    *,
    enabled: bool = False,
    allow: tuple[str, ...] = (),
    action: Action = "send",
    spawned: frozenset[str] = frozenset({CHILD, ACP_CHILD}),
) -> VisibilityGuard:
    return VisibilityGuard(
        action=action,
        requester_key=MAIN,
        visibility=visibility,
        policy=AgentToAgentPolicy(enabled=enabled, allow=allow),
        spawned=spawned,
    )


def error_of(checker: VisibilityGuard, target: str) -> str | None:
    access = checker.check(target)
    if access.allowed:
        return None
    assert access.status == "forbidden"
    return access.error


# --- allow patterns ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent_id", "patterns", "expected"),
    [
        ("reviewer", [], True),
        ("reviewer", ["*"], True),
        ("reviewer", ["rev*"], True),
        ("reviewer", ["REV*"], True),
        ("reviewer", ["*view*"], True),
        ("reviewer", ["Reviewer"], True),
        ("reviewer", ["review"], False),
        ("reviewer", ["*x"], False),
        ("reviewer", ["revi?wer"], False),  # only * is special
        ("reviewer", ["re.iewer"], False),
        ("reviewer", ["", "  "], False),
        ("reviewer", ["main", "rev*"], True),
    ],
)
def test_allow_patterns(agent_id: str, patterns: list[str], expected: bool) -> None:
    assert matches_allow(agent_id, patterns) is expected


def test_a2a_allowed_needs_enabled_and_both_ids_listed() -> None:
    assert a2a_allowed(AgentToAgentPolicy(enabled=False), "main", "main")
    assert not a2a_allowed(AgentToAgentPolicy(enabled=False), "main", "reviewer")
    assert a2a_allowed(AgentToAgentPolicy(enabled=True), "main", "reviewer")
    only_reviewer = AgentToAgentPolicy(enabled=True, allow=("reviewer",))
    assert not a2a_allowed(only_reviewer, "main", "reviewer")
    both = AgentToAgentPolicy(enabled=True, allow=("main", "rev*"))
    assert a2a_allowed(both, "main", "reviewer")
    assert not a2a_allowed(both, "main", "coder")


def test_the_policy_defaults() -> None:
    parsed = parse_agents_config({}, Path("/tmp"))
    assert parsed.agent_to_agent == AgentToAgentPolicy(enabled=False, allow=())
    assert parsed.sessions_visibility == "tree"
    assert parsed.max_ping_pong_turns == 5


# --- the guard matrix --------------------------------------------------------------------------


def test_self_sees_only_its_own_session() -> None:
    checker = guard("self", enabled=True)
    assert error_of(checker, MAIN) is None
    assert error_of(checker, CHILD) == SEND_SELF
    assert error_of(checker, OTHER) == SEND_SELF
    assert error_of(checker, FOREIGN) == SEND_CROSS


def test_tree_sees_itself_and_direct_children_only() -> None:
    checker = guard("tree", enabled=True)
    assert error_of(checker, MAIN) is None
    assert error_of(checker, CHILD) is None
    assert error_of(checker, GRANDCHILD) == SEND_TREE
    assert error_of(checker, OTHER) == SEND_TREE
    assert error_of(checker, FOREIGN) == SEND_CROSS


def test_tree_reaches_a_child_under_another_agent_id() -> None:
    """OpenClaw #54878, fixed: the spawned set is consulted before the cross-agent gate."""
    for enabled in (False, True):
        assert error_of(guard("tree", enabled=enabled), ACP_CHILD) is None
    not_spawned = guard("tree", spawned=frozenset({CHILD}))
    assert error_of(not_spawned, ACP_CHILD) == SEND_CROSS


def test_agent_sees_every_session_of_its_agent() -> None:
    checker = guard("agent", enabled=True)
    for target in (MAIN, CHILD, GRANDCHILD, OTHER):
        assert error_of(checker, target) is None
    assert error_of(checker, FOREIGN) == SEND_CROSS
    assert error_of(checker, ACP_CHILD) == SEND_CROSS


def test_all_lets_cross_agent_access_through_to_the_a2a_policy() -> None:
    assert error_of(guard("all"), OTHER) is None
    assert error_of(guard("all"), FOREIGN) == SEND_DISABLED
    assert error_of(guard("all", enabled=True), FOREIGN) is None
    assert error_of(guard("all", enabled=True, allow=("reviewer",)), FOREIGN) == SEND_DENIED
    assert error_of(guard("all", enabled=True, allow=("main", "rev*")), FOREIGN) is None
    assert error_of(guard("all", enabled=True, allow=("*",)), FOREIGN) is None


@pytest.mark.parametrize(
    ("action", "cross", "self_", "tree", "disabled", "denied"),
    [
        (
            "list",
            "Session list visibility is restricted. Set tools.sessions.visibility=all to allow "
            "cross-agent access.",
            "Session list visibility is restricted to the current session "
            "(tools.sessions.visibility=self).",
            "Session list visibility is restricted to the current session tree "
            "(tools.sessions.visibility=tree).",
            LIST_DISABLED,
            "Agent-to-agent listing denied by tools.agentToAgent.allow.",
        ),
        ("send", SEND_CROSS, SEND_SELF, SEND_TREE, SEND_DISABLED, SEND_DENIED),
        (
            "history",
            "Session history visibility is restricted. Set tools.sessions.visibility=all to "
            "allow cross-agent access.",
            "Session history visibility is restricted to the current session "
            "(tools.sessions.visibility=self).",
            "Session history visibility is restricted to the current session tree "
            "(tools.sessions.visibility=tree).",
            "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to allow "
            "cross-agent access.",
            "Agent-to-agent history denied by tools.agentToAgent.allow.",
        ),
        (
            "status",
            "Session status visibility is restricted. Set tools.sessions.visibility=all to "
            "allow cross-agent access.",
            "Session status visibility is restricted to the current session "
            "(tools.sessions.visibility=self).",
            "Session status visibility is restricted to the current session tree "
            "(tools.sessions.visibility=tree).",
            "Agent-to-agent status is disabled. Set tools.agentToAgent.enabled=true to allow "
            "cross-agent access.",
            "Agent-to-agent status denied by tools.agentToAgent.allow.",
        ),
    ],
)
def test_messages_per_action(
    action: Action, cross: str, self_: str, tree: str, disabled: str, denied: str
) -> None:
    assert error_of(guard("agent", action=action), FOREIGN) == cross
    assert error_of(guard("self", action=action), OTHER) == self_
    assert error_of(guard("tree", action=action), OTHER) == tree
    assert error_of(guard("all", action=action), FOREIGN) == disabled
    assert error_of(guard("all", action=action, enabled=True, allow=("main",)), FOREIGN) == denied


# --- the guard over a real store ---------------------------------------------------------------


async def guard_of(services: Runtime, action: Action, requester: str) -> VisibilityGuard:
    """The guard the session tools load, over the runtime's store and parsed config."""
    return await load_guard(
        action,
        requester,
        config=services.agents_config,
        store=services.store,
        workers=services.workers,
    )


async def lineage(services: Runtime) -> None:
    catalog = services.catalog
    await services.call(catalog.patch, MAIN, {})
    await services.call(catalog.patch, CHILD, {"spawnedBy": MAIN})
    await services.call(catalog.patch, GRANDCHILD, {"spawnedBy": CHILD})
    await services.call(catalog.patch, ACP_CHILD, {"spawnedBy": MAIN})
    await services.call(catalog.patch, OTHER, {})
    parented = "agent:main:subagent:parented"
    await services.call(catalog.patch, parented, {"parentSessionKey": MAIN})


async def test_load_guard_reads_the_direct_children(make_services: MakeServices) -> None:
    services = await make_services()
    await lineage(services)
    loaded = await guard_of(services, "history", MAIN)
    assert loaded.visibility == "tree"
    assert loaded.spawned == {CHILD, ACP_CHILD, "agent:main:subagent:parented"}
    assert loaded.check(CHILD).allowed
    assert loaded.check(ACP_CHILD).allowed
    assert not loaded.check(GRANDCHILD).allowed
    from_child = await guard_of(services, "history", CHILD)
    assert from_child.check(GRANDCHILD).allowed
    assert not from_child.check(MAIN).allowed


async def test_load_guard_follows_the_config(make_services: MakeServices) -> None:
    services = await make_services(config(visibility="all", a2a=True, allow=["main", "rev*"]))
    loaded = await guard_of(services, "send", MAIN)
    assert (loaded.visibility, loaded.policy.enabled) == ("all", True)
    assert loaded.spawned == frozenset()  # only read for tree
    assert loaded.check(FOREIGN).allowed
    assert loaded.check("agent:coder:main").error == SEND_DENIED


@pytest.mark.parametrize(("configured", "effective"), [(9, 5), (5, 5), (2, 2), (0, 0), (-1, 0)])
def test_max_ping_pong_turns_is_clamped(configured: int, effective: int) -> None:
    parsed = parse_agents_config(config(turns=configured), Path("/tmp"))
    assert parsed.max_ping_pong_turns == effective
