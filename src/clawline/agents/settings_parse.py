"""Parsing and validating the agent sections of config.toml into :class:`AgentsConfig`.

Every refusal is one :class:`~clawline.config.ConfigError` whose message names the key by its
dotted path, e.g. ``config: agents.defaults.subagents.maxSpawnDepth must be an integer from 1
to 5``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast, get_args

from clawline import keys
from clawline.agents.config import DEFAULT_RUN_TIMEOUT_MS
from clawline.agents.settings import (
    DEFAULT_MODEL,
    MAX_PING_PONG_TURNS,
    AgentDefaults,
    AgentEntry,
    AgentsConfig,
    AgentToAgentPolicy,
    ProviderApi,
    ProviderSettings,
    SubagentLimits,
    ToolPolicy,
    Visibility,
)
from clawline.agents.settings_acp import parse_acp
from clawline.agents.settings_fs import parse_fs_tools
from clawline.agents.settings_threads import parse_thread_bindings
from clawline.agents.settings_values import config_error as _fail
from clawline.agents.settings_values import table as _table
from clawline.config import Settings

__all__ = ["agents_config", "parse_agents_config", "parse_model_ref"]

BUILTIN_PROVIDERS = ("offline", "openai", "anthropic")
_API_NAMES: dict[str, ProviderApi] = {
    "openai": "openai",
    "openai-completions": "openai",
    "anthropic": "anthropic",
    "anthropic-messages": "anthropic",
}
_NO_MAX = 2**31 - 1

# name → (field, minimum, maximum) for the integer keys of a subagents table
_SUBAGENT_INTS: dict[str, tuple[str, int, int]] = {
    "maxSpawnDepth": ("max_spawn_depth", 1, 5),
    "maxChildrenPerAgent": ("max_children_per_agent", 1, 20),
    "maxConcurrent": ("max_concurrent", 1, _NO_MAX),
    "runTimeoutSeconds": ("run_timeout_seconds", 0, _NO_MAX),
    "archiveAfterMinutes": ("archive_after_minutes", 0, _NO_MAX),
}


def _int(section: Mapping[str, Any], name: str, path: str, low: int, high: int) -> int | None:
    value = section.get(name)
    if value is None:
        return None
    bad = isinstance(value, bool) or not isinstance(value, int)
    if bad or not low <= value <= high:
        rule = f"from {low} to {high}" if high != _NO_MAX else f">= {low}"
        raise _fail(f"{path}.{name}", f"must be an integer {rule}")
    return cast(int, value)


def _bool(section: Mapping[str, Any], name: str, path: str) -> bool | None:
    value = section.get(name)
    if value is not None and not isinstance(value, bool):
        raise _fail(f"{path}.{name}", "must be true or false")
    return value


def _string(section: Mapping[str, Any], name: str, path: str) -> str | None:
    value = section.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise _fail(f"{path}.{name}", "must be a non-empty string")
    return value.strip()


def _strings(section: Mapping[str, Any], name: str, path: str) -> tuple[str, ...] | None:
    value = section.get(name)
    if value is None:
        return None
    ok = isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)
    if not ok:
        raise _fail(f"{path}.{name}", "must be a list of non-empty strings")
    return tuple(item.strip() for item in value)


def _tool_policy(value: object, path: str) -> ToolPolicy:
    section = _table(value, path)
    return ToolPolicy(
        allow=_strings(section, "allow", path) or (),
        deny=_strings(section, "deny", path) or (),
    )


def _subagents(value: object, path: str, base: SubagentLimits) -> SubagentLimits:
    section = _table(value, path)
    changes: dict[str, Any] = {}
    for name, (attribute, low, high) in _SUBAGENT_INTS.items():
        number = _int(section, name, path, low, high)
        if number is not None:
            changes[attribute] = number
    allow = _strings(section, "allowAgents", path)
    if allow is not None:
        changes["allow_agents"] = allow
    require = _bool(section, "requireAgentId", path)
    if require is not None:
        changes["require_agent_id"] = require
    return replace(base, **changes)


def parse_model_ref(ref: str, providers: Mapping[str, object]) -> tuple[str, str]:
    """``"offline"`` → ``("offline", "offline")``; ``"<provider>/<model>"`` → both parts.
    Raises ``ValueError`` (with the reason) for an empty model or an unknown provider."""
    text = ref.strip()
    if text == "offline":
        return "offline", "offline"
    provider, slash, model = text.partition("/")
    if not slash or not provider or not model.strip():
        raise ValueError('use "offline" or "<provider>/<model>"')
    if provider not in BUILTIN_PROVIDERS and provider not in providers:
        known = ", ".join([*BUILTIN_PROVIDERS, *sorted(providers)])
        raise ValueError(f'unknown provider "{provider}" (known: {known})')
    return provider, model.strip()


def _model(section: Mapping[str, Any], path: str, providers: Mapping[str, object]) -> str | None:
    ref = _string(section, "model", path)
    if ref is None:
        return None
    try:
        parse_model_ref(ref, providers)
    except ValueError as error:
        raise _fail(f"{path}.model", f'"{ref}" is invalid: {error}') from None
    return ref


def _workspace(section: Mapping[str, Any], path: str, state_dir: Path) -> Path | None:
    raw = _string(section, "workspace", path)
    if raw is None:
        return None
    expanded = Path(raw).expanduser()
    return (expanded if expanded.is_absolute() else state_dir / expanded).resolve()


def _providers(raw: Mapping[str, Any]) -> dict[str, ProviderSettings]:
    models = _table(raw.get("models"), "models")
    section = _table(models.get("providers"), "models.providers")
    out: dict[str, ProviderSettings] = {}
    for name, value in section.items():
        path = f"models.providers.{name}"
        table = _table(value, path)
        if name == "offline" or not keys.is_valid_agent_id(name):
            raise _fail(path, "is not a usable provider name")
        api_name = _string(table, "api", path) or name
        api = _API_NAMES.get(api_name)
        if api is None:
            raise _fail(f"{path}.api", 'must be "openai" or "anthropic"')
        retries = _int(table, "maxRetries", path, 0, 10)
        out[name] = ProviderSettings(
            name=name,
            api=api,
            base_url=_string(table, "baseUrl", path),
            api_key_env=_string(table, "apiKeyEnv", path) or _default_key_env(api, name),
            max_retries=2 if retries is None else retries,
            secret_api_key=_string(table, "apiKey", path),
        )
    return out


def _default_key_env(api: ProviderApi, name: str) -> str | None:
    if name == api:
        return "OPENAI_API_KEY" if api == "openai" else "ANTHROPIC_API_KEY"
    return None


def _defaults(
    agents: Mapping[str, Any], state_dir: Path, providers: Mapping[str, object]
) -> AgentDefaults:
    legacy = agents.get("timeout_seconds", DEFAULT_RUN_TIMEOUT_MS // 1000)
    if isinstance(legacy, bool) or not isinstance(legacy, int) or legacy < 0:
        raise _fail("agents.timeout_seconds", "must be an integer >= 0")
    path = "agents.defaults"
    section = _table(agents.get("defaults"), path)
    timeout = _int(section, "timeoutSeconds", path, 0, _NO_MAX)
    return AgentDefaults(
        model=_model(section, path, providers) or DEFAULT_MODEL,
        workspace=_workspace(section, path, state_dir),
        timeout_seconds=legacy if timeout is None else timeout,
        subagents=_subagents(section.get("subagents"), f"{path}.subagents", SubagentLimits()),
    )


def _entries(
    agents: Mapping[str, Any],
    defaults: AgentDefaults,
    state_dir: Path,
    providers: Mapping[str, object],
) -> dict[str, AgentEntry]:
    listed = agents.get("list", [])
    if not isinstance(listed, list):
        raise _fail("agents.list", "must be an array of tables ([[agents.list]])")
    out: dict[str, AgentEntry] = {}
    for index, value in enumerate(listed):
        path = f"agents.list[{index}]"
        section = _table(value, path)
        raw_id = section.get("id")
        if not isinstance(raw_id, str) or not keys.is_valid_agent_id(raw_id.strip()):
            raise _fail(f"{path}.id", "must be an agent id matching [a-z0-9][a-z0-9_-]{0,63}")
        agent_id = raw_id.strip().lower()
        if agent_id in out:
            raise _fail(f"{path}.id", f'"{agent_id}" is listed twice')
        subagents = None
        if section.get("subagents") is not None:
            subagents = _subagents(section["subagents"], f"{path}.subagents", defaults.subagents)
        out[agent_id] = AgentEntry(
            id=agent_id,
            model=_model(section, path, providers),
            workspace=_workspace(section, path, state_dir),
            timeout_seconds=_int(section, "timeoutSeconds", path, 0, _NO_MAX),
            subagents=subagents,
            tools=_tool_policy(section.get("tools"), f"{path}.tools"),
            name=_name(section, path),
        )
    return out


def _name(section: Mapping[str, Any], path: str) -> str | None:
    value = section.get("name")
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(f"{path}.name", "must be a string")
    return value.strip() or None


def _tools(raw: Mapping[str, Any]) -> tuple[AgentToAgentPolicy, Visibility, ToolPolicy]:
    tools = _table(raw.get("tools"), "tools")
    a2a = _table(tools.get("agentToAgent"), "tools.agentToAgent")
    policy = AgentToAgentPolicy(
        enabled=bool(_bool(a2a, "enabled", "tools.agentToAgent")),
        allow=_strings(a2a, "allow", "tools.agentToAgent") or (),
    )
    sessions = _table(tools.get("sessions"), "tools.sessions")
    visibility = sessions.get("visibility", "tree")
    if visibility not in get_args(Visibility):
        raise _fail("tools.sessions.visibility", 'must be "self", "tree", "agent" or "all"')
    subagents = _table(tools.get("subagents"), "tools.subagents")
    subagent_tools = _tool_policy(subagents.get("tools"), "tools.subagents.tools")
    return policy, cast(Visibility, visibility), subagent_tools


def _ping_pong(raw: Mapping[str, Any]) -> int:
    session = _table(raw.get("session"), "session")
    a2a = _table(session.get("agentToAgent"), "session.agentToAgent")
    value = a2a.get("maxPingPongTurns", MAX_PING_PONG_TURNS)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail("session.agentToAgent.maxPingPongTurns", "must be an integer")
    return max(0, min(MAX_PING_PONG_TURNS, value))


def parse_agents_config(
    raw: Mapping[str, Any], state_dir: Path, plugin_providers: Sequence[str] = ()
) -> AgentsConfig:
    agents = _table(raw.get("agents"), "agents")
    providers = _providers(raw)
    known: dict[str, object] = {**dict.fromkeys(plugin_providers), **providers}
    defaults = _defaults(agents, state_dir, known)
    a2a, visibility, subagent_tools = _tools(raw)
    return AgentsConfig(
        state_dir=state_dir,
        defaults=defaults,
        agents=_entries(agents, defaults, state_dir, known),
        providers=providers,
        agent_to_agent=a2a,
        sessions_visibility=visibility,
        subagent_tools=subagent_tools,
        max_ping_pong_turns=_ping_pong(raw),
        thread_bindings=parse_thread_bindings(raw),
        acp=parse_acp(raw),
        fs=parse_fs_tools(raw),
    )


def agents_config(settings: Settings, *, plugin_providers: Sequence[str] = ()) -> AgentsConfig:
    """The agent sections of ``settings``' config.toml, parsed (:func:`parse_agents_config`)."""
    return parse_agents_config(settings.raw, settings.state_dir, plugin_providers)
