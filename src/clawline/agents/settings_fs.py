"""The ``[tools.fs]`` section: how workspace file access treats hard links.

::

    [tools.fs]
    allowHardlinks = false   # true: files with more than one hard link may be read and written

Every workspace file access honours it: the file tools, the XWorkmate plugin's artifact scans,
reads and snapshots. Off by default: a hard link planted in a workspace can name any file of
the same file system, and reading it would hand that file's content out. A value of the wrong
type is a :class:`~clawline.config.ConfigError` naming the key, like the other agent sections.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawline.agents.settings_values import config_error as _fail
from clawline.agents.settings_values import table as _table

__all__ = ["FsToolsConfig", "parse_fs_tools"]


@dataclass(frozen=True, slots=True)
class FsToolsConfig:
    allow_hardlinks: bool = False
    """``allowHardlinks``: files whose link count is above 1 are not refused."""


def parse_fs_tools(raw: Mapping[str, Any]) -> FsToolsConfig:
    """``[tools.fs]`` of a whole config.toml mapping; raises ``ConfigError``."""
    tools = _table(raw.get("tools"), "tools")
    section = _table(tools.get("fs"), "tools.fs")
    allow = section.get("allowHardlinks", False)
    if not isinstance(allow, bool):
        raise _fail("tools.fs.allowHardlinks", "must be true or false")
    return FsToolsConfig(allow_hardlinks=allow)
