"""Safe file-system steps: every path the plugin touches stays where it was meant to be.

All of them go through :class:`clawline.agents.confined.ConfinedDir` (policy ``refuse``): a
directory is walked one component at a time from descriptors already held and any symlink on
the way is refused, so neither a scan, a read nor a ``mkdir`` can be redirected out of the
workspace by a link an agent planted — not even one swapped in while the walk runs.

- :func:`dir_status` tells whether a workspace-relative directory is a real directory;
- :func:`make_directory` creates one (mode 0700), refusing a symlinked component.
"""

from __future__ import annotations

from pathlib import Path

from clawline.agents.confined import ConfinedDir, DirStatus, SymlinkRefused
from clawline.xworkmate.open_params import XWorkmateError

SCOPE_ESCAPE_ERROR = "artifactScope must stay inside the workspace"


def is_within(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)


def dir_status(root: ConfinedDir, relative: str) -> DirStatus:
    """Whether ``root/relative`` is a real directory, reached without any symlink."""
    return root.status(relative.strip("/"))


def make_directory(root: ConfinedDir, relative: str) -> Path:
    """Create ``root/relative`` (mode 0700) one component at a time, refusing any existing
    component that is a symlink or not a directory; its absolute path."""
    try:
        with root.opendir(relative.strip("/"), create=True, mode=0o700) as made:
            return made.path
    except (SymlinkRefused, NotADirectoryError, FileExistsError):
        raise XWorkmateError(SCOPE_ESCAPE_ERROR) from None
