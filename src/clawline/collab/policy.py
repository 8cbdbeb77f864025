"""Agent-to-agent policy and session visibility (docs/collaboration.md).

Two settings decide which sessions a session tool may touch:

- ``tools.agentToAgent`` ``{enabled = false, allow = []}``: a session of one agent may reach a
  session of *another* agent only when ``enabled`` and both agent ids match an ``allow``
  pattern (``*`` wildcard, case-insensitive; an empty list allows every id). Same-agent access
  never needs it.
- ``tools.sessions.visibility`` ``self | tree | agent | all`` (default ``tree``): ``self`` is the
  requester's own session only; ``tree`` adds the sessions it spawned directly (children by
  ``spawnedBy``/``parentSessionKey``; grandchildren are not included); ``agent`` is any session
  of the requester's agent; ``all`` also lets cross-agent access through to the A2A policy.

The guard checks one target for an action (``list``, ``history``, ``send`` or ``status``), in
OpenClaw's order: a cross-agent target needs visibility ``all``, then A2A ``enabled``, then
``allow``; a same-agent target is checked against ``self``/``tree``.

One deliberate difference (the fix of OpenClaw #54878): under ``tree`` a direct child is
visible *before* the cross-agent gate, so a child spawned under another agent id (an ACP
child ``agent:codex:acp:…``) stays reachable from its parent.

Every refusal is ``{status: "forbidden", error}`` with OpenClaw's exact sentence; the history
and status variants follow the same pattern (``Session history visibility is restricted…``,
``Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to allow
cross-agent access.``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from clawline import keys
from clawline.config import AgentsConfig, AgentToAgentPolicy, Visibility

if TYPE_CHECKING:
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

Action: TypeAlias = Literal["list", "history", "send", "status"]


# --- the A2A allow list ----------------------------------------------------------------------


def _pattern_matches(pattern: str, agent_id: str) -> bool:
    raw = pattern.strip()
    if not raw:
        return False
    if raw == "*":
        return True
    if "*" not in raw:
        return raw.lower() == agent_id.lower()
    regex = ".*".join(re.escape(part) for part in raw.split("*"))
    return re.fullmatch(regex, agent_id, flags=re.IGNORECASE) is not None


def matches_allow(agent_id: str, patterns: Iterable[str]) -> bool:
    """Whether ``agent_id`` matches one ``tools.agentToAgent.allow`` pattern; an empty list
    matches every id. Only ``*`` is special (any run of characters)."""
    listed = list(patterns)
    return not listed or any(_pattern_matches(pattern, agent_id) for pattern in listed)


def a2a_allowed(policy: AgentToAgentPolicy, requester_agent_id: str, target_agent_id: str) -> bool:
    """Same agent: always. Another agent: ``enabled`` and both ids in ``allow``."""
    if requester_agent_id == target_agent_id:
        return True
    if not policy.enabled:
        return False
    return matches_allow(requester_agent_id, policy.allow) and matches_allow(
        target_agent_id, policy.allow
    )


# --- messages ----------------------------------------------------------------------------------

_PREFIX: dict[Action, str] = {
    "list": "Session list",
    "history": "Session history",
    "send": "Session send",
    "status": "Session status",
}
_A2A_NOUN: dict[Action, str] = {
    "list": "listing",
    "history": "history",
    "send": "messaging",
    "status": "status",
}
_A2A_DISABLED_TAIL: dict[Action, str] = {
    "list": "to allow cross-agent visibility.",
    "history": "to allow cross-agent access.",
    "send": "to allow cross-agent sends.",
    "status": "to allow cross-agent access.",
}


def cross_visibility_message(action: Action) -> str:
    return (
        f"{_PREFIX[action]} visibility is restricted. "
        "Set tools.sessions.visibility=all to allow cross-agent access."
    )


def self_visibility_message(action: Action) -> str:
    return (
        f"{_PREFIX[action]} visibility is restricted to the current session "
        "(tools.sessions.visibility=self)."
    )


def tree_visibility_message(action: Action) -> str:
    return (
        f"{_PREFIX[action]} visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree)."
    )


def a2a_disabled_message(action: Action) -> str:
    return (
        f"Agent-to-agent {_A2A_NOUN[action]} is disabled. "
        f"Set tools.agentToAgent.enabled=true {_A2A_DISABLED_TAIL[action]}"
    )


def a2a_denied_message(action: Action) -> str:
    return f"Agent-to-agent {_A2A_NOUN[action]} denied by tools.agentToAgent.allow."


# --- the guard ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Access:
    allowed: bool
    error: str | None = None
    status: str = "forbidden"

    @classmethod
    def deny(cls, error: str) -> Access:
        return cls(False, error)


_ALLOWED = Access(True)


@dataclass(frozen=True, slots=True)
class VisibilityGuard:
    """Checks targets for one action on behalf of one requester session (canonical keys)."""

    action: Action
    requester_key: str
    visibility: Visibility
    policy: AgentToAgentPolicy
    spawned: frozenset[str] = frozenset()
    """The requester's direct children (used by ``tree`` only)."""

    def check(self, target_key: str) -> Access:
        if target_key == self.requester_key:
            return _ALLOWED
        if self.visibility == "tree" and target_key in self.spawned:
            return _ALLOWED  # before the cross-agent gate: OpenClaw #54878, fixed
        requester_agent = keys.agent_id_of(self.requester_key)
        target_agent = keys.agent_id_of(target_key)
        if target_agent != requester_agent:
            if self.visibility != "all":
                return Access.deny(cross_visibility_message(self.action))
            if not self.policy.enabled:
                return Access.deny(a2a_disabled_message(self.action))
            if not a2a_allowed(self.policy, requester_agent, target_agent):
                return Access.deny(a2a_denied_message(self.action))
            return _ALLOWED
        if self.visibility == "self":
            return Access.deny(self_visibility_message(self.action))
        if self.visibility == "tree":
            return Access.deny(tree_visibility_message(self.action))
        return _ALLOWED


def spawned_keys(store: Store, requester_key: str) -> frozenset[str]:
    """The requester's direct children (blocking: run it on a store worker)."""
    return frozenset(entry.key for entry in store.children(requester_key))


async def load_guard(
    action: Action,
    requester_key: str,
    *,
    config: AgentsConfig,
    store: Store,
    workers: StoreWorkers,
) -> VisibilityGuard:
    """A guard for ``requester_key`` under the configured visibility and A2A policy
    (``tools.sessions``, ``tools.agentToAgent`` of ``config``); under ``tree`` the requester's
    direct children are read once from the store."""
    visibility = config.sessions_visibility
    spawned: frozenset[str] = frozenset()
    if visibility == "tree":
        spawned = await workers.run(spawned_keys, store, requester_key)
    return VisibilityGuard(
        action=action,
        requester_key=requester_key,
        visibility=visibility,
        policy=config.agent_to_agent,
        spawned=spawned,
    )
