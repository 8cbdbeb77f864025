"""``artifact-ignore.md``: files a task asks export to leave out.

The file sits at the root of what is scanned (the task scope, or one expected directory) and is
itself never exported. When it contains a fenced block opened by a line
```` ```artifact-ignore ````, only that block's lines are rules; otherwise every line is. Blank
lines and ``#`` comments are skipped. Rules, relative to that root:

| rule | ignores |
|---|---|
| ``drafts/`` | the directory and everything below it (no ``*`` allowed) |
| ``**/*.log`` | files ending in ``.log`` at any depth |
| ``*.tmp`` | files ending in ``.tmp`` at the root only |
| ``notes/todo.md`` | exactly that file |

Absolute rules, ``.``/``..`` segments and NULs are refused
(``ignored unsafe artifact ignore rule: X``); any other use of ``*`` is not supported
(``ignored unsupported artifact ignore rule: X``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clawline.agents.confined import ConfinedDir, ConfinedPathError
from clawline.xworkmate.constants import IGNORE_FILE_NAME, MAX_IGNORE_FILE_BYTES

_FENCE_OPEN = "```artifact-ignore"
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    directories: tuple[str, ...] = ()
    any_depth_suffixes: tuple[str, ...] = ()
    root_suffixes: tuple[str, ...] = ()
    exact: frozenset[str] = field(default_factory=frozenset)

    def ignores_dir(self, relative: str) -> bool:
        """Whether the directory at ``relative`` (from the rules' root) is skipped."""
        return any(relative == rule or relative.startswith(rule + "/") for rule in self.directories)

    def ignores_file(self, relative: str) -> bool:
        """Whether the file at ``relative`` (from the rules' root) is skipped."""
        if relative == IGNORE_FILE_NAME or relative in self.exact:
            return True
        if any(relative.startswith(rule + "/") for rule in self.directories):
            return True
        if any(relative.endswith(suffix) for suffix in self.any_depth_suffixes):
            return True
        return "/" not in relative and any(relative.endswith(s) for s in self.root_suffixes)


def _rule_lines(text: str) -> list[str]:
    lines = text.splitlines()
    inside: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        if inside is None:
            if stripped == _FENCE_OPEN:
                inside = []
        elif stripped.startswith("```"):
            return inside
        else:
            inside.append(line)
    return inside if inside is not None else lines


def _unsafe(rule: str) -> bool:
    if "\x00" in rule or rule.startswith(("/", "\\")) or _DRIVE.match(rule):
        return True
    return any(part in (".", "..") for part in re.split(r"[/\\]", rule.rstrip("/\\")))


def parse_ignore_rules(text: str, warnings: list[str]) -> IgnoreRules:
    """The rules in an ignore file's ``text``; refused rules are reported in ``warnings``."""
    directories: list[str] = []
    any_depth: list[str] = []
    root: list[str] = []
    exact: set[str] = set()
    for line in _rule_lines(text):
        rule = line.strip()
        if not rule or rule.startswith("#"):
            continue
        if _unsafe(rule):
            warnings.append(f"ignored unsafe artifact ignore rule: {rule}")
            continue
        normalized = rule.replace("\\", "/")
        if normalized.endswith("/"):
            path = normalized.rstrip("/")
            if "*" in path or not path:
                warnings.append(f"ignored unsupported artifact ignore rule: {rule}")
            else:
                directories.append(path)
        elif normalized.startswith("**/*") and "*" not in normalized[4:]:
            any_depth.append(normalized[4:])
        elif normalized.startswith("*") and "/" not in normalized and "*" not in normalized[1:]:
            root.append(normalized[1:])
        elif "*" in normalized:
            warnings.append(f"ignored unsupported artifact ignore rule: {rule}")
        else:
            exact.add(normalized)
    return IgnoreRules(tuple(directories), tuple(any_depth), tuple(root), frozenset(exact))


def load_ignore_rules(root: ConfinedDir, warnings: list[str]) -> IgnoreRules:
    """The rules of ``artifact-ignore.md`` in ``root``; none when it is missing, not a regular
    file (a symlink is never followed), hard-linked (unless allowed) or unreadable."""
    try:
        handle, _ = root.open_file(IGNORE_FILE_NAME)
    except (ConfinedPathError, OSError):
        return IgnoreRules()
    with handle:
        try:
            data = handle.read(MAX_IGNORE_FILE_BYTES)
        except OSError:
            return IgnoreRules()
    return parse_ignore_rules(data.decode("utf-8", "replace"), warnings)
