"""Agent workspaces: where an agent's files live, and opening them without a race.

An agent's workspace is ``AgentConfig.workspace`` (default ``<state dir>/workspace/<agentId>``),
created on first use. A subagent session whose entry records ``spawnedWorkspaceDir`` works in
that directory instead, so a requester and its children share files — but only when that
directory lies inside the agent's own workspace once symlinks are resolved: an entry field
(which ``sessions.patch`` can set) must not point file tools anywhere else on disk. Otherwise
the agent's workspace is used and the refusal is logged.

The path is resolved once, where it is checked (:func:`workspace_for` returns the real path),
and from then on only ever opened without following a symlink
(:meth:`clawline.agents.confined.ConfinedDir.open`): a directory inside the workspace that is
swapped for a symlink after the check is refused, not followed. Every access below the
workspace goes through :class:`~clawline.agents.confined.ConfinedDir`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from clawline.agents.confined import ConfinedDir

if TYPE_CHECKING:
    from clawline.config import AgentConfig
    from clawline.records.session import SessionEntry

log = logging.getLogger("clawline.agents")


def inside_workspace(agent: AgentConfig, path: Path) -> bool:
    """Whether absolute ``path`` is the agent's workspace or below it (real paths)."""
    if not path.is_absolute():
        return False
    root = Path(os.path.realpath(agent.workspace))
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)


def workspace_for(agent: AgentConfig, entry: SessionEntry | None) -> Path:
    """The real path of the directory a session's agent works in (not created here): the
    entry's absolute ``spawnedWorkspaceDir`` when set and inside the agent's workspace, else
    the agent's workspace. The path returned is the one that was checked."""
    if entry is not None and entry.spawned_workspace_dir:
        recorded = Path(entry.spawned_workspace_dir).expanduser()
        if recorded.is_absolute():
            spawned = Path(os.path.realpath(recorded))
            root = Path(os.path.realpath(agent.workspace))
            if spawned == root or spawned.is_relative_to(root):
                return spawned
        log.warning(
            "session %s: spawnedWorkspaceDir %r is outside the workspace of agent %s (%s);"
            " using the agent workspace",
            entry.key,
            entry.spawned_workspace_dir,
            agent.id,
            agent.workspace,
        )
    return Path(os.path.realpath(agent.workspace))


def ensure_workspace(path: Path) -> Path:
    """Create the workspace at the real path ``path`` when missing (mode 0700) and return
    it. Nothing on the way is followed: a symlink there (a directory swapped since the path
    was resolved) is refused with :class:`~clawline.agents.confined.SymlinkRefused`."""
    ConfinedDir.open(path, create=True, mode=0o700).close()
    return path


class EnsuredWorkspaces:
    """The workspaces a runner has made sure of, so that a turn in one of them costs one
    ``lstat`` of it, not a walk from ``/`` on a worker thread (most of a short turn's own
    work). The walk only ever guarded the directory's creation: every file access below it
    walks again (:class:`~clawline.agents.confined.ConfinedDir`), and a workspace that is gone
    or was swapped for a symlink is walked again here, so created, or refused."""

    def __init__(self) -> None:
        self._ensured: set[Path] = set()

    async def ensure(self, path: Path) -> Path:
        """:func:`ensure_workspace` unless ``path`` was ensured before and is a directory."""
        if path in self._ensured:
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    return path
            except OSError:
                pass
            self._ensured.discard(path)
        await asyncio.to_thread(ensure_workspace, path)
        self._ensured.add(path)
        return path
