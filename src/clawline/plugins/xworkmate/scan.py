"""Finding a task run's artifact files on disk (§7.2).

Two scans, both confined to real directories (no symlinked component anywhere):

1. the **task scope** ``tasks/<session>/<run>``, recursively; paths relative to the scope;
2. only when scan 1 found nothing: each **expected directory** (``reports/``,
   ``assets/images/``, …) under the workspace root; paths relative to the workspace root.
   A directory below another expected directory is covered by that one's scan; the
   ``tasks/`` tree is never an expected directory, so earlier task scopes are never adopted.

Every scan skips symlinks (``skipped symlink <path>``), the tool directories of
:data:`SKIPPED_DIRS`, files changed before the time window, files whose real path leaves the
scanned directory (``skipped path outside workspace <path>``) and what ``artifact-ignore.md``
excludes.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from clawline.plugins.xworkmate.constants import (
    IGNORE_FILE_NAME,
    MAX_SCAN_ENTRIES,
    SKIPPED_DIRS,
    TASK_SCOPE_ROOT,
)
from clawline.plugins.xworkmate.ignore import load_ignore_rules
from clawline.plugins.xworkmate.paths import dir_status, is_within

__all__ = [
    "Candidate",
    "ScanBudget",
    "exported_from_expected_dir",
    "scan_expected_dirs",
    "scan_tree",
    "top_level_dirs",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    path: Path
    """Absolute path of the file (no symlinked component)."""
    relative_path: str
    """What the artifact reports: relative to the task scope, or to the workspace root."""
    size: int
    changed_ms: int
    """``max(mtime, ctime)`` in milliseconds."""


class ScanBudget:
    """How many directory entries one export may still look at."""

    def __init__(self, limit: int = MAX_SCAN_ENTRIES) -> None:
        self.left = limit
        self.limit = limit
        self.exhausted = False

    def take(self, warnings: list[str]) -> bool:
        if self.left <= 0:
            if not self.exhausted:
                self.exhausted = True
                warnings.append(f"artifact scan stopped after {self.limit} entries")
            return False
        self.left -= 1
        return True


def _changed_ms(info: os.stat_result) -> int:
    return max(info.st_mtime_ns, info.st_ctime_ns) // 1_000_000


def scan_tree(
    scan_root: Path,
    *,
    prefix: str,
    since_ms: float,
    warnings: list[str],
    budget: ScanBudget,
) -> list[Candidate]:
    """Files below the real directory ``scan_root``, reported as ``prefix + <relative>``."""
    rules = load_ignore_rules(scan_root, warnings)
    real_root = Path(os.path.realpath(scan_root))
    found: list[Candidate] = []
    stack: list[str] = [""]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(scan_root / directory if directory else scan_root) as listing:
                # Never list more than the budget allows, even of one huge directory.
                head = itertools.islice(listing, budget.left + 1)
                entries = sorted(head, key=lambda entry: entry.name)
        except OSError as error:
            warnings.append(f"cannot read {prefix}{directory}: {error.strerror or error}")
            continue
        subdirs: list[str] = []
        for entry in entries:
            if not budget.take(warnings):
                return found
            relative = f"{directory}/{entry.name}" if directory else entry.name
            shown = prefix + relative
            if entry.is_symlink():
                warnings.append(f"skipped symlink {shown}")
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS and not rules.ignores_dir(relative):
                    subdirs.append(relative)
            elif entry.is_file(follow_symlinks=False):
                if entry.name == IGNORE_FILE_NAME or rules.ignores_file(relative):
                    continue
                info = entry.stat(follow_symlinks=False)
                if _changed_ms(info) < since_ms:
                    continue
                path = scan_root / relative
                if not is_within(real_root, Path(os.path.realpath(path))):
                    warnings.append(f"skipped path outside workspace {shown}")
                    continue
                found.append(Candidate(path, shown, info.st_size, _changed_ms(info)))
        stack.extend(reversed(subdirs))
    return found


def exported_from_expected_dir(directory: Path, inner: str) -> bool:
    """Whether export's scan of the expected ``directory`` would consider the file ``inner``
    (relative to it): no skipped tool directory on the way, not ignored, not an ignore file."""
    parts = inner.split("/")
    if parts[-1] == IGNORE_FILE_NAME or any(part in SKIPPED_DIRS for part in parts[:-1]):
        return False
    return not load_ignore_rules(directory, []).ignores_file(inner)


def top_level_dirs(dirs: list[str]) -> list[str]:
    """The expected directories not below another one (in their given order)."""
    return [d for d in dirs if not any(o != d and d.startswith(o) for o in dirs)]


def scan_expected_dirs(
    root: Path,
    expected_dirs: list[str],
    *,
    since_ms: float,
    warnings: list[str],
    budget: ScanBudget,
) -> list[Candidate]:
    """Scan 2: the expected directories that exist under the real workspace ``root``."""
    found: list[Candidate] = []
    for directory in top_level_dirs(expected_dirs):
        if directory.split("/", 1)[0] == TASK_SCOPE_ROOT:
            warnings.append(f"skipped expected artifact dir inside task scopes: {directory}")
            continue
        status = dir_status(root, directory)
        if status == "symlink":
            warnings.append(f"skipped symlink {directory}")
        if status != "dir":
            continue
        found.extend(
            scan_tree(
                root / directory.rstrip("/"),
                prefix=directory,
                since_ms=since_ms,
                warnings=warnings,
                budget=budget,
            )
        )
    return found
