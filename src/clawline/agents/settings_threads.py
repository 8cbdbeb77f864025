"""Thread binding configuration: ``[session.threadBindings]``, ``[channels.<ch>.threadBindings]``
and ``[channels.<ch>.accounts.<acct>.threadBindings]`` (OpenClaw's keys).

::

    [session.threadBindings]           # global defaults
    enabled = true
    idleHours = 24                     # 0 = no idle limit
    maxAgeHours = 0                    # 0 = no age limit

    [channels.webchat]
    defaultAccount = "default"         # the account of a context that names none

    [channels.webchat.threadBindings]  # this channel, every account
    spawnSubagentSessions = true
    spawnAcpSessions = true

    [channels.webchat.accounts.work.threadBindings]   # one account of the channel
    enabled = false

Every key is resolved separately, the most specific level first: account → channel → session →
built-in default. ``spawnSubagentSessions`` and ``spawnAcpSessions`` default to true unless the
channel's default top-level placement is ``child``: a channel that opens a new thread for every
spawn needs an explicit opt-in (at any level).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clawline.agents.settings_values import config_error as _fail
from clawline.agents.settings_values import table as _table

__all__ = [
    "DEFAULT_ACCOUNT_ID",
    "DEFAULT_IDLE_HOURS",
    "DEFAULT_MAX_AGE_HOURS",
    "ThreadBindingLevel",
    "ThreadBindingSettings",
    "ThreadBindingsConfig",
    "parse_thread_bindings",
]

DEFAULT_IDLE_HOURS = 24.0
DEFAULT_MAX_AGE_HOURS = 0.0
DEFAULT_ACCOUNT_ID = "default"
_HOUR_MS = 60 * 60 * 1000


@dataclass(frozen=True, slots=True)
class ThreadBindingLevel:
    """One ``threadBindings`` table as written; ``None`` = not set at this level."""

    enabled: bool | None = None
    idle_hours: float | None = None
    max_age_hours: float | None = None
    spawn_subagent_sessions: bool | None = None
    spawn_acp_sessions: bool | None = None


@dataclass(frozen=True, slots=True)
class ThreadBindingSettings:
    """The effective thread binding settings of one channel account."""

    channel: str
    account_id: str
    enabled: bool = True
    idle_hours: float = DEFAULT_IDLE_HOURS
    max_age_hours: float = DEFAULT_MAX_AGE_HOURS
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


@dataclass(frozen=True, slots=True)
class _ChannelSection:
    level: ThreadBindingLevel = field(default_factory=ThreadBindingLevel)
    accounts: Mapping[str, ThreadBindingLevel] = field(default_factory=dict)
    default_account: str | None = None


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


@dataclass(frozen=True, slots=True)
class ThreadBindingsConfig:
    """All thread binding tables of a config; :meth:`resolve` applies the precedence."""

    session: ThreadBindingLevel = field(default_factory=ThreadBindingLevel)
    channels: Mapping[str, _ChannelSection] = field(default_factory=dict)

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
        section = self.channels.get(name) or _ChannelSection()
        levels = (section.accounts.get(account) or ThreadBindingLevel(), section.level)
        spawn_default = default_placement != "child"
        return ThreadBindingSettings(
            channel=name,
            account_id=account,
            enabled=_first(*(level.enabled for level in levels), self.session.enabled, True),
            idle_hours=_first(
                *(level.idle_hours for level in levels), self.session.idle_hours, DEFAULT_IDLE_HOURS
            ),
            max_age_hours=_first(
                *(level.max_age_hours for level in levels),
                self.session.max_age_hours,
                DEFAULT_MAX_AGE_HOURS,
            ),
            spawn_subagent_sessions=_first(
                *(level.spawn_subagent_sessions for level in levels),
                self.session.spawn_subagent_sessions,
                spawn_default,
            ),
            spawn_acp_sessions=_first(
                *(level.spawn_acp_sessions for level in levels),
                self.session.spawn_acp_sessions,
                spawn_default,
            ),
        )


# --- parsing ---------------------------------------------------------------------------------


def _flag(section: Mapping[str, Any], name: str, path: str) -> bool | None:
    value = section.get(name)
    if value is not None and not isinstance(value, bool):
        raise _fail(f"{path}.{name}", "must be true or false")
    return value


def _hours(section: Mapping[str, Any], name: str, path: str) -> float | None:
    value = section.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
        raise _fail(f"{path}.{name}", "must be a number of hours >= 0")
    return float(value)


def _level(value: object, path: str) -> ThreadBindingLevel:
    section = _table(value, path)
    return ThreadBindingLevel(
        enabled=_flag(section, "enabled", path),
        idle_hours=_hours(section, "idleHours", path),
        max_age_hours=_hours(section, "maxAgeHours", path),
        spawn_subagent_sessions=_flag(section, "spawnSubagentSessions", path),
        spawn_acp_sessions=_flag(section, "spawnAcpSessions", path),
    )


def _channel(value: object, path: str) -> _ChannelSection:
    section = _table(value, path)
    accounts = _table(section.get("accounts"), f"{path}.accounts")
    default_account = section.get("defaultAccount")
    if default_account is not None and (
        not isinstance(default_account, str) or not default_account.strip()
    ):
        raise _fail(f"{path}.defaultAccount", "must be a non-empty string")
    return _ChannelSection(
        level=_level(section.get("threadBindings"), f"{path}.threadBindings"),
        accounts={
            str(account).strip(): _level(
                _table(table, f"{path}.accounts.{account}").get("threadBindings"),
                f"{path}.accounts.{account}.threadBindings",
            )
            for account, table in accounts.items()
        },
        default_account=None if default_account is None else default_account.strip(),
    )


def parse_thread_bindings(raw: Mapping[str, Any]) -> ThreadBindingsConfig:
    """The thread binding tables of a whole config.toml mapping; raises ``ConfigError``."""
    session = _table(raw.get("session"), "session")
    channels = _table(raw.get("channels"), "channels")
    return ThreadBindingsConfig(
        session=_level(session.get("threadBindings"), "session.threadBindings"),
        channels={
            str(name).strip().lower(): _channel(value, f"channels.{name}")
            for name, value in channels.items()
        },
    )
