"""The schema of config.toml: every section clawline reads, as pydantic models.

Keys are OpenClaw's camelCase names (``maxSpawnDepth``, ``threadBindings``); the attributes are
their snake_case forms. A handful of clawline's own keys were first written in snake_case
(``[sessions] default_agent``, ``[agents] timeout_seconds``, ``[gateway] require_device``,
``[plugins] entry_points``); those spellings are still read. Keys clawline does not know are
ignored: an OpenClaw configuration carries many sections clawline has no use for, and one file
should serve both. Values are checked strictly (``"5"`` is not a number, ``1`` is not ``true``).

:class:`ClawlineConfig` is the whole file. The views the runtime hands its parts are built from
it once: :func:`agents_config` (the agent sections, with workspaces resolved under the state
directory and model references checked against the providers),
:attr:`ClawlineConfig.thread_bindings` (per channel account), :meth:`XWorkmateConfig.effective`.
docs/config.md is generated from these models (:mod:`clawline.config.reference`); the attribute
docstrings are its "meaning" column.
"""

from __future__ import annotations

import fnmatch
import re
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    Strict,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from clawline import keys
from clawline.config.problems import ConfigError, Refusal

Int: TypeAlias = Annotated[int, Strict()]
Bool: TypeAlias = Annotated[bool, Strict()]
Number: TypeAlias = Annotated[float, Strict()]
"""An integer or a float (TOML writes ``3`` and ``3.0`` alike); never a boolean."""
Text: TypeAlias = Annotated[str, Strict(), Field(min_length=1)]
Names: TypeAlias = tuple[Annotated[str, Strict(), Field(min_length=1)], ...]
Entries: TypeAlias = tuple[Annotated[str, Strict()], ...]
"""Strings whose form a later check owns (the gateway's origins and host names)."""

PG_MAX_TIMEOUT_MS = 2_147_483_647
"""PostgreSQL's largest ``statement_timeout`` / ``lock_timeout``."""
DEFAULT_ECHO_DELAY_MS = 5
DEFAULT_RUN_TIMEOUT_MS = 48 * 60 * 60 * 1000
"""OpenClaw's ``agents.defaults.timeoutSeconds`` default (48 h)."""
MAX_RUN_TIMEOUT_MS = 2_147_000_000
"""What a timeout of 0 ("none") means, as in OpenClaw."""
DEFAULT_MODEL = "offline"
MAX_PING_PONG_TURNS = 5
"""``session.agentToAgent.maxPingPongTurns`` default and upper clamp."""
BUILTIN_PROVIDERS = ("offline", "openai", "anthropic")
DEFAULT_ACCOUNT_ID = "default"
DEFAULT_PORT = 18790
"""One above OpenClaw's 18789, so both can run on one machine."""
ACP_DISABLED = "ACP is disabled by policy (`acp.enabled=false`)."
ACP_DISPATCH_DISABLED = "ACP dispatch is disabled by policy (`acp.dispatch.enabled=false`)."
"""OpenClaw's texts for the two policy switches (spawns and, for dispatch, every ACP turn)."""
XWORKMATE_PLUGIN_ID = "openclaw-multi-session-plugins"
"""The multi-session plugin's id in OpenClaw (its ``plugins.entries`` key)."""
XWORKMATE_SECRET_ENV = "XWORKMATE_ARTIFACT_REF_SIGNING_SECRET"
_AGENT_ID_RULE = "must be an agent id matching [a-z0-9][a-z0-9_-]{0,63}"
_MAIN_KEY = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_HOUR_MS = 60 * 60 * 1000
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
MASK = "**********"
"""What ``clawline config show`` prints for a secret (pydantic's ``SecretStr`` form)."""

Visibility: TypeAlias = Literal["self", "tree", "agent", "all"]
ProviderApi: TypeAlias = Literal["openai", "anthropic"]
PermissionMode: TypeAlias = Literal["approve-all", "approve-reads", "deny-all"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("approve-all", "approve-reads", "deny-all")
_API_NAMES: dict[str, ProviderApi] = {
    "openai": "openai",
    "openai-completions": "openai",
    "anthropic": "anthropic",
    "anthropic-messages": "anthropic",
}


def _legacy(name: str, old: str) -> Any:
    """A key read under its camelCase name and its first, snake_case spelling."""
    return AliasChoices(name, old)


class Section(BaseModel):
    """A table of config.toml: frozen, camelCase keys, unknown keys ignored."""

    model_config = ConfigDict(
        frozen=True,
        extra="ignore",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
        hide_input_in_errors=True,
    )


def matches_pattern(value: str, patterns: Sequence[str]) -> bool:
    """Whether ``value`` matches one of ``patterns`` (``*`` wildcard, case-insensitive)."""
    lowered = value.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)


def effective_timeout_ms(requested: int | None, default_ms: int) -> int:
    """``None`` → the configured default; ``0`` → :data:`MAX_RUN_TIMEOUT_MS`; capped there."""
    if requested is None:
        requested = default_ms
    if requested == 0:
        return MAX_RUN_TIMEOUT_MS
    return min(requested, MAX_RUN_TIMEOUT_MS)


def parse_model_ref(ref: str, providers: Mapping[str, object] | Sequence[str]) -> tuple[str, str]:
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


def _agent_id(value: str) -> str:
    if not keys.is_valid_agent_id(value.strip()):
        raise Refusal(_AGENT_ID_RULE)
    return value.strip().lower()


def _stripped(value: str | None) -> str | None:
    if value is not None and (not value.strip() or "\x00" in value):
        raise Refusal("must be a non-empty string")
    return None if value is None else value.strip()


# --- [store], [sessions] -----------------------------------------------------------------------


class PoolSettings(Section):
    """The PostgreSQL store's connection pool and the limits every pooled connection sets
    (SQLite has no use for them). A timeout of 0 means none."""

    size: Int = Field(4, ge=1, le=64, alias="poolSize")
    """PostgreSQL: connections in the pool (and store workers)."""
    statement_timeout_ms: Int = Field(30_000, ge=0, le=PG_MAX_TIMEOUT_MS)
    """PostgreSQL: the longest a statement may run, in ms; 0 = no limit."""
    lock_timeout_ms: Int = Field(10_000, ge=0, le=PG_MAX_TIMEOUT_MS)
    """PostgreSQL: the longest wait for a lock, in ms; 0 = no limit."""


class StoreConfig(PoolSettings):
    """``[store]``: where the session catalog lives."""

    url: Annotated[str, Strict()] | None = Field(
        None, json_schema_extra={"rule": "a store URL (sqlite:///… or postgresql://…)"}
    )
    """``sqlite:///path.db`` or ``postgresql://host/db[?schema=name]``; default: the SQLite file
    ``clawline.db`` in the state directory. ``CLAWLINE_STORE_URL`` wins over it."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return (value.strip() or None) if value is not None else None


class SessionsConfig(Section):
    """``[sessions]``: the default session."""

    default_agent: Text = Field(
        keys.DEFAULT_AGENT_ID,
        validation_alias=_legacy("defaultAgent", "default_agent"),
        json_schema_extra={"rule": "a valid agent id"},
    )
    """The agent of a session key that names none."""
    main_key: Text = Field(
        keys.DEFAULT_MAIN_KEY,
        validation_alias=_legacy("mainKey", "main_key"),
        json_schema_extra={"rule": "1-64 letters, digits, '.', '_' or '-'"},
    )
    """The key of each agent's main session (``agent:<id>:<mainKey>``)."""

    @field_validator("default_agent")
    @classmethod
    def _default_agent(cls, value: str) -> str:
        if not keys.is_valid_agent_id(value):
            raise Refusal("must be a valid agent id")
        return value.lower()

    @field_validator("main_key")
    @classmethod
    def _main_key(cls, value: str) -> str:
        if not _MAIN_KEY.fullmatch(value.lower()):
            raise Refusal("must be 1-64 letters, digits, '.', '_' or '-'")
        return value.lower()


# --- [agents], [models], [tools], [session] ---------------------------------------------------


class ToolPolicy(Section):
    """``{allow, deny}`` tool name patterns: deny wins; an empty ``allow`` allows everything."""

    allow: Names = ()
    """Tool name patterns allowed (``*`` wildcard); empty = every tool."""
    deny: Names = ()
    """Tool name patterns refused, whatever ``allow`` says."""

    def permits(self, tool_name: str) -> bool:
        if matches_pattern(tool_name, self.deny):
            return False
        return not self.allow or matches_pattern(tool_name, self.allow)


class SubagentLimits(Section):
    """``agents.defaults.subagents``, and an agent's ``subagents`` over it (OpenClaw's defaults)."""

    max_spawn_depth: Int = Field(1, ge=1, le=5)
    """How deep sub-agents may nest (1 = children of a main session only)."""
    max_children_per_agent: Int = Field(5, ge=1, le=20)
    """Active children one session may have."""
    max_concurrent: Int = Field(8, ge=1)
    """Sub-agent runs at once, gateway-wide (the ``subagent`` lane)."""
    run_timeout_seconds: Int = Field(0, ge=0)
    """A child run's default timeout; 0 = the agent's own timeout."""
    archive_after_minutes: Int = Field(60, ge=0)
    """Ended children are archived after this long; 0 = never."""
    allow_agents: Names = ()
    """Agents a spawn may target besides the requester's own: ``[]`` = none, ``["*"]`` = any
    defined agent."""
    require_agent_id: Bool = False
    """Spawns must name their ``agentId``."""

    def allows_target(self, requester_agent_id: str, target_agent_id: str) -> bool:
        if target_agent_id.lower() == requester_agent_id.lower():
            return True
        return matches_pattern(target_agent_id, self.allow_agents)

    def over(self, base: SubagentLimits) -> SubagentLimits:
        """``base`` with the keys this table sets replaced (an agent's limits over the
        defaults)."""
        return base.model_copy(update={name: getattr(self, name) for name in self.model_fields_set})


def _model_ref(value: str | None) -> str | None:
    value = _stripped(value)
    if value is None:
        return None
    try:
        parse_model_ref(value, _ANY_PROVIDER)
    except ValueError as error:
        raise Refusal(f'"{value}" is invalid: {error}') from None
    return value


class _AnyProvider(Mapping[str, object]):
    """Every provider name: the model references' syntax is checked while the file is read,
    their provider once the plugins' providers are known (:func:`agents_config`)."""

    def __getitem__(self, key: str) -> object:
        return None

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Any:
        return iter(())

    def __len__(self) -> int:
        return 0


_ANY_PROVIDER = _AnyProvider()


class AgentDefaults(Section):
    """``[agents.defaults]``: what every agent has unless its ``[[agents.list]]`` entry says
    otherwise."""

    model: Text = Field(
        DEFAULT_MODEL, json_schema_extra={"rule": '"offline" or "<provider>/<model>"'}
    )
    """The model: ``offline`` (built in, deterministic) or ``<provider>/<model>``."""
    workspace: Text | None = Field(None, json_schema_extra={"rule": "a directory path"})
    """The agents' workspace (relative: under the state directory); default
    ``<state dir>/workspace/<agentId>``."""
    timeout_seconds: Int | None = Field(None, ge=0)
    """A run's timeout; 0 = none; default: ``[agents] timeoutSeconds``."""
    subagents: SubagentLimits = SubagentLimits()

    _model = field_validator("model")(classmethod(lambda cls, value: _model_ref(value)))
    _workspace = field_validator("workspace")(classmethod(lambda cls, value: _stripped(value)))


class AgentEntry(Section):
    """One ``[[agents.list]]`` entry; keys it leaves out fall back to the defaults."""

    id: Text = Field(json_schema_extra={"rule": "an agent id matching [a-z0-9][a-z0-9_-]{0,63}"})
    """The agent id (case-insensitive)."""
    name: Annotated[str, Strict()] | None = None
    """The display name ``agents_list`` shows."""
    model: Text | None = Field(
        None, json_schema_extra={"rule": '"offline" or "<provider>/<model>"'}
    )
    """This agent's model."""
    workspace: Text | None = Field(None, json_schema_extra={"rule": "a directory path"})
    """This agent's workspace."""
    timeout_seconds: Int | None = Field(None, ge=0)
    """This agent's run timeout; 0 = none."""
    subagents: SubagentLimits | None = None
    """This agent's sub-agent limits, key by key over ``agents.defaults.subagents``."""
    tools: ToolPolicy = ToolPolicy()
    """The tools this agent may use."""

    _id = field_validator("id")(classmethod(lambda cls, value: _agent_id(value)))
    _model = field_validator("model")(classmethod(lambda cls, value: _model_ref(value)))
    _workspace = field_validator("workspace")(classmethod(lambda cls, value: _stripped(value)))

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return (value.strip() or None) if value is not None else None


class AgentsSection(Section):
    """``[agents]``: the run defaults, the agent defaults and the agent list."""

    echo_delay_ms: Int = Field(
        DEFAULT_ECHO_DELAY_MS,
        ge=0,
        validation_alias=_legacy("echoDelayMs", "echo_delay_ms"),
    )
    """The pause before each word the offline model streams, in ms."""
    timeout_seconds: Int = Field(
        DEFAULT_RUN_TIMEOUT_MS // 1000,
        ge=0,
        validation_alias=_legacy("timeoutSeconds", "timeout_seconds"),
    )
    """The default run timeout (48 h); 0 = none."""
    defaults: AgentDefaults = AgentDefaults()
    list: tuple[AgentEntry, ...] = ()
    """``[[agents.list]]``: the agents, each with its overrides of the defaults."""

    @field_validator("list")
    @classmethod
    def _unique(cls, value: tuple[AgentEntry, ...]) -> tuple[AgentEntry, ...]:
        seen: set[str] = set()
        for index, entry in enumerate(value):
            if entry.id in seen:
                raise Refusal(f'"{entry.id}" is listed twice', key=f"[{index}].id")
            seen.add(entry.id)
        return value

    @property
    def run_timeout_ms(self) -> int:
        """The run manager's default timeout (0 = none → :data:`MAX_RUN_TIMEOUT_MS`)."""
        return effective_timeout_ms(self.timeout_seconds * 1000, DEFAULT_RUN_TIMEOUT_MS)


class ProviderSettings(Section):
    """``[models.providers.<name>]``: an OpenAI-compatible or Anthropic endpoint. The API key is
    never part of ``repr``; read it with :meth:`api_key` (``apiKey``, else the environment
    variable ``apiKeyEnv``)."""

    name: str = Field(exclude=True)
    """The table's name (``<name>`` in ``<name>/<model>``)."""
    api: ProviderApi = Field(
        json_schema_extra={"rule": '"openai" or "anthropic"'},
    )
    """The wire API: ``openai`` (also ``openai-completions``) or ``anthropic`` (also
    ``anthropic-messages``); default: the provider's name when it is one of those."""
    base_url: Text | None = None
    """The endpoint (default: the SDK's)."""
    api_key_env: Text | None = None
    """The environment variable holding the key (default ``OPENAI_API_KEY`` /
    ``ANTHROPIC_API_KEY`` for the providers named after their API)."""
    max_retries: Int = Field(2, ge=0, le=10)
    """Retries of a failed request (the SDKs' own back-off)."""
    secret_api_key: SecretStr | None = Field(
        None, alias="apiKey", json_schema_extra={"rule": "a non-empty string"}
    )
    """The key itself (prefer ``apiKeyEnv``); masked by ``clawline config show``."""

    @model_validator(mode="before")
    @classmethod
    def _api(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        name = str(data.get("name", ""))
        out = dict(data)
        api = out.get("api", name)
        if isinstance(api, str) and api.strip() in _API_NAMES:
            out["api"] = _API_NAMES[api.strip()]
            if "apiKeyEnv" not in out and "api_key_env" not in out and name == out["api"]:
                out["apiKeyEnv"] = "OPENAI_API_KEY" if name == "openai" else "ANTHROPIC_API_KEY"
        elif "api" in out or name not in _API_NAMES:
            raise Refusal('must be "openai" or "anthropic"', key="api")
        return out

    @field_validator("secret_api_key")
    @classmethod
    def _key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise Refusal("must be a non-empty string")
        return value

    def api_key(self, env: Mapping[str, str]) -> str | None:
        if self.secret_api_key is not None:
            return self.secret_api_key.get_secret_value().strip()
        if self.api_key_env:
            return env.get(self.api_key_env) or None
        return None


def _named(value: Any, key: str = "name") -> Any:
    """A table of tables with each inner table told its own name."""
    if not isinstance(value, Mapping):
        return value
    return {
        name: {**table, key: name} if isinstance(table, Mapping) else table
        for name, table in value.items()
    }


class ModelsConfig(Section):
    """``[models]``."""

    providers: dict[str, ProviderSettings] = {}
    """``[models.providers.<name>]``: model providers besides the built-in ``openai`` and
    ``anthropic``."""

    @field_validator("providers", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            for name in value:
                if name == "offline" or not keys.is_valid_agent_id(str(name)):
                    raise Refusal("is not a usable provider name", key=str(name))
        return _named(value)


class AgentToAgentPolicy(Section):
    """``[tools.agentToAgent]``: cross-agent sends need ``enabled`` and both ids in ``allow``."""

    enabled: Bool = False
    """Whether ``sessions_send`` may reach another agent's sessions."""
    allow: Names = ()
    """Agent id patterns (``*`` wildcard, case-insensitive); empty = all."""

    def allows(self, agent_id: str) -> bool:
        return not self.allow or matches_pattern(agent_id, self.allow)


class SessionToolsConfig(Section):
    visibility: Visibility = "tree"
    """Which sessions the session tools see: ``self``, ``tree`` (the requester's family),
    ``agent`` (its agent's) or ``all``."""


class SubagentToolsConfig(Section):
    tools: ToolPolicy = ToolPolicy()
    """The tools sub-agent sessions (depth >= 1) may use."""


class FsToolsConfig(Section):
    """``[tools.fs]``: how workspace file access treats hard links. Off by default: a hard link
    planted in a workspace can name any file of the same file system."""

    allow_hardlinks: Bool = False
    """Files with more than one hard link may be read and written (file tools, the
    multi-session plugin's artifacts)."""


class AttachmentLimits(Section):
    """``[tools.sessions_spawn.attachments]``: files handed to a sub-agent (off by default)."""

    enabled: Bool = False
    """Whether ``sessions_spawn`` accepts attachments."""
    max_files: Int = Field(50, ge=1, le=50)
    """Files per spawn."""
    max_file_bytes: Int = Field(1024 * 1024, ge=1, le=1 << 30)
    """Bytes per file (1 MiB)."""
    max_total_bytes: Int = Field(5 * 1024 * 1024, ge=1, le=1 << 30)
    """Bytes per spawn (5 MiB)."""


class SessionsSpawnConfig(Section):
    attachments: AttachmentLimits = AttachmentLimits()


class ToolsConfig(Section):
    """``[tools]``."""

    agent_to_agent: AgentToAgentPolicy = AgentToAgentPolicy()
    sessions: SessionToolsConfig = SessionToolsConfig()
    subagents: SubagentToolsConfig = SubagentToolsConfig()
    fs: FsToolsConfig = FsToolsConfig()
    sessions_spawn: SessionsSpawnConfig = Field(SessionsSpawnConfig(), alias="sessions_spawn")


class PingPongConfig(Section):
    max_ping_pong_turns: Int = MAX_PING_PONG_TURNS
    """Reply turns of an agent-to-agent exchange (clamped to 0..5)."""

    @field_validator("max_ping_pong_turns")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return max(0, min(MAX_PING_PONG_TURNS, value))


# --- thread bindings ---------------------------------------------------------------------------


Hours: TypeAlias = Annotated[
    float, Strict(), Field(ge=0, lt=1e6, json_schema_extra={"rule": "a number of hours >= 0"})
]


class ThreadBindingLevel(Section):
    """One ``threadBindings`` table as written; a key left out falls back to the next level
    (account → channel → ``session.threadBindings`` → built-in default)."""

    enabled: Bool | None = None
    """Whether thread bindings work (default true)."""
    idle_hours: Hours | None = Field(None, json_schema_extra={"rule": "a number of hours >= 0"})
    """A binding idle this long ends (default 24); 0 = no idle limit."""
    max_age_hours: Hours | None = Field(None, json_schema_extra={"rule": "a number of hours >= 0"})
    """A binding this old ends (default 0 = no age limit)."""
    spawn_subagent_sessions: Bool | None = None
    """``sessions_spawn thread=true`` may bind sub-agents (default true, false for channels
    whose top-level placement is ``child``)."""
    spawn_acp_sessions: Bool | None = None
    """``sessions_spawn runtime="acp" thread=true`` may bind ACP children (same default)."""


class SessionConfig(Section):
    """``[session]``."""

    agent_to_agent: PingPongConfig = PingPongConfig()
    thread_bindings: ThreadBindingLevel = ThreadBindingLevel()


class ChannelAccountConfig(Section):
    thread_bindings: ThreadBindingLevel = ThreadBindingLevel()


class ChannelConfig(Section):
    """``[channels.<channel>]``: one channel's settings (its adapter may read more keys)."""

    default_account: Text | None = None
    """The account of a context that names none (default ``default``)."""
    thread_bindings: ThreadBindingLevel = ThreadBindingLevel()
    accounts: dict[str, ChannelAccountConfig] = {}
    """``[channels.<channel>.accounts.<account>]``: per-account settings."""

    _default = field_validator("default_account")(classmethod(lambda cls, value: _stripped(value)))

    @field_validator("accounts")
    @classmethod
    def _accounts(cls, value: dict[str, ChannelAccountConfig]) -> dict[str, ChannelAccountConfig]:
        return {str(name).strip(): table for name, table in value.items()}


@dataclass(frozen=True, slots=True)
class ThreadBindingSettings:
    """The effective thread binding settings of one channel account."""

    channel: str
    account_id: str
    enabled: bool = True
    idle_hours: float = 24.0
    max_age_hours: float = 0.0
    spawn_subagent_sessions: bool = True
    spawn_acp_sessions: bool = True

    @property
    def idle_ms(self) -> int:
        """0 = no idle limit."""
        return int(self.idle_hours * _HOUR_MS)

    @property
    def max_age_ms(self) -> int:
        """0 = no age limit."""
        return int(self.max_age_hours * _HOUR_MS)

    def spawn_enabled(self, kind: str) -> bool:
        """``spawnSubagentSessions`` (``kind`` ``subagent``) or ``spawnAcpSessions`` (``acp``)."""
        return self.spawn_acp_sessions if kind == "acp" else self.spawn_subagent_sessions


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


@dataclass(frozen=True, slots=True)
class ThreadBindingsConfig:
    """All thread binding tables of a config; :meth:`resolve` applies the precedence."""

    session: ThreadBindingLevel = field(default_factory=ThreadBindingLevel)
    channels: Mapping[str, ChannelConfig] = field(default_factory=dict)

    def default_account(self, channel: str) -> str:
        """``channels.<ch>.defaultAccount``, else ``default``."""
        section = self.channels.get(channel.strip().lower())
        return (section.default_account if section else None) or DEFAULT_ACCOUNT_ID

    def resolve(
        self, channel: str, account_id: str | None = None, *, default_placement: str = "current"
    ) -> ThreadBindingSettings:
        """The settings of ``channel``/``account_id`` (account → channel → session → default).

        ``default_placement`` is the channel adapter's top-level placement: ``child`` makes the
        spawn flags default to false.
        """
        name = channel.strip().lower()
        account = (account_id or "").strip() or self.default_account(name)
        section = self.channels.get(name) or ChannelConfig()
        listed = section.accounts.get(account)
        levels = (
            listed.thread_bindings if listed else ThreadBindingLevel(),
            section.thread_bindings,
        )
        spawn_default = default_placement != "child"
        defaults = ThreadBindingSettings(channel=name, account_id=account)

        def pick(key: str, default: Any) -> Any:
            return _first(
                *(getattr(level, key) for level in levels), getattr(self.session, key), default
            )

        return ThreadBindingSettings(
            channel=name,
            account_id=account,
            enabled=pick("enabled", True),
            idle_hours=pick("idle_hours", defaults.idle_hours),
            max_age_hours=pick("max_age_hours", defaults.max_age_hours),
            spawn_subagent_sessions=pick("spawn_subagent_sessions", spawn_default),
            spawn_acp_sessions=pick("spawn_acp_sessions", spawn_default),
        )


def _secret_value(
    secret: SecretStr | None,
    env_name: str | None,
    env: Mapping[str, str],
    file: str | None = None,
) -> str | None:
    """A secret given in the configuration, else read from the environment variable named,
    else from the file named (surrounding white space ignored; an unreadable file is none)."""
    if secret is not None:
        return secret.get_secret_value()
    if env_name and env.get(env_name):
        return env[env_name]
    if file:
        try:
            return Path(file).expanduser().read_text(encoding="utf-8").strip() or None
        except OSError:
            return None
    return None


class WebhookChannelConfig(ChannelConfig):
    """``[channels.webhook]``: the webhook channel, a channel without threads. Inbound: HTTP
    ``POST /channels/webhook`` on the gateway; outbound: HTTP ``POST`` to :attr:`url`."""

    url: Text | None = Field(None, json_schema_extra={"rule": "an http(s) URL"})
    """Where replies are POSTed (JSON); without it the channel only receives."""
    token: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """Sent as ``Authorization: Bearer …`` with every outbound POST (prefer ``tokenEnv``)."""
    token_env: Text | None = None
    """The environment variable holding :attr:`token`."""
    token_file: Text | None = None
    """A file holding :attr:`token` (surrounding white space is ignored)."""
    inbound_token: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """The ``Authorization: Bearer …`` every inbound POST must carry (prefer
    ``inboundTokenEnv``); without one (from here or the environment) inbound POSTs are refused."""
    inbound_token_env: Text | None = None
    """The environment variable holding :attr:`inbound_token`."""
    inbound_token_file: Text | None = None
    """A file holding :attr:`inbound_token` (surrounding white space is ignored)."""
    timeout_seconds: Number = Field(10.0, gt=0, le=300)
    """The longest an outbound POST may take."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.strip().startswith(("http://", "https://")):
            raise Refusal("must be an http(s) URL")
        return None if value is None else value.strip()

    def outbound_token(self, env: Mapping[str, str]) -> str | None:
        return _secret_value(self.token, self.token_env, env, self.token_file)

    def inbound_secret(self, env: Mapping[str, str]) -> str | None:
        return _secret_value(
            self.inbound_token, self.inbound_token_env, env, self.inbound_token_file
        )


class MatrixChannelConfig(ChannelConfig):
    """``[channels.matrix]``: the Matrix channel, one bot account on one homeserver (matrix-nio,
    the ``matrix`` extra). Unencrypted rooms only; threads are Matrix threads."""

    homeserver: Text = Field(json_schema_extra={"rule": "an http(s) URL"})
    """The homeserver's client-server API, e.g. ``https://matrix.example.org``."""
    user_id: Text = Field(json_schema_extra={"rule": "a Matrix user id: @localpart:server"})
    """The bot's user id (``@clawline:example.org``)."""
    access_token: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """The bot's access token (prefer ``accessTokenEnv``); with it no login is made."""
    access_token_env: Text | None = None
    """The environment variable holding :attr:`access_token`."""
    access_token_file: Text | None = None
    """A file holding :attr:`access_token` (surrounding white space is ignored)."""
    password: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """The bot's password, used to log in when no access token is given (prefer
    ``passwordEnv``)."""
    password_env: Text | None = None
    """The environment variable holding :attr:`password`."""
    password_file: Text | None = None
    """A file holding :attr:`password` (surrounding white space is ignored)."""
    device_id: Text | None = None
    """The device to log in as (or the access token's device). Keep it fixed with password login:
    Matrix drops a repeated transaction id per device, which is what delivers a reply once
    across a crash."""
    auto_join: Bool = True
    """Join the rooms the bot is invited to."""
    sync_timeout_ms: Int = Field(30_000, ge=0, le=300_000)
    """How long one sync waits on the homeserver for something new (a long poll)."""

    @field_validator("homeserver")
    @classmethod
    def _homeserver(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise Refusal("must be an http(s) URL")
        return value.rstrip("/")

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        value = value.strip()
        local, _, server = value.removeprefix("@").partition(":")
        if not value.startswith("@") or not local or not server:
            raise Refusal("must be a Matrix user id: @localpart:server")
        return value

    @model_validator(mode="after")
    def _credentials(self) -> MatrixChannelConfig:
        given = (
            self.access_token,
            self.access_token_env,
            self.access_token_file,
            self.password,
            self.password_env,
            self.password_file,
        )
        if not any(given):
            raise Refusal(
                "needs an access token or a password (accessToken, accessTokenEnv,"
                " accessTokenFile, password, passwordEnv or passwordFile)"
            )
        return self

    def token(self, env: Mapping[str, str]) -> str | None:
        return _secret_value(self.access_token, self.access_token_env, env, self.access_token_file)

    def login_password(self, env: Mapping[str, str]) -> str | None:
        return _secret_value(self.password, self.password_env, env, self.password_file)


TELEGRAM_API_BASE_URL = "https://api.telegram.org/bot"
"""Telegram's Bot API: requests go to ``<apiBaseUrl><token>/<method>``."""


class TelegramChannelConfig(ChannelConfig):
    """``[channels.telegram]``: the Telegram channel (a bot, through the Bot API). Inbound: long
    polling (``getUpdates``, the default) or a webhook the gateway serves at ``POST
    /channels/telegram``; outbound: ``sendMessage``. Forum topics are its threads."""

    bot_token: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """The bot's token from @BotFather (prefer ``botTokenEnv`` or ``botTokenFile``); masked by
    ``clawline config show`` and never logged."""
    bot_token_env: Text | None = None
    """The environment variable holding :attr:`bot_token`."""
    bot_token_file: Text | None = None
    """A file holding :attr:`bot_token` (surrounding white space is ignored)."""
    api_base_url: Text = Field(TELEGRAM_API_BASE_URL, json_schema_extra={"rule": "an http(s) URL"})
    """The Bot API's base URL, the token and the method appended (a local Bot API server, a
    test fake)."""
    mode: Literal["polling", "webhook"] = "polling"
    """``polling`` (``getUpdates``, nothing to expose) or ``webhook`` (Telegram POSTs updates to
    :attr:`webhook_url`, which must reach the gateway's ``/channels/telegram``)."""
    webhook_url: Text | None = Field(None, json_schema_extra={"rule": "an http(s) URL"})
    """Webhook mode: the public URL of the gateway's ``POST /channels/telegram``."""
    webhook_secret: SecretStr | None = Field(
        None, json_schema_extra={"rule": "1-256 characters A-Z a-z 0-9 _ -"}
    )
    """Webhook mode: the secret Telegram sends in ``X-Telegram-Bot-Api-Secret-Token`` (prefer
    ``webhookSecretEnv``); updates without it are refused (401)."""
    webhook_secret_env: Text | None = None
    """The environment variable holding :attr:`webhook_secret`."""
    poll_timeout_seconds: int = Field(30, ge=0, le=50)
    """Polling mode: how long one ``getUpdates`` long poll waits for an update."""

    @field_validator("api_base_url", "webhook_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.strip().startswith(("http://", "https://")):
            raise Refusal("must be an http(s) URL")
        return None if value is None else value.strip()

    @field_validator("webhook_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()
        ):
            raise Refusal("must be 1-256 characters A-Z a-z 0-9 _ -")
        return value

    @model_validator(mode="after")
    def _webhook(self) -> TelegramChannelConfig:
        if self.mode == "webhook" and self.webhook_url is None:
            raise Refusal("webhook mode needs webhookUrl")
        return self

    def token(self, env: Mapping[str, str]) -> str | None:
        """The bot token: from the configuration, else the environment variable, else
        ``botTokenFile``."""
        found = _secret_value(self.bot_token, self.bot_token_env, env, self.bot_token_file)
        return None if found is None else found.strip() or None

    def secret(self, env: Mapping[str, str]) -> str | None:
        return _secret_value(self.webhook_secret, self.webhook_secret_env, env)


class ChannelsConfig(Section):
    """``[channels]``: each channel's table; the built-in adapters' tables have their own keys,
    any other channel's table holds what every channel has (``defaultAccount``,
    ``threadBindings``, ``accounts``)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, ChannelConfig] = Field(init=False)
    extra_section: ClassVar[type[BaseModel]] = ChannelConfig
    """What an extra key holds (:func:`clawline.config.problems.problems_of` reads it)."""

    webhook: WebhookChannelConfig | None = None
    """``[channels.webhook]``: the webhook channel (off unless the table exists)."""
    matrix: MatrixChannelConfig | None = None
    """``[channels.matrix]``: the Matrix channel (off unless the table exists)."""
    telegram: TelegramChannelConfig | None = None
    """``[channels.telegram]``: the Telegram channel (off unless the table exists)."""

    @model_validator(mode="before")
    @classmethod
    def _lower(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            return {str(name).strip().lower(): table for name, table in data.items()}
        return data

    def by_name(self) -> dict[str, ChannelConfig]:
        """Every configured channel's table, by channel id."""
        out: dict[str, ChannelConfig] = dict(self.model_extra or {})
        if self.webhook is not None:
            out["webhook"] = self.webhook
        if self.matrix is not None:
            out["matrix"] = self.matrix
        if self.telegram is not None:
            out["telegram"] = self.telegram
        return out


class RoutePeer(Section):
    kind: Literal["direct", "group"]
    """``direct`` (a one-to-one chat) or ``group`` (a room, group or channel)."""
    id: Text
    """The peer: the user of a direct chat, the room or group otherwise."""


class RouteMatch(Section):
    channel: Text
    """The channel id."""
    account_id: Text | None = None
    """One account of the channel (default: any)."""
    peer: RoutePeer | None = None
    """One conversation (default: any)."""

    def matches(self, channel: str, account_id: str, peer_kind: str, peer_id: str) -> bool:
        if self.channel.strip().lower() != channel:
            return False
        if self.account_id is not None and self.account_id != account_id:
            return False
        return self.peer is None or (self.peer.kind == peer_kind and self.peer.id == peer_id)


class AgentRoute(Section):
    """One ``[[bindings]]`` entry (OpenClaw's routing): conversations matching ``match`` are
    answered by ``agentId``."""

    agent_id: Text = Field(json_schema_extra={"rule": "an agent id"})
    """The agent that answers."""
    match: RouteMatch
    """Which conversations."""

    _agent = field_validator("agent_id")(classmethod(lambda cls, value: _agent_id(value)))


# --- [acp] -----------------------------------------------------------------------------------


class AcpAgentConfig(Section):
    """``[acp.agents.<id>]``: one external ACP agent."""

    id: str = Field(exclude=True)
    """The table's name, the agent id."""
    command: tuple[Annotated[str, Strict(), Field(min_length=1)], ...] = Field(
        min_length=1,
        json_schema_extra={"rule": 'a non-empty list of strings (argv, e.g. ["codex-acp"])'},
    )
    """The program and its arguments (never run through a shell)."""
    env: dict[str, Annotated[str, Strict()]] = Field(
        {},
        repr=False,
        json_schema_extra={"rule": "a table of environment variable names to strings"},
    )
    """Added to the SDK's minimal environment (``HOME``, ``PATH``, …); masked by ``config show``,
    never logged."""
    cwd: Path | None = Field(None, json_schema_extra={"rule": "an absolute directory path"})
    """The agent's working directory when the spawn gives none (else the requester's
    workspace)."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item.strip() or "\x00" in item for item in value):
            raise Refusal('must be a non-empty list of strings (argv, e.g. ["codex-acp"])')
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for name, item in value.items():
            if not name or "=" in name or "\x00" in name or "\x00" in item:
                raise Refusal("must be a table of environment variable names to strings")
        return value

    @field_serializer("env")
    def _masked(self, value: dict[str, str]) -> dict[str, str]:
        return dict.fromkeys(value, MASK)

    @field_validator("cwd", mode="before")
    @classmethod
    def _cwd(cls, value: Any) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise Refusal("must be an absolute directory path")
        path = Path(value.strip()).expanduser()
        if not path.is_absolute():
            raise Refusal("must be an absolute directory path")
        return path


class AcpDispatchConfig(Section):
    enabled: Bool = True
    """False: no ACP turn is dispatched (OpenClaw's ``acp.dispatch.enabled``)."""


class AcpConfig(Section):
    """``[acp]``: the ``acp`` spawn runtime (external ACP agents as child sessions). Without any
    ``[acp.agents.<id>]`` there is no ACP backend."""

    enabled: Bool = True
    """False: ``sessions_spawn runtime="acp"`` is refused."""
    dispatch: AcpDispatchConfig = AcpDispatchConfig()
    default_agent: Text | None = Field(None, json_schema_extra={"rule": "a configured agent id"})
    """The target when a spawn names no ``agentId``."""
    allowed_agents: tuple[Annotated[str, Strict()], ...] = Field(
        (), json_schema_extra={"rule": "a list of agent ids"}
    )
    """The agents spawns may target; empty = every configured agent."""
    permission_mode: PermissionMode = "approve-reads"
    """How the agents' permission requests are answered."""
    shutdown_grace_seconds: Number = Field(
        3.0, gt=0, le=60, json_schema_extra={"rule": "a number of seconds > 0 and <= 60"}
    )
    """Each step of stopping an agent process."""
    agents: dict[str, AcpAgentConfig] = {}
    """``[acp.agents.<id>]``: the agents' commands."""

    @field_validator("agents", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out: dict[str, Any] = {}
        for raw_id, table in value.items():
            text = str(raw_id).strip()
            if not keys.is_valid_agent_id(text):
                raise Refusal(
                    "is not a usable agent id (use [a-z0-9][a-z0-9_-]{0,63})", key=str(raw_id)
                )
            if text.lower() in out:
                raise Refusal(
                    f'is configured twice (ids are case-insensitive: "{text.lower()}")',
                    key=str(raw_id),
                )
            if isinstance(table, Mapping) and "command" not in table:
                raise Refusal("is required (the agent's argv)", key=f"{raw_id}.command")
            out[text.lower()] = table
        return _named(out, "id")

    @field_validator("default_agent")
    @classmethod
    def _default(cls, value: str | None) -> str | None:
        return None if value is None else _agent_id(value)

    @field_validator("allowed_agents")
    @classmethod
    def _allowed(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for index, item in enumerate(value):
            try:
                out.append(_agent_id(item))
            except Refusal as refusal:
                raise Refusal(refusal.text, key=f"[{index}]") from None
        return tuple(out)

    @model_validator(mode="after")
    def _default_configured(self) -> AcpConfig:
        if self.default_agent is not None and self.default_agent not in self.agents:
            raise Refusal(
                f'"{self.default_agent}" is not configured in [acp.agents]', key="defaultAgent"
            )
        return self

    @property
    def dispatch_enabled(self) -> bool:
        return self.dispatch.enabled

    @property
    def shutdown_grace_s(self) -> float:
        return self.shutdown_grace_seconds

    @property
    def configured(self) -> bool:
        """Whether there is a backend at all (at least one agent command)."""
        return bool(self.agents)

    def allows(self, agent_id: str) -> bool:
        return not self.allowed_agents or agent_id in self.allowed_agents


# --- [gateway] -------------------------------------------------------------------------------


class GatewayConfig(Section):
    """``[gateway]``: the gateway this state directory serves, and the one clients reach.
    Command-line options and ``CLAWLINE_GATEWAY_*`` variables win over it."""

    port: Int = Field(DEFAULT_PORT, ge=0, le=65535)
    """The port (0: any free one)."""
    bind: Literal["loopback", "lan"] = "loopback"
    """``loopback`` (127.0.0.1) or ``lan`` (0.0.0.0, needs a token)."""
    auth: Literal["token", "none"] | None = None
    """``token`` or ``none``; default: ``token`` when a token is set."""
    token: SecretStr | None = Field(None, json_schema_extra={"rule": "a non-empty string"})
    """The shared secret of token auth (prefer ``CLAWLINE_GATEWAY_TOKEN``); masked by
    ``config show``."""
    require_device: Bool = Field(False, validation_alias=_legacy("requireDevice", "require_device"))
    """Grant operator scopes only to paired devices."""
    allowed_origins: tuple[Annotated[str, Strict()], ...] = Field(
        (), json_schema_extra={"rule": "a list of origins"}
    )
    """Browser origins allowed besides the gateway's own page (``"http://localhost:5173"``)."""
    allowed_hosts: tuple[Annotated[str, Strict()], ...] = Field(
        (), json_schema_extra={"rule": "a list of host names"}
    )
    """Host names the gateway answers to besides IP literals and ``localhost``."""
    url: Text | None = None
    """The gateway clients (``clawline sessions``, ``clawline acp``) connect to."""
    instance_lease_ms: Int = Field(15_000, ge=200, le=3_600_000)
    """How long a gateway instance counts as alive after its last heartbeat (it beats five
    times per lease). On a PostgreSQL store shared by several gateways, the others take over
    an instance's runs once its lease lapsed (``clawline instances``)."""

    @field_validator("token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise Refusal("must be a non-empty string")
        return value

    _url = field_validator("url")(classmethod(lambda cls, value: _stripped(value)))


# --- [plugins] ---------------------------------------------------------------------------------


_PROCESS_SECRET = secrets.token_bytes(32)
"""The artifact-ref signing secret when none is configured: refs then die with the process."""


@dataclass(frozen=True, slots=True)
class XWorkmateSettings:
    """The multi-session plugin's effective settings (:meth:`XWorkmateConfig.effective`)."""

    workspace_dir: Path | None = None
    max_files: int = 64
    max_inline_bytes: int = 10 * 1024 * 1024
    signing_secret: bytes = field(default=_PROCESS_SECRET, repr=False)
    media_dir: Path = field(default_factory=lambda: Path("~/.openclaw/media").expanduser())
    tmp_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "openclaw")
    snapshot_max_files: int = 64
    allow_hardlinks: bool = False
    """``[tools.fs] allowHardlinks``: hard-linked files may be exported, read and copied."""


class XWorkmateConfig(Section):
    """``[plugins.xworkmate]``: the multi-session plugin. OpenClaw's place for the same keys,
    ``[plugins.entries."openclaw-multi-session-plugins".config]``, is read too; this table wins
    key by key (an error names the key here)."""

    workspace_dir: Text | None = Field(None, json_schema_extra={"rule": "a directory path"})
    """Where artifacts are looked for; default: the workspace of the session's agent."""
    max_files: Int = Field(64, ge=1, json_schema_extra={"rule": "a positive integer"})
    """Artifacts per export."""
    max_inline_bytes: Int = Field(
        10 * 1024 * 1024, ge=0, json_schema_extra={"rule": "an integer >= 0"}
    )
    """Larger files are listed, not inlined."""
    artifact_ref_signing_secret: SecretStr | None = Field(
        None, json_schema_extra={"rule": "a non-empty string"}
    )
    """Signs artifact refs; else ``$XWORKMATE_ARTIFACT_REF_SIGNING_SECRET``, else a random one
    per process. Masked by ``config show``."""
    open_claw_media_dir: Text | None = Field(None, json_schema_extra={"rule": "a directory path"})
    """OpenClaw's media directory (default ``~/.openclaw/media``)."""
    open_claw_tmp_dir: Text | None = Field(None, json_schema_extra={"rule": "a directory path"})
    """OpenClaw's temporary directory (default ``<tmp>/openclaw``)."""
    snapshot_max_files: Int = Field(64, ge=1, json_schema_extra={"rule": "a positive integer"})
    """Files per workspace snapshot."""

    @field_validator("artifact_ref_signing_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value():
            raise Refusal("must be a non-empty string")
        return value

    @field_validator("workspace_dir", "open_claw_media_dir", "open_claw_tmp_dir")
    @classmethod
    def _directory(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "\x00" in value):
            raise Refusal("must be a directory path")
        return None if value is None else value.strip()

    def effective(
        self, *, state_dir: Path, allow_hardlinks: bool, env: Mapping[str, str]
    ) -> XWorkmateSettings:
        """Directories resolved (relative: under ``state_dir``), the secret chosen."""

        def directory(value: str | None) -> Path | None:
            if value is None:
                return None
            path = Path(value).expanduser()
            return path if path.is_absolute() else state_dir / path

        defaults = XWorkmateSettings()
        secret = self.artifact_ref_signing_secret
        from_env = env.get(XWORKMATE_SECRET_ENV, "")
        return XWorkmateSettings(
            workspace_dir=directory(self.workspace_dir),
            max_files=self.max_files,
            max_inline_bytes=self.max_inline_bytes,
            signing_secret=(
                secret.get_secret_value().encode()
                if secret is not None
                else from_env.encode() or _PROCESS_SECRET
            ),
            media_dir=directory(self.open_claw_media_dir) or defaults.media_dir,
            tmp_dir=directory(self.open_claw_tmp_dir) or defaults.tmp_dir,
            snapshot_max_files=self.snapshot_max_files,
            allow_hardlinks=allow_hardlinks,
        )


class PluginEntry(Section):
    """``[plugins.entries.<id>]`` (OpenClaw's layout)."""

    model_config = ConfigDict(extra="allow")
    config: dict[str, Any] = {}
    """The plugin's own settings."""


class PluginsConfig(Section):
    """``[plugins]``: which plugins load. A third-party plugin's own table
    (``[plugins.<name>]``) is handed to it as written."""

    model_config = ConfigDict(extra="allow")

    enabled: Names = ()
    """Plugins to load by name (built-in ``clawline.xworkmate``, or ``module:attribute``)."""
    disabled: Names = ()
    """Plugins never to load, whatever ``enabled`` and the entry points say."""
    entry_points: Bool = Field(True, validation_alias=_legacy("entryPoints", "entry_points"))
    """Load the installed ``clawline`` entry points."""
    hook_timeout_seconds: Number = Field(
        10.0,
        gt=0,
        le=600,
        validation_alias=_legacy("hookTimeoutSeconds", "hook_timeout_seconds"),
    )
    """The longest one plugin hook call may take."""
    entries: dict[str, PluginEntry] = {}
    """``[plugins.entries.<id>.config]``: plugin settings in OpenClaw's layout."""
    xworkmate: XWorkmateConfig = XWorkmateConfig()

    @field_validator("enabled", "disabled")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item.strip() for item in value):
            raise Refusal("must be a list of non-empty strings")
        return tuple(dict.fromkeys(item.strip() for item in value))

    @model_validator(mode="before")
    @classmethod
    def _openclaw_entry(cls, data: Any) -> Any:
        """The multi-session plugin's OpenClaw entry under ``[plugins.xworkmate]``."""
        if not isinstance(data, Mapping):
            return data
        entries = data.get("entries")
        entry = entries.get(XWORKMATE_PLUGIN_ID) if isinstance(entries, Mapping) else None
        config = entry.get("config") if isinstance(entry, Mapping) else None
        own = data.get("xworkmate", {})
        if isinstance(config, Mapping) and isinstance(own, Mapping):
            return {**data, "xworkmate": {**config, **own}}
        return data

    @property
    def configs(self) -> dict[str, Mapping[str, Any]]:
        """Each plugin's own table: ``[plugins.entries.<id>.config]`` and ``[plugins.<id>]``."""
        out: dict[str, Mapping[str, Any]] = {
            name: entry.config for name, entry in self.entries.items()
        }
        for name, value in (self.model_extra or {}).items():
            if isinstance(value, Mapping):
                out[name] = {**out.get(name, {}), **value}
        return out

    @property
    def hook_timeout_s(self) -> float:
        return self.hook_timeout_seconds


# --- the whole file ----------------------------------------------------------------------------


class ClawlineConfig(Section):
    """config.toml, every section clawline reads."""

    store: StoreConfig = StoreConfig()
    sessions: SessionsConfig = SessionsConfig()
    agents: AgentsSection = AgentsSection()
    models: ModelsConfig = ModelsConfig()
    tools: ToolsConfig = ToolsConfig()
    session: SessionConfig = SessionConfig()
    channels: ChannelsConfig = ChannelsConfig()
    bindings: tuple[AgentRoute, ...] = ()
    """``[[bindings]]``: which agent answers a channel conversation (first match wins; none:
    ``sessions.defaultAgent``)."""
    acp: AcpConfig = AcpConfig()
    gateway: GatewayConfig = GatewayConfig()
    plugins: PluginsConfig = PluginsConfig()

    @property
    def thread_bindings(self) -> ThreadBindingsConfig:
        return ThreadBindingsConfig(
            session=self.session.thread_bindings, channels=self.channels.by_name()
        )

    def agent_for(self, channel: str, account_id: str, peer_kind: str, peer_id: str) -> str:
        """The agent answering a conversation: the first ``[[bindings]]`` entry matching it,
        else ``sessions.defaultAgent``."""
        for route in self.bindings:
            if route.match.matches(channel, account_id, peer_kind, peer_id):
                return route.agent_id
        return self.sessions.default_agent


# --- the agents' view --------------------------------------------------------------------------


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
class AgentsConfig:
    """What the agents and the collaboration tools read of the configuration: the agent
    sections, with workspaces resolved under the state directory (:func:`agents_config`)."""

    state_dir: Path
    defaults: AgentDefaults = field(default_factory=AgentDefaults)
    agents: Mapping[str, AgentEntry] = field(default_factory=dict)
    """``[[agents.list]]`` by id, in their order."""
    run_timeout_seconds: int = DEFAULT_RUN_TIMEOUT_MS // 1000
    """``[agents] timeoutSeconds``: an agent's timeout when ``agents.defaults`` sets none."""
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

    def _path(self, raw: str) -> Path:
        expanded = Path(raw).expanduser()
        return (expanded if expanded.is_absolute() else self.state_dir / expanded).resolve()

    def default_workspace(self, agent_id: str) -> Path:
        if self.defaults.workspace is not None:
            return self._path(self.defaults.workspace)
        return self.state_dir / "workspace" / agent_id

    def resolve_agent(self, agent_id: str) -> AgentConfig:
        """The effective config of ``agent_id``; ids without an entry use the defaults."""
        normalized = keys.normalize_agent_id(agent_id)
        entry = self.agents.get(normalized) or AgentEntry(id=normalized)
        defaults = self.defaults
        default_timeout = (
            self.run_timeout_seconds
            if defaults.timeout_seconds is None
            else defaults.timeout_seconds
        )
        return AgentConfig(
            id=normalized,
            model=entry.model or defaults.model,
            workspace=(
                self._path(entry.workspace)
                if entry.workspace
                else self.default_workspace(normalized)
            ),
            timeout_seconds=default_timeout
            if entry.timeout_seconds is None
            else entry.timeout_seconds,
            subagents=(
                entry.subagents.over(defaults.subagents) if entry.subagents else defaults.subagents
            ),
            tools=entry.tools,
            subagent_tools=self.subagent_tools,
        )

    def provider(self, name: str) -> ProviderSettings | None:
        """A configured provider, or the built-in ``openai``/``anthropic`` ones."""
        configured = self.providers.get(name)
        if configured is not None:
            return configured
        if name in ("openai", "anthropic"):
            return ProviderSettings(name=name, api="openai" if name == "openai" else "anthropic")
        return None


def agents_config(
    config: ClawlineConfig, state_dir: Path, *, plugin_providers: Sequence[str] = ()
) -> AgentsConfig:
    """The agents' view of ``config``; a model naming a provider that neither the file nor a
    plugin defines is a :class:`ConfigError` (every such key, one line each)."""
    known: dict[str, object] = {**dict.fromkeys(plugin_providers), **config.models.providers}
    problems: list[str] = []
    models = [("agents.defaults.model", config.agents.defaults.model)] + [
        (f"agents.list[{index}].model", entry.model)
        for index, entry in enumerate(config.agents.list)
    ]
    for key, ref in models:
        if ref is None:
            continue
        try:
            parse_model_ref(ref, known)
        except ValueError as error:
            problems.append(f'config: {key} "{ref}" is invalid: {error}')
    if problems:
        raise ConfigError(*problems)
    return AgentsConfig(
        state_dir=state_dir,
        defaults=config.agents.defaults,
        agents={entry.id: entry for entry in config.agents.list},
        run_timeout_seconds=config.agents.timeout_seconds,
        providers=config.models.providers,
        agent_to_agent=config.tools.agent_to_agent,
        sessions_visibility=config.tools.sessions.visibility,
        subagent_tools=config.tools.subagents.tools,
        max_ping_pong_turns=config.session.agent_to_agent.max_ping_pong_turns,
        thread_bindings=config.thread_bindings,
        acp=config.acp,
        fs=config.tools.fs,
    )
