"""The plugin's configuration: ``[plugins.xworkmate]`` in config.toml (OpenClaw's names).

```toml
[plugins]
enabled = ["clawline.xworkmate"]

[plugins.xworkmate]
workspaceDir = "~/xworkmate"          # default: the workspace of the session's agent
maxFiles = 64                         # artifacts per export
maxInlineBytes = 10485760             # larger files are listed, not inlined
artifactRefSigningSecret = "…"        # else $XWORKMATE_ARTIFACT_REF_SIGNING_SECRET, else random
openClawMediaDir = "~/.openclaw/media"
openClawTmpDir = "/tmp/openclaw"
snapshotMaxFiles = 64
```

OpenClaw's place for the same keys, ``[plugins.entries."openclaw-multi-session-plugins".config]``,
is read too; ``[plugins.xworkmate]`` wins key by key. Relative directories are taken under the
state directory. A value of the wrong type is a
:class:`~clawline.config.ConfigError` naming the key. Hard links follow the gateway-wide
``[tools.fs] allowHardlinks`` (:mod:`clawline.agents.settings_fs`, as the plugin host tells it).
The plugin parses all this once, in its ``startup`` hook.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawline.config import ConfigError
from clawline.xworkmate.constants import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_INLINE_BYTES,
    DEFAULT_SNAPSHOT_MAX_FILES,
    PLUGIN_ID,
    SIGNING_SECRET_ENV,
)

__all__ = ["SECTION", "XWorkmateSettings", "plugin_settings"]

SECTION = "xworkmate"
_PROCESS_SECRET = secrets.token_bytes(32)
"""Used when no secret is configured: artifact refs then die with the process."""


@dataclass(frozen=True, slots=True)
class XWorkmateSettings:
    workspace_dir: Path | None = None
    max_files: int = DEFAULT_MAX_FILES
    max_inline_bytes: int = DEFAULT_MAX_INLINE_BYTES
    signing_secret: bytes = field(default=_PROCESS_SECRET, repr=False)
    media_dir: Path = field(default_factory=lambda: Path("~/.openclaw/media").expanduser())
    tmp_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "openclaw")
    snapshot_max_files: int = DEFAULT_SNAPSHOT_MAX_FILES
    allow_hardlinks: bool = False
    """``[tools.fs] allowHardlinks``: hard-linked files may be exported, read and copied."""


def _section(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """``[plugins.xworkmate]`` over OpenClaw's ``[plugins.entries.<plugin id>.config]``."""
    plugins = raw.get("plugins", {})
    if not isinstance(plugins, Mapping):
        raise ConfigError("config: [plugins] must be a table")
    section = plugins.get(SECTION, {})
    if not isinstance(section, Mapping):
        raise ConfigError(f"config: [plugins.{SECTION}] must be a table")
    entries = plugins.get("entries", {})
    entry = entries.get(PLUGIN_ID, {}) if isinstance(entries, Mapping) else {}
    config = entry.get("config", {}) if isinstance(entry, Mapping) else {}
    return {**config, **section} if isinstance(config, Mapping) else section


def _integer(section: Mapping[str, Any], name: str, default: int, *, minimum: int) -> int:
    value = section.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive integer" if minimum > 0 else "an integer >= 0"
        raise ConfigError(f"config: plugins.{SECTION}.{name} must be {kind}")
    return value


def _directory(section: Mapping[str, Any], name: str, state_dir: Path) -> Path | None:
    value = section.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ConfigError(f"config: plugins.{SECTION}.{name} must be a directory path")
    path = Path(value.strip()).expanduser()
    return path if path.is_absolute() else state_dir / path


def _secret(section: Mapping[str, Any], env: Mapping[str, str]) -> bytes:
    value = section.get("artifactRefSigningSecret")
    if value is not None:
        if not isinstance(value, str) or not value:
            raise ConfigError(
                f"config: plugins.{SECTION}.artifactRefSigningSecret must be a non-empty string"
            )
        return value.encode()
    from_env = env.get(SIGNING_SECRET_ENV, "")
    return from_env.encode() if from_env else _PROCESS_SECRET


def plugin_settings(
    raw: Mapping[str, Any],
    *,
    state_dir: Path,
    allow_hardlinks: bool,
    env: Mapping[str, str] | None = None,
) -> XWorkmateSettings:
    """The ``[plugins.xworkmate]`` section of the parsed config.toml ``raw``, checked;
    relative directories are taken under ``state_dir``."""
    section = _section(raw)
    defaults = XWorkmateSettings()
    return XWorkmateSettings(
        workspace_dir=_directory(section, "workspaceDir", state_dir),
        max_files=_integer(section, "maxFiles", DEFAULT_MAX_FILES, minimum=1),
        max_inline_bytes=_integer(section, "maxInlineBytes", DEFAULT_MAX_INLINE_BYTES, minimum=0),
        signing_secret=_secret(section, os.environ if env is None else env),
        media_dir=_directory(section, "openClawMediaDir", state_dir) or defaults.media_dir,
        tmp_dir=_directory(section, "openClawTmpDir", state_dir) or defaults.tmp_dir,
        snapshot_max_files=_integer(
            section, "snapshotMaxFiles", DEFAULT_SNAPSHOT_MAX_FILES, minimum=1
        ),
        allow_hardlinks=allow_hardlinks,
    )
