"""``agents_list``: the agents a requester may target with ``sessions_spawn`` (OpenClaw's tool,
docs/collaboration.md), and the registry check ``sessions_spawn`` makes with the same rule.

An agent is **defined** when it is the requester's own agent, the default agent
(``[agents] default``), or an ``[[agents.list]]`` id. The **targets** of a requester are the
defined agents its ``subagents.allowAgents`` admits; its own agent is always one.
``allowAgents = ["*"]`` (or a pattern such as ``"rev*"``) admits defined agents only, never an
id nothing defines: a spawn naming such an id is refused with OpenClaw's text
``agentId "<id>" is not in the configured agent registry (allowed: <targets>)``.

Result: ``{requester, allowAny, agents: [{id, name?, configured, model}]}`` — the requester's
own agent first, then the others by id; ``configured`` says the agent has an
``[[agents.list]]`` entry, ``name`` is that entry's display name, ``model`` the agent's
effective model. ``allowAny`` is true when ``allowAgents`` holds ``"*"``. Takes no arguments.

Like OpenClaw, subagent sessions do not get the tool (it is in
:data:`clawline.agents.tools.registry.SUBAGENT_DENY_ALWAYS`; ``tools.subagents.tools.allow``
can give it back): the main session plans the delegation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from clawline import keys
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.config import AgentsConfig
from clawline.sessions.catalog import SessionCatalog
from clawline.types import JSON, JSONObject


@dataclass(frozen=True, slots=True)
class SpawnTargets:
    """The agents one requester agent may spawn."""

    requester: str
    allow_any: bool
    ids: tuple[str, ...]
    """The requester's own agent first, then the others sorted."""
    defined: frozenset[str]
    """Every defined agent, targetable or not."""

    def allowed_text(self) -> str:
        """OpenClaw's ``(allowed: …)`` list, ``none`` when empty."""
        return ", ".join(self.ids) or "none"


def spawn_targets(
    config: AgentsConfig, requester_agent_id: str, default_agent_id: str
) -> SpawnTargets:
    requester = keys.normalize_agent_id(requester_agent_id)
    defined = frozenset({requester, keys.normalize_agent_id(default_agent_id), *config.agent_ids()})
    limits = config.resolve_agent(requester).subagents
    others = sorted(
        agent for agent in defined if agent != requester and limits.allows_target(requester, agent)
    )
    allow_any = any(pattern.strip() == "*" for pattern in limits.allow_agents)
    return SpawnTargets(requester, allow_any, (requester, *others), defined)


def not_in_registry(agent_id: str, targets: SpawnTargets) -> str:
    return (
        f'agentId "{agent_id}" is not in the configured agent registry '
        f"(allowed: {targets.allowed_text()})"
    )


class AgentsListTool:
    """``agents_list`` (module docstring) over ``config``'s agents."""

    spec = ToolSpec(
        name="agents_list",
        description=(
            'List agent ids you can target with `sessions_spawn` when runtime="subagent" '
            "(based on subagent allowlists). Includes the agent name when configured."
        ),
    )

    def __init__(self, *, catalog: SessionCatalog, config: AgentsConfig) -> None:
        self._catalog = catalog
        self._config = config

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        config, catalog = self._config, self._catalog
        requester = keys.agent_id_of(catalog.canonical(ctx.session_key))
        targets = spawn_targets(config, requester, catalog.default_agent_id)
        agents: list[JSON] = []
        for agent_id in targets.ids:
            entry = config.agents.get(agent_id)
            row: JSONObject = {"id": agent_id}
            if entry is not None and entry.name is not None:
                row["name"] = entry.name
            row["configured"] = entry is not None
            row["model"] = config.resolve_agent(agent_id).model
            agents.append(row)
        return ToolResult(
            {"requester": targets.requester, "allowAny": targets.allow_any, "agents": agents}
        )
