"""Safe file-system steps: every path the plugin touches stays where it was meant to be.

- :func:`dir_status` / :func:`make_directory` walk a workspace-relative directory one
  component at a time and refuse any component that is a symlink, so neither a scan nor a
  ``mkdir`` can be redirected out of the workspace by a link an agent planted;
- :func:`open_regular` opens a file with ``O_NOFOLLOW`` and only when it is a regular file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal

from clawline.plugins.xworkmate.envelope import XWorkmateError

__all__ = [
    "SCOPE_ESCAPE_ERROR",
    "DirStatus",
    "dir_status",
    "is_within",
    "make_directory",
    "open_regular",
]

DirStatus = Literal["dir", "missing", "symlink", "not-dir"]
SCOPE_ESCAPE_ERROR = "artifactScope must stay inside the workspace"


def is_within(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)


def dir_status(root: Path, relative: str) -> DirStatus:
    """Whether ``root/relative`` is a real directory, reached without any symlink."""
    current = root
    for part in relative.strip("/").split("/"):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return "missing"
        if stat.S_ISLNK(mode):
            return "symlink"
        if not stat.S_ISDIR(mode):
            return "not-dir"
    return "dir"


def make_directory(root: Path, relative: str) -> Path:
    """Create ``root/relative`` (mode 0700) one component at a time, refusing any existing
    component that is a symlink or not a directory."""
    current = root
    for part in relative.strip("/").split("/"):
        current = current / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(current, 0o700)
        if not stat.S_ISDIR(os.lstat(current).st_mode):
            raise XWorkmateError(SCOPE_ESCAPE_ERROR)
    return current


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for reading when it is a regular file, never through a symlink at its
    last component; ``None`` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return os.fdopen(fd, "rb")
    except OSError:
        pass
    os.close(fd)
    return None
