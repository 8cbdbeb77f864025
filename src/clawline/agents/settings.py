"""Agent configuration: OpenClaw's ``agents``/``models``/``tools``/``session`` sections.

::

    [agents.defaults]
    model = "offline"            # "offline" | "openai/<m>" | "anthropic/<m>" | "<provider>/<m>"
    workspace = "~/work"         # default: <state dir>/workspace/<agentId>
    timeoutSeconds = 172800      # 0 = none (default: [agents] timeout_seconds)

    [agents.defaults.subagents]  # maxSpawnDepth 1..5, maxChildrenPerAgent 1..20, maxConcurrent >= 1
    maxSpawnDepth = 1

    [[agents.list]]              # per-agent overrides of the defaults
    id = "reviewer"
    model = "openai/gpt-4o-mini"
    subagents = { allowAgents = ["*"], maxSpawnDepth = 2 }
    tools = { allow = [], deny = ["write_file"] }

    [models.providers.openai]    # see providers below
    [tools.agentToAgent]         # enabled = false, allow = []
    [tools.sessions]             # visibility = "tree"
    [tools.subagents.tools]      # allow = [], deny = []
    [tools.fs]                   # allowHardlinks = false (settings_fs)
    [session.agentToAgent]       # maxPingPongTurns = 5 (clamped 0..5)
    [session.threadBindings]     # + channels.<ch>[.accounts.<a>].threadBindings (settings_threads)
    [acp]                        # the acp spawn runtime (settings_acp)

A value outside its documented range is a :class:`~clawline.config.ConfigError` naming the key;
unknown keys are ignored (OpenClaw configs carry many sections clawline does not use). The
parsing lives in :mod:`clawline.agents.settings_parse` (``parse_agents_config``,
``agents_config``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from clawline import keys
from clawline.agents.config import effective_timeout_ms
from clawline.agents.settings_acp import AcpConfig
from clawline.agents.settings_fs import FsToolsConfig
from clawline.agents.settings_threads import ThreadBindingsConfig

__all__ = [
    "DEFAULT_MODEL",
    "MAX_PING_PONG_TURNS",
    "AgentConfig",
    "AgentToAgentPolicy",
    "AgentsConfig",
    "ProviderApi",
    "ProviderSettings",
    "SubagentLimits",
    "ToolPolicy",
    "Visibility",
    "matches_pattern",
]

DEFAULT_MODEL = "offline"
MAX_PING_PONG_TURNS = 5
"""``session.agentToAgent.maxPingPongTurns`` default and upper clamp."""

Visibility: TypeAlias = Literal["self", "tree", "agent", "all"]
ProviderApi: TypeAlias = Literal["openai", "anthropic"]


def matches_pattern(value: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``value`` matches one of ``patterns`` (``*`` wildcard, case-insensitive)."""
    lowered = value.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """``{allow, deny}`` tool name patterns: deny wins; an empty ``allow`` allows everything."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def permits(self, tool_name: str) -> bool:
        if matches_pattern(tool_name, self.deny):
            return False
        return not self.allow or matches_pattern(tool_name, self.allow)


@dataclass(frozen=True, slots=True)
class SubagentLimits:
    """``agents.defaults.subagents`` merged with an agent's ``subagents`` (OpenClaw's defaults)."""

    max_spawn_depth: int = 1
    max_children_per_agent: int = 5
    max_concurrent: int = 8
    run_timeout_seconds: int = 0
    archive_after_minutes: int = 60
    allow_agents: tuple[str, ...] = ()
    """Cross-agent spawn targets: ``()`` = only the requester's own agent, ``("*",)`` = any
    defined agent (:mod:`clawline.collab.agents_list`)."""
    require_agent_id: bool = False

    def allows_target(self, requester_agent_id: str, target_agent_id: str) -> bool:
        if target_agent_id.lower() == requester_agent_id.lower():
            return True
        return matches_pattern(target_agent_id, self.allow_agents)


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One agent's effective configuration (defaults merged with its ``agents.list`` entry)."""

    id: str
    model: str
    """``offline`` or ``<provider>/<model>``."""
    workspace: Path
    """Absolute; may not exist yet (see :func:`clawline.agents.workspace.ensure_workspace`)."""
    timeout_seconds: int
    """Default run timeout; 0 = none."""
    subagents: SubagentLimits
    tools: ToolPolicy
    """The agent's own ``tools.{allow,deny}``."""
    subagent_tools: ToolPolicy = field(default_factory=ToolPolicy)
    """``tools.subagents.tools``: applies to this agent's subagent sessions (depth >= 1)."""

    @property
    def timeout_ms(self) -> int:
        return effective_timeout_ms(self.timeout_seconds * 1000, 0)


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """``[models.providers.<name>]``. The API key is never part of ``repr``; read it with
    :meth:`api_key` (explicit ``apiKey``, else the environment variable ``apiKeyEnv``)."""

    name: str
    api: ProviderApi
    base_url: str | None = None
    api_key_env: str | None = None
    max_retries: int = 2
    """Retries of a failed request (the SDKs' own back-off); ``maxRetries``, 0..10."""
    secret_api_key: str | None = field(default=None, repr=False, compare=False)

    def api_key(self, env: Mapping[str, str]) -> str | None:
        if self.secret_api_key:
            return self.secret_api_key
        if self.api_key_env:
            return env.get(self.api_key_env) or None
        return None


@dataclass(frozen=True, slots=True)
class AgentToAgentPolicy:
    """``tools.agentToAgent``: cross-agent sends need ``enabled`` and both ids in ``allow``."""

    enabled: bool = False
    allow: tuple[str, ...] = ()
    """Agent id patterns (``*`` wildcard, case-insensitive); empty = all."""

    def allows(self, agent_id: str) -> bool:
        return not self.allow or matches_pattern(agent_id, self.allow)


@dataclass(frozen=True, slots=True)
class AgentDefaults:
    model: str = DEFAULT_MODEL
    workspace: Path | None = None
    timeout_seconds: int = 48 * 60 * 60
    subagents: SubagentLimits = field(default_factory=SubagentLimits)


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One ``[[agents.list]]`` entry; ``None`` fields fall back to the defaults."""

    id: str
    model: str | None = None
    workspace: Path | None = None
    timeout_seconds: int | None = None
    subagents: SubagentLimits | None = None
    tools: ToolPolicy = field(default_factory=ToolPolicy)
    name: str | None = None
    """The display name (``agents_list`` shows it)."""


@dataclass(frozen=True, slots=True)
class AgentsConfig:
    state_dir: Path
    defaults: AgentDefaults = field(default_factory=AgentDefaults)
    agents: Mapping[str, AgentEntry] = field(default_factory=dict)
    providers: Mapping[str, ProviderSettings] = field(default_factory=dict)
    agent_to_agent: AgentToAgentPolicy = field(default_factory=AgentToAgentPolicy)
    sessions_visibility: Visibility = "tree"
    """``tools.sessions.visibility``."""
    subagent_tools: ToolPolicy = field(default_factory=ToolPolicy)
    max_ping_pong_turns: int = MAX_PING_PONG_TURNS
    """``session.agentToAgent.maxPingPongTurns``, already clamped to 0..5."""
    thread_bindings: ThreadBindingsConfig = field(default_factory=ThreadBindingsConfig)
    """``session.threadBindings`` and ``channels.<ch>.threadBindings`` (resolve per account)."""
    acp: AcpConfig = field(default_factory=AcpConfig)
    """``[acp]``: the acp spawn runtime's policy and agent commands."""
    fs: FsToolsConfig = field(default_factory=FsToolsConfig)
    """``[tools.fs]``: workspace file access (hard links)."""

    def agent_ids(self) -> list[str]:
        """The ids of ``[[agents.list]]`` in their order."""
        return list(self.agents)

    def default_workspace(self, agent_id: str) -> Path:
        if self.defaults.workspace is not None:
            return self.defaults.workspace
        return self.state_dir / "workspace" / agent_id

    def resolve_agent(self, agent_id: str) -> AgentConfig:
        """The effective config of ``agent_id``; ids without an entry use the defaults."""
        normalized = keys.normalize_agent_id(agent_id)
        entry = self.agents.get(normalized) or AgentEntry(id=normalized)
        defaults = self.defaults
        return AgentConfig(
            id=normalized,
            model=entry.model or defaults.model,
            workspace=entry.workspace or self.default_workspace(normalized),
            timeout_seconds=(
                defaults.timeout_seconds if entry.timeout_seconds is None else entry.timeout_seconds
            ),
            subagents=entry.subagents or defaults.subagents,
            tools=entry.tools,
            subagent_tools=self.subagent_tools,
        )

    def provider(self, name: str) -> ProviderSettings | None:
        """A configured provider, or the built-in ``openai``/``anthropic`` ones."""
        configured = self.providers.get(name)
        if configured is not None:
            return configured
        if name == "openai":
            return ProviderSettings(name="openai", api="openai", api_key_env="OPENAI_API_KEY")
        if name == "anthropic":
            return ProviderSettings(
                name="anthropic", api="anthropic", api_key_env="ANTHROPIC_API_KEY"
            )
        return None
