"""Run settings: the ``[agents]`` section of config.toml.

::

    [agents]
    echo_delay_ms = 5        # pause before each word the built-in echo runner streams
    timeout_seconds = 172800 # default run timeout (48 h); 0 means "no timeout" (2 147 000 000 ms)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawline.config import ConfigError, Settings

__all__ = [
    "DEFAULT_ECHO_DELAY_MS",
    "DEFAULT_RUN_TIMEOUT_MS",
    "MAX_RUN_TIMEOUT_MS",
    "AgentSettings",
    "effective_timeout_ms",
]

DEFAULT_ECHO_DELAY_MS = 5
DEFAULT_RUN_TIMEOUT_MS = 48 * 60 * 60 * 1000
"""OpenClaw's ``agents.defaults.timeoutSeconds`` default (48 h)."""
MAX_RUN_TIMEOUT_MS = 2_147_000_000
"""What a timeout of 0 ("none") means, as in OpenClaw."""


def effective_timeout_ms(requested: int | None, default_ms: int) -> int:
    """``None`` → the configured default; ``0`` → :data:`MAX_RUN_TIMEOUT_MS`; capped there."""
    if requested is None:
        requested = default_ms
    if requested == 0:
        return MAX_RUN_TIMEOUT_MS
    return min(requested, MAX_RUN_TIMEOUT_MS)


def _non_negative_int(section: Mapping[str, Any], name: str, default: int) -> int:
    value = section.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"config: agents.{name} must be an integer >= 0")
    return value


@dataclass(frozen=True, slots=True)
class AgentSettings:
    echo_delay_ms: int = DEFAULT_ECHO_DELAY_MS
    run_timeout_ms: int = DEFAULT_RUN_TIMEOUT_MS

    @classmethod
    def from_settings(cls, settings: Settings) -> AgentSettings:
        section = settings.raw.get("agents", {})
        if not isinstance(section, Mapping):
            raise ConfigError("config: [agents] must be a table")
        timeout_s = _non_negative_int(section, "timeout_seconds", DEFAULT_RUN_TIMEOUT_MS // 1000)
        return cls(
            echo_delay_ms=_non_negative_int(section, "echo_delay_ms", DEFAULT_ECHO_DELAY_MS),
            run_timeout_ms=effective_timeout_ms(timeout_s * 1000, DEFAULT_RUN_TIMEOUT_MS),
        )
