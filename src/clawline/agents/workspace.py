"""Agent workspaces: where an agent's files live, and keeping paths inside it.

An agent's workspace is ``AgentConfig.workspace`` (default ``<state dir>/workspace/<agentId>``),
created on first use. A subagent session whose entry records ``spawnedWorkspaceDir`` works in
that directory instead, so a requester and its children share files — but only when that
directory lies inside the agent's own workspace once symlinks are resolved: an entry field
(which ``sessions.patch`` can set) must not point file tools anywhere else on disk. Otherwise
the agent's workspace is used and the refusal is logged.

:func:`resolve_in_workspace` is the single gate every file tool goes through: a path must be
relative, free of ``..`` components and NUL characters, and must still lie inside the workspace
once every symlink is resolved (``realpath``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from clawline.errors import InvalidInput

if TYPE_CHECKING:
    from clawline.agents.settings import AgentConfig
    from clawline.sessions.entry import SessionEntry

__all__ = [
    "WorkspaceError",
    "ensure_workspace",
    "inside_workspace",
    "resolve_in_workspace",
    "workspace_for",
]

log = logging.getLogger("clawline.agents")


class WorkspaceError(InvalidInput):
    """A path an agent gave is not a path inside its workspace."""


def inside_workspace(agent: AgentConfig, path: Path) -> bool:
    """Whether absolute ``path`` is the agent's workspace or below it (real paths)."""
    if not path.is_absolute():
        return False
    root = Path(os.path.realpath(agent.workspace))
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)


def workspace_for(agent: AgentConfig, entry: SessionEntry | None) -> Path:
    """The directory a session's agent works in (not created here): the entry's absolute
    ``spawnedWorkspaceDir`` when set and inside the agent's workspace (real paths), else the
    agent's workspace."""
    if entry is not None and entry.spawned_workspace_dir:
        spawned = Path(entry.spawned_workspace_dir).expanduser()
        if inside_workspace(agent, spawned):
            return spawned
        log.warning(
            "session %s: spawnedWorkspaceDir %r is outside the workspace of agent %s (%s);"
            " using the agent workspace",
            entry.key,
            entry.spawned_workspace_dir,
            agent.id,
            agent.workspace,
        )
    return agent.workspace


def ensure_workspace(path: Path) -> Path:
    """Create the workspace when missing (mode 0700) and return its real path."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return Path(os.path.realpath(path))


def resolve_in_workspace(root: Path, raw: object, *, allow_root: bool = False) -> Path:
    """The real path of workspace-relative ``raw``; raises :class:`WorkspaceError`.

    ``root`` must be the workspace's real path (:func:`ensure_workspace`). ``allow_root``
    accepts an empty path or ``.`` as the workspace itself (for listings).
    """
    if not isinstance(raw, str):
        raise WorkspaceError("path must be a string")
    if "\x00" in raw:
        raise WorkspaceError("path must not contain NUL characters")
    text = raw.strip()
    if not text or text == ".":
        if allow_root:
            return root
        raise WorkspaceError("path must name a file inside the workspace")
    pure = PurePosixPath(text)
    drive = len(text) > 1 and text[0].isalpha() and text[1] == ":" and text[2:3] in ("", "\\", "/")
    if pure.is_absolute() or text.startswith("\\") or drive:
        raise WorkspaceError(f"path must be relative to the workspace: {raw}")
    if ".." in pure.parts or ".." in text.split("\\"):
        raise WorkspaceError(f"path must not contain '..': {raw}")
    real = Path(os.path.realpath(root / pure))
    if real != root and not real.is_relative_to(root):
        raise WorkspaceError(f"path resolves outside the workspace: {raw}")
    if real == root and not allow_root:
        raise WorkspaceError("path must name a file inside the workspace")
    return real
