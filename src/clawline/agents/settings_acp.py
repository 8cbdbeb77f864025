"""The ``[acp]`` section: the ``acp`` spawn runtime (external ACP agents as child sessions).

::

    [acp]
    enabled = true                    # false: sessions_spawn runtime="acp" is refused
    defaultAgent = "codex"            # the target when sessions_spawn names no agentId
    allowedAgents = []                # [] = every configured agent
    permissionMode = "approve-reads"  # approve-all | approve-reads | deny-all
    shutdownGraceSeconds = 3          # each step of stopping an agent process

    [acp.dispatch]
    enabled = true                    # false: no ACP turns are dispatched

    [acp.agents.codex]
    command = ["codex-acp"]           # argv of the agent process (stdio ACP)
    env = { OPENAI_API_KEY = "…" }    # added to the SDK's minimal environment
    cwd = "/srv/repo"                 # default working directory (else the requester's workspace)

Without any ``[acp.agents.<id>]`` there is no ACP backend: spawns answer OpenClaw's ``ACP
runtime backend is not configured. …``. Every refusal is one
:class:`~clawline.config.ConfigError` naming the key, like the other agent sections.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

from clawline import keys
from clawline.agents.settings_values import config_error as _fail
from clawline.agents.settings_values import table as _table

__all__ = [
    "ACP_DISABLED",
    "ACP_DISPATCH_DISABLED",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "PERMISSION_MODES",
    "AcpAgentConfig",
    "AcpConfig",
    "PermissionMode",
    "parse_acp",
]

ACP_DISABLED = "ACP is disabled by policy (`acp.enabled=false`)."
ACP_DISPATCH_DISABLED = "ACP dispatch is disabled by policy (`acp.dispatch.enabled=false`)."
"""OpenClaw's texts for the two policy switches (spawns and, for dispatch, every ACP turn)."""

PermissionMode: TypeAlias = Literal["approve-all", "approve-reads", "deny-all"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("approve-all", "approve-reads", "deny-all")
DEFAULT_SHUTDOWN_GRACE_S = 3.0
_MAX_SHUTDOWN_GRACE_S = 60.0
_AGENT_ID_RULE = "must be an agent id matching [a-z0-9][a-z0-9_-]{0,63}"


@dataclass(frozen=True, slots=True)
class AcpAgentConfig:
    """One ``[acp.agents.<id>]`` table."""

    id: str
    command: tuple[str, ...]
    """The program and its arguments (never run through a shell)."""
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Added to the SDK's minimal default environment (``HOME``, ``PATH``, …); not logged."""
    cwd: Path | None = None
    """Absolute; the agent's working directory when the spawn gives no ``cwd``."""


@dataclass(frozen=True, slots=True)
class AcpConfig:
    enabled: bool = True
    dispatch_enabled: bool = True
    default_agent: str | None = None
    allowed_agents: tuple[str, ...] = ()
    """Lower-cased agent ids; empty = every configured agent."""
    permission_mode: PermissionMode = "approve-reads"
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S
    agents: Mapping[str, AcpAgentConfig] = field(default_factory=dict)

    @property
    def configured(self) -> bool:
        """Whether there is a backend at all (at least one agent command)."""
        return bool(self.agents)

    def allows(self, agent_id: str) -> bool:
        return not self.allowed_agents or agent_id in self.allowed_agents


# --- parsing ---------------------------------------------------------------------------------


def _flag(section: Mapping[str, Any], name: str, path: str) -> bool:
    value = section.get(name, True)
    if not isinstance(value, bool):
        raise _fail(f"{path}.{name}", "must be true or false")
    return value


def _agent_id(value: object, path: str) -> str:
    if not isinstance(value, str) or not keys.is_valid_agent_id(value.strip()):
        raise _fail(path, _AGENT_ID_RULE)
    return value.strip().lower()


def _command(value: object, path: str) -> tuple[str, ...]:
    ok = (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, str) and item.strip() and "\x00" not in item for item in value)
    )
    if not ok:
        raise _fail(path, 'must be a non-empty list of strings (argv, e.g. ["codex-acp"])')
    return tuple(cast(list[str], value))


def _env(value: object, path: str) -> dict[str, str]:
    section = _table(value, path)
    out: dict[str, str] = {}
    for name, item in section.items():
        bad_name = not name or "=" in name or "\x00" in name
        if bad_name or not isinstance(item, str) or "\x00" in item:
            raise _fail(path, "must be a table of environment variable names to strings")
        out[name] = item
    return out


def _cwd(value: object, path: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise _fail(path, "must be an absolute directory path")
    expanded = Path(value.strip()).expanduser()
    if not expanded.is_absolute():
        raise _fail(path, "must be an absolute directory path")
    return expanded


def _agents(value: object) -> dict[str, AcpAgentConfig]:
    section = _table(value, "acp.agents")
    out: dict[str, AcpAgentConfig] = {}
    for raw_id, table in section.items():
        path = f"acp.agents.{raw_id}"
        if not keys.is_valid_agent_id(str(raw_id).strip()):
            raise _fail(path, "is not a usable agent id (use [a-z0-9][a-z0-9_-]{0,63})")
        agent_id = str(raw_id).strip().lower()
        if agent_id in out:
            raise _fail(path, f'is configured twice (ids are case-insensitive: "{agent_id}")')
        entry = _table(table, path)
        if "command" not in entry:
            raise _fail(f"{path}.command", "is required (the agent's argv)")
        out[agent_id] = AcpAgentConfig(
            id=agent_id,
            command=_command(entry.get("command"), f"{path}.command"),
            env=_env(entry.get("env"), f"{path}.env"),
            cwd=_cwd(entry.get("cwd"), f"{path}.cwd"),
        )
    return out


def _grace(section: Mapping[str, Any]) -> float:
    value = section.get("shutdownGraceSeconds", DEFAULT_SHUTDOWN_GRACE_S)
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not number or not 0 < value <= _MAX_SHUTDOWN_GRACE_S:
        raise _fail("acp.shutdownGraceSeconds", "must be a number of seconds > 0 and <= 60")
    return float(value)


def parse_acp(raw: Mapping[str, Any]) -> AcpConfig:
    """The ``[acp]`` section of a whole config.toml mapping; raises ``ConfigError``."""
    section = _table(raw.get("acp"), "acp")
    dispatch = _table(section.get("dispatch"), "acp.dispatch")
    agents = _agents(section.get("agents"))
    default = section.get("defaultAgent")
    default_agent = None if default is None else _agent_id(default, "acp.defaultAgent")
    if default_agent is not None and default_agent not in agents:
        raise _fail("acp.defaultAgent", f'"{default_agent}" is not configured in [acp.agents]')
    allowed = section.get("allowedAgents", [])
    if not isinstance(allowed, list):
        raise _fail("acp.allowedAgents", "must be a list of agent ids")
    mode = section.get("permissionMode", "approve-reads")
    if mode not in PERMISSION_MODES:
        raise _fail("acp.permissionMode", 'must be "approve-all", "approve-reads" or "deny-all"')
    return AcpConfig(
        enabled=_flag(section, "enabled", "acp"),
        dispatch_enabled=_flag(dispatch, "enabled", "acp.dispatch"),
        default_agent=default_agent,
        allowed_agents=tuple(
            _agent_id(item, f"acp.allowedAgents[{index}]") for index, item in enumerate(allowed)
        ),
        permission_mode=cast(PermissionMode, mode),
        shutdown_grace_s=_grace(section),
        agents=agents,
    )
