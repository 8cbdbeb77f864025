"""A runner makes sure of a workspace once; a workspace that is gone is made again, and one
swapped for a symlink is refused, not followed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from clawline.agents.confined import SymlinkRefused
from clawline.agents.workspace import EnsuredWorkspaces


async def test_a_workspace_is_made_once_and_again_when_it_is_gone(tmp_path: Path) -> None:
    workspaces = EnsuredWorkspaces()
    path = tmp_path / "workspace" / "main"
    assert await workspaces.ensure(path) == path
    assert path.is_dir()
    assert (path.stat().st_mode & 0o777) == 0o700
    assert await workspaces.ensure(path) == path
    shutil.rmtree(path)
    assert await workspaces.ensure(path) == path
    assert path.is_dir()


async def test_a_workspace_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    workspaces = EnsuredWorkspaces()
    path = tmp_path / "workspace" / "main"
    await workspaces.ensure(path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(path)
    os.symlink(elsewhere, path)
    with pytest.raises(SymlinkRefused):
        await workspaces.ensure(path)
    with pytest.raises(SymlinkRefused):  # and again: it was not taken as ensured
        await workspaces.ensure(path)
