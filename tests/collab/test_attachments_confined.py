"""Spawn attachments are written into the child's workspace without following any symlink."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from clawline.collab.attachments import (
    prepare_attachments,
    remove_attachments,
    write_attachments,
)
from clawline.collab.spawn_args import RawAttachment
from clawline.config import AttachmentLimits

PREPARED = prepare_attachments(
    [RawAttachment(name="notes.txt", content="hello", encoding="utf8")],
    AttachmentLimits(enabled=True),
)


def test_files_are_written_new_and_private(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_attachments(workspace, ".attachments/child", PREPARED)
    target = workspace / ".attachments" / "child"
    assert (target / "notes.txt").read_text() == "hello"
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert stat.S_IMODE((target / "notes.txt").stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        write_attachments(workspace, ".attachments/child", PREPARED)
    remove_attachments(workspace, ".attachments/child")
    assert not target.exists()


def test_a_symlinked_attachments_dir_is_refused_and_nothing_lands_outside(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "child").mkdir()
    (outside / "child" / "keep.txt").write_text("keep")
    os.symlink(outside, workspace / ".attachments")
    with pytest.raises(OSError) as caught:
        write_attachments(workspace, ".attachments/new", PREPARED)
    assert caught.value.errno == errno.ELOOP
    assert caught.value.strerror == "path must not pass through a symlink: .attachments/new"
    remove_attachments(workspace, ".attachments/child")  # must not reach outside/child
    assert sorted(p.name for p in outside.iterdir()) == ["child"]
    assert (outside / "child" / "keep.txt").read_text() == "keep"


def test_a_workspace_reached_through_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "ws")
    with pytest.raises(OSError) as caught:
        write_attachments(tmp_path / "ws", ".attachments/child", PREPARED)
    assert caught.value.errno == errno.ELOOP
    assert list((tmp_path / "elsewhere").iterdir()) == []
