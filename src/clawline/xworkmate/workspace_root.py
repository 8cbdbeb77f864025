"""Which directory a session's artifacts live under: the workspace root.

The root is ``[plugins.xworkmate] workspaceDir`` when configured, else the workspace of the
session's agent (``host.workspace(agentId)``) — the directory the agent's file tools write
into. A caller may name a ``workspaceDir`` of its own (the upstream
plugin takes it from the request), but only one that lies inside that root once symlinks are
resolved: a gateway client must not be able to point export or read at any other directory of
the machine. The root is resolved once, when it is checked, and then opened without following
any symlink (:func:`open_root`), so a directory swapped for a symlink after the check is
refused rather than followed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.confined import ConfinedDir, SymlinkRefused
from clawline.config import XWorkmateSettings
from clawline.errors import ClawlineError
from clawline.xworkmate.open_params import XWorkmateError, optional_string
from clawline.xworkmate.paths import is_within

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

NOT_ABSOLUTE = "workspaceDir must be an absolute path"
OUTSIDE = "workspaceDir must stay inside the configured workspace"


def _agent_id(host: PluginHost, session_key: str) -> str:
    try:
        canonical = host.canonical(session_key)
    except ClawlineError:
        return host.default_agent_id
    return keys.agent_id_of(canonical, host.default_agent_id)


def configured_root(session_key: str, *, host: PluginHost, config: XWorkmateSettings) -> Path:
    """The configured ``workspaceDir``, else the session's agent workspace (may not exist)."""
    if config.workspace_dir is not None:
        return config.workspace_dir
    return host.workspace(_agent_id(host, session_key))


def resolve_root(
    session_key: str, requested: object, *, host: PluginHost, config: XWorkmateSettings
) -> Path:
    """The real path of the workspace root for ``session_key``: ``requested`` (a caller's
    ``workspaceDir``) when it lies inside the configured root, else the configured root.

    Refusals: ``workspaceDir must be an absolute path``,
    ``workspaceDir must stay inside the configured workspace``."""
    base = Path(os.path.realpath(configured_root(session_key, host=host, config=config)))
    text = optional_string(requested)
    if not text:
        return base
    if "\x00" in text:
        raise XWorkmateError(OUTSIDE)
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise XWorkmateError(NOT_ABSOLUTE)
    real = Path(os.path.realpath(path))
    if not is_within(base, real):
        raise XWorkmateError(OUTSIDE)
    return real


def open_root(root: Path, *, create: bool = False, allow_hardlinks: bool = False) -> ConfinedDir:
    """The real workspace root ``root`` (:func:`resolve_root`) held open, reached without
    following a symlink; created (mode 0700) when ``create``, else ``FileNotFoundError`` when
    missing. A symlink on the way — a directory swapped since the check — is
    ``workspaceDir must stay inside the configured workspace``."""
    try:
        return ConfinedDir.open(root, create=create, allow_hardlinks=allow_hardlinks)
    except SymlinkRefused:
        raise XWorkmateError(OUTSIDE) from None
