"""Reading values out of ``config.toml`` sections, shared by the settings parsers: every refusal
is one :class:`~clawline.config.ConfigError` line, ``config: <path> <rule>``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawline.config import ConfigError

__all__ = ["config_error", "table"]


def config_error(path: str, rule: str) -> ConfigError:
    return ConfigError(f"config: {path} {rule}")


def table(value: object, path: str) -> Mapping[str, Any]:
    """A sub-table (a missing one is empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise config_error(path, "must be a table")
    return value
