"""Reading the configuration: ``<state dir>/config.toml`` overlaid with environment variables.

The state directory is ``$CLAWLINE_STATE_DIR``, else ``~/.clawline``. Environment variables win
over the file::

    CLAWLINE_STATE_DIR     where the SQLite store and config.toml live
    CLAWLINE_STORE_URL     sqlite:///path.db | postgresql://host/db[?schema=name]

The file is parsed once, into :attr:`Settings.config` (:class:`~clawline.config.ClawlineConfig`),
when the :class:`Settings` are made; the composition root hands each part its section. Every
problem of the file is one line of the :class:`~clawline.config.ConfigError`
(:mod:`clawline.config.problems`); docs/config.md lists every key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawline.config.problems import ConfigError, problems_of
from clawline.config.schema import AgentsConfig, ClawlineConfig, PoolSettings, agents_config


def state_dir_from(env: Mapping[str, str]) -> Path:
    raw = env.get("CLAWLINE_STATE_DIR", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".clawline"


def parse_config(raw: Mapping[str, Any]) -> ClawlineConfig:
    """A parsed config.toml mapping, checked; every problem is a line of the
    :class:`ConfigError`."""
    try:
        return ClawlineConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(*problems_of(error, ClawlineConfig)) from None


def parse_agents_config(
    raw: Mapping[str, Any], state_dir: Path, plugin_providers: Sequence[str] = ()
) -> AgentsConfig:
    """The agents' view (:func:`~clawline.config.agents_config`) of a config.toml mapping."""
    return agents_config(parse_config(raw), state_dir, plugin_providers=plugin_providers)


def read_config_file(path: Path) -> dict[str, Any]:
    """The TOML mapping of ``path`` (empty when there is no file)."""
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"config: {path} is not valid TOML: {error}") from None


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the state lives and what config.toml says (``raw``, parsed into ``config`` when
    the settings are made)."""

    state_dir: Path
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The config.toml mapping as read."""
    store_url: str | None = None
    """The store: given (``CLAWLINE_STORE_URL``), else ``[store] url``, else ``None`` (the
    SQLite file of the state directory)."""
    config: ClawlineConfig = field(init=False, repr=False)

    def __post_init__(self) -> None:
        config = parse_config(self.raw)
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "store_url", self.store_url or config.store.url)

    @property
    def store_pool(self) -> PoolSettings:
        """The PostgreSQL connection pool (``[store]`` keys)."""
        store = self.config.store
        return PoolSettings(
            size=store.size,
            statement_timeout_ms=store.statement_timeout_ms,
            lock_timeout_ms=store.lock_timeout_ms,
        )

    @property
    def default_agent_id(self) -> str:
        return self.config.sessions.default_agent

    @property
    def main_key(self) -> str:
        return self.config.sessions.main_key

    @property
    def config_path(self) -> Path:
        return self.state_dir / "config.toml"

    @property
    def sqlite_path(self) -> Path:
        return self.state_dir / "clawline.db"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    state_dir = state_dir_from(env)
    raw = read_config_file(state_dir / "config.toml")
    url = env.get("CLAWLINE_STORE_URL", "").strip() or None
    return Settings(state_dir=state_dir, raw=raw, store_url=url)
