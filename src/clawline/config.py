"""Settings: ``<state dir>/config.toml`` overlaid with environment variables.

The state directory is ``$CLAWLINE_STATE_DIR``, else ``~/.clawline``. Environment variables win
over the file::

    CLAWLINE_STATE_DIR     where the SQLite store and config.toml live
    CLAWLINE_STORE_URL     sqlite:///path.db | postgresql://host/db[?schema=name]

config.toml::

    [store]
    url = "postgresql://127.0.0.1/clawline"
    poolSize = 4                # PostgreSQL: connections (and store workers), 1..64
    statementTimeoutMs = 30000  # PostgreSQL: longest statement; 0 = no limit
    lockTimeoutMs = 10000       # PostgreSQL: longest wait for a lock; 0 = no limit

    [sessions]
    default_agent = "main"
    main_key = "main"
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawline import keys
from clawline.errors import InvalidInput

__all__ = ["ConfigError", "PoolSettings", "Settings", "load_settings", "state_dir_from"]

_MAIN_KEY = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


class ConfigError(InvalidInput):
    """The configuration file or an environment variable is invalid."""


PG_MAX_TIMEOUT_MS = 2_147_483_647
"""PostgreSQL's largest ``statement_timeout`` / ``lock_timeout``."""
_POOL_KEYS: dict[str, tuple[str, int, int]] = {
    "poolSize": ("size", 1, 64),
    "statementTimeoutMs": ("statement_timeout_ms", 0, PG_MAX_TIMEOUT_MS),
    "lockTimeoutMs": ("lock_timeout_ms", 0, PG_MAX_TIMEOUT_MS),
}
"""``[store]`` key: (field of :class:`PoolSettings`, least value, greatest value)."""


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """The PostgreSQL store's connection pool and the limits every pooled connection sets
    (``[store]`` keys ``poolSize``, ``statementTimeoutMs``, ``lockTimeoutMs``; SQLite has no
    use for them). A timeout of 0 means none."""

    size: int = 4
    statement_timeout_ms: int = 30_000
    lock_timeout_ms: int = 10_000

    def __post_init__(self) -> None:
        for key, (name, low, high) in _POOL_KEYS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"config: store.{key} must be an integer from {low} to {high}")


def state_dir_from(env: Mapping[str, str]) -> Path:
    raw = env.get("CLAWLINE_STATE_DIR", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".clawline"


@dataclass(frozen=True, slots=True)
class Settings:
    state_dir: Path
    store_url: str | None = None
    default_agent_id: str = keys.DEFAULT_AGENT_ID
    main_key: str = keys.DEFAULT_MAIN_KEY
    store_pool: PoolSettings = field(default_factory=PoolSettings)
    """The PostgreSQL connection pool (``[store]`` keys)."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The whole parsed config file, for sections other modules own."""

    @property
    def config_path(self) -> Path:
        return self.state_dir / "config.toml"

    @property
    def sqlite_path(self) -> Path:
        return self.state_dir / "clawline.db"


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"config: [{name}] must be a table")
    return value


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    state_dir = state_dir_from(env)
    path = state_dir / "config.toml"
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ConfigError(f"config: {path} is not valid TOML: {error}") from None
    store = _section(data, "store")
    sessions = _section(data, "sessions")
    url = env.get("CLAWLINE_STORE_URL", "").strip() or store.get("url")
    if url is not None and not isinstance(url, str):
        raise ConfigError("config: store.url must be a string")
    pool = PoolSettings(
        **{name: store[key] for key, (name, _, _) in _POOL_KEYS.items() if key in store}
    )
    agent = sessions.get("default_agent", keys.DEFAULT_AGENT_ID)
    main_key = sessions.get("main_key", keys.DEFAULT_MAIN_KEY)
    if not isinstance(agent, str) or not keys.is_valid_agent_id(agent):
        raise ConfigError("config: sessions.default_agent must be a valid agent id")
    if not isinstance(main_key, str) or not _MAIN_KEY.fullmatch(main_key.lower()):
        raise ConfigError("config: sessions.main_key must be 1-64 letters, digits, '.', '_' or '-'")
    return Settings(
        state_dir=state_dir,
        store_url=url or None,
        default_agent_id=agent.lower(),
        main_key=main_key.lower(),
        store_pool=pool,
        raw=data,
    )
