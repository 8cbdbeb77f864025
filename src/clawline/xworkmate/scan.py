"""Finding a task run's artifact files on disk (the upstream scan rules).

Two scans, both confined to real directories (no symlinked component anywhere):

1. the **task scope** ``tasks/<session>/<run>``, recursively; paths relative to the scope;
2. only when scan 1 found nothing: each **expected directory** (``reports/``,
   ``assets/images/``, …) under the workspace root; paths relative to the workspace root.
   A directory below another expected directory is covered by that one's scan; the
   ``tasks/`` tree is never an expected directory, so earlier task scopes are never adopted.

Every scan skips symlinks (``skipped symlink <path>``), the tool directories of
:data:`SKIPPED_DIRS`, files changed before the time window, hard-linked files unless
``[tools.fs] allowHardlinks`` (``skipped hard-linked file <path>``), directories that turned
into a symlink after they were listed (``skipped path outside workspace <path>``) and what
``artifact-ignore.md`` excludes. Directories are listed through
:class:`~clawline.agents.confined.ConfinedDir`, so the kernel never follows a symlink on the way.
"""

from __future__ import annotations

from dataclasses import dataclass

from clawline.agents.confined import ConfinedDir, ConfinedPathError, Entry, SymlinkRefused
from clawline.xworkmate.constants import (
    IGNORE_FILE_NAME,
    MAX_SCAN_ENTRIES,
    SKIPPED_DIRS,
    TASK_SCOPE_ROOT,
)
from clawline.xworkmate.ignore import IgnoreRules, load_ignore_rules
from clawline.xworkmate.paths import dir_status


@dataclass(frozen=True, slots=True)
class Candidate:
    location: str
    """Where the file is, relative to the workspace root (no symlinked component)."""
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


def _join(*parts: str) -> str:
    return "/".join(part for part in parts if part)


def _changed_ms(entry: Entry) -> int:
    return max(entry.mtime_ns, entry.ctime_ns) // 1_000_000


def scan_tree(
    root: ConfinedDir,
    base: str,
    *,
    prefix: str,
    since_ms: float,
    warnings: list[str],
    budget: ScanBudget,
) -> list[Candidate]:
    """Files below the directory ``base`` of the workspace ``root``, reported as
    ``prefix + <relative>``."""
    try:
        with root.opendir(base) as scan_dir:
            rules = load_ignore_rules(scan_dir, warnings)
    except (ConfinedPathError, OSError):
        warnings.append(f"skipped path outside workspace {prefix or base}")
        return []
    found: list[Candidate] = []
    stack: list[str] = [""]
    while stack:
        directory = stack.pop()
        try:
            # Never list more than the budget allows, even of one huge directory.
            _, listed = root.entries(_join(base, directory), limit=budget.left + 1)
        except SymlinkRefused:
            warnings.append(f"skipped path outside workspace {prefix}{directory}")
            continue
        except OSError as error:
            warnings.append(f"cannot read {prefix}{directory}: {error.strerror or error}")
            continue
        subdirs: list[str] = []
        for entry in sorted(listed, key=lambda item: item.name):
            if not budget.take(warnings):
                return found
            relative = f"{directory}/{entry.name}" if directory else entry.name
            if entry.kind == "dir":
                if entry.name not in SKIPPED_DIRS and not rules.ignores_dir(relative):
                    subdirs.append(relative)
            else:
                candidate = _candidate(
                    root, base, entry, relative, prefix, rules, warnings, since_ms
                )
                if candidate is not None:
                    found.append(candidate)
        stack.extend(reversed(subdirs))
    return found


def _candidate(
    root: ConfinedDir,
    base: str,
    entry: Entry,
    relative: str,
    prefix: str,
    rules: IgnoreRules,
    warnings: list[str],
    since_ms: float,
) -> Candidate | None:
    """The export candidate a listed non-directory is, if any."""
    shown = prefix + relative
    if entry.kind == "symlink":
        warnings.append(f"skipped symlink {shown}")
        return None
    if entry.kind != "file" or entry.name == IGNORE_FILE_NAME or rules.ignores_file(relative):
        return None
    if _changed_ms(entry) < since_ms:
        return None
    if entry.nlink > 1 and not root.allow_hardlinks:
        warnings.append(f"skipped hard-linked file {shown}")
        return None
    return Candidate(_join(base, relative), shown, entry.size, _changed_ms(entry))


def exported_from_expected_dir(root: ConfinedDir, directory: str, inner: str) -> bool:
    """Whether export's scan of the expected ``directory`` would consider the file ``inner``
    (relative to it): no skipped tool directory on the way, not ignored, not an ignore file."""
    parts = inner.split("/")
    if parts[-1] == IGNORE_FILE_NAME or any(part in SKIPPED_DIRS for part in parts[:-1]):
        return False
    try:
        with root.opendir(directory.rstrip("/")) as scan_dir:
            rules = load_ignore_rules(scan_dir, [])
    except (ConfinedPathError, OSError):
        return False
    return not rules.ignores_file(inner)


def top_level_dirs(dirs: list[str]) -> list[str]:
    """The expected directories not below another one (in their given order)."""
    return [d for d in dirs if not any(o != d and d.startswith(o) for o in dirs)]


def scan_expected_dirs(
    root: ConfinedDir,
    expected_dirs: list[str],
    *,
    since_ms: float,
    warnings: list[str],
    budget: ScanBudget,
) -> list[Candidate]:
    """Scan 2: the expected directories that exist under the workspace ``root``."""
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
                root,
                directory.rstrip("/"),
                prefix=directory,
                since_ms=since_ms,
                warnings=warnings,
                budget=budget,
            )
        )
    return found
