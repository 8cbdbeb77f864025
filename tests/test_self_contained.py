"""The repository stands on its own: no file in it points outside it.

A fresh clone must pass its tests, and its docs must make sense, with nothing beside it. So no
text file of the repository may contain:

- an absolute path in the ``work``, ``root`` or ``home`` folders at the top of the file system
  (the machines the project was written on: checkouts, home directories, the shared contracts);
- the ``shared`` folder that sat next to the checkout, as a relative path up out of the
  repository or by its sub-folders (``reference``, ``acp``, ``design``, ``hooks``);
- the absolute path of this checkout, whatever it is called (found at test time);
- a section sign (U+00A7): no document of the repository numbers its sections, so a section
  number cites a document that is not here (name the upstream source, or a doc heading).

The files are those git would track: everything under the root that ``.gitignore`` does not
exclude (read with pathspec, so the check also works on a copy without ``.git``), binary files
aside. :data:`ALLOWED` lists the exceptions, each an exact text in one file; an entry that no
longer matches anything fails too, so the list cannot go stale. This file spells the forbidden
texts out of parts (:func:`rooted`), so it is checked like every other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pathspec
import pytest

ROOT = Path(__file__).resolve().parents[1]


def rooted(name: str) -> str:
    """``/<name>/``: an absolute folder at the top of the file system."""
    return f"/{name}/"


UP = ".."
SECTION = "\u00a7"
_EDGE = r"(?<![\w.~-])"
"""Not inside a longer path or name: a ``work`` folder under ``/srv`` is data, not this machine."""

FORBIDDEN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an absolute path under /work, /root or /home", re.compile(_EDGE + r"/(?:work|root|home)/")),
    ("the shared folder beside the checkout", re.compile(re.escape(UP) + r"/shared\b")),
    (
        "the shared folder beside the checkout",
        re.compile(r"\bshared/(?:reference|acp|design|hooks)(?![\w-])"),
    ),
    ("a section number of a document that is not here", re.compile(SECTION)),
)


def checkout_pattern(checkout: str) -> re.Pattern[str]:
    """The checkout's absolute path as a whole path (not the tail of a longer one)."""
    return re.compile(_EDGE + re.escape(checkout) + r"(?![\w-])")


FAKE_CWD = "fake cwd of a crafted ACP session row: data the test makes up, not a path it opens"
ALLOWED: dict[tuple[str, str], str] = {
    ("tests/acp/crafted_agent.py", f'"{rooted("work")}project"'): FAKE_CWD,
    ("tests/acp/test_ls_crafted.py", f'"{rooted("work")}project"'): FAKE_CWD,
    ("tests/acp/test_family_crafted.py", f'"{rooted("work")}project"'): FAKE_CWD,
    ("tests/conformance/test_entries.py", f'"{rooted("work")}sub"'): (
        "a stored spawnedCwd value round-tripped by the store: data, not a path the test opens"
    ),
}
"""``(file, exact text) → why``: texts that match a forbidden pattern but are legitimate."""


def repository_files(root: Path) -> Iterator[Path]:
    """Every file under ``root`` that git would track: ``.gitignore`` applied, no ``.git``."""
    ignore_file = root / ".gitignore"
    lines = ignore_file.read_text(encoding="utf-8").splitlines() if ignore_file.exists() else []
    ignored = pathspec.GitIgnoreSpec.from_lines(lines)
    for directory, subdirs, files in os.walk(root):
        here = Path(directory).relative_to(root)
        subdirs[:] = sorted(
            name
            for name in subdirs
            if name != ".git" and not ignored.match_file(f"{(here / name).as_posix()}/")
        )
        for name in sorted(files):
            relative = (here / name).as_posix()
            if not ignored.match_file(relative):
                yield root / relative


def text_of(path: Path) -> str | None:
    """The file's text, or ``None`` for a binary file."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def problems(
    relative: str, text: str, checkout: str, allowed: dict[tuple[str, str], str]
) -> tuple[list[str], set[tuple[str, str]]]:
    """The offending lines of one file (``path:line: what: text``) and the allow-list entries
    that excused something in it."""
    patterns = [*FORBIDDEN, ("the path of this checkout", checkout_pattern(checkout))]
    excuses = [entry for entry in allowed if entry[0] == relative]
    found: list[str] = []
    used: set[tuple[str, str]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in patterns:
            for match in pattern.finditer(line):
                excuse = next((e for e in excuses if _covers(line, e[1], match.start())), None)
                if excuse is not None:
                    used.add(excuse)
                    continue
                found.append(f"{relative}:{number}: {what}: {line.strip()[:160]}")
    return found, used


def _covers(line: str, excused: str, position: int) -> bool:
    start = line.find(excused)
    while start != -1:
        if start <= position < start + len(excused):
            return True
        start = line.find(excused, start + 1)
    return False


def test_no_file_refers_to_a_path_outside_the_repository() -> None:
    found: list[str] = []
    used: set[tuple[str, str]] = set()
    scanned = 0
    for path in repository_files(ROOT):
        text = text_of(path)
        if text is None:
            continue
        scanned += 1
        file_problems, file_used = problems(
            path.relative_to(ROOT).as_posix(), text, str(ROOT), ALLOWED
        )
        found += file_problems
        used |= file_used
    assert scanned > 100, f"only {scanned} text files found under {ROOT}"
    assert found == [], "references to outside the repository:\n" + "\n".join(found)
    assert used == set(ALLOWED), f"allow-list entries that excuse nothing: {set(ALLOWED) - used}"


def test_the_walk_covers_the_tree_and_skips_ignored_files() -> None:
    files = {path.relative_to(ROOT).as_posix() for path in repository_files(ROOT)}
    for expected in (
        "README.md",
        "CONTRIBUTING.md",
        "pyproject.toml",
        ".ci/run",
        "scripts/test",
        "src/clawline/keys.py",
        "tests/test_self_contained.py",
        "tests/acp/schema/schema.v1.json",
    ):
        assert expected in files
    assert not any(name.startswith((".git/", ".venv/")) for name in files)
    assert not any("/__pycache__/" in f"/{name}" for name in files)


W, H, R = rooted("work"), rooted("home"), rooted("root")
CHECKOUT = "/srv/checkouts/clawline"


@pytest.mark.parametrize(
    "line",
    [
        f'SCHEMA_DIR = Path("{W}shared" + "/acp")',
        f"see `{UP}/shared` + `/reference`",
        f"see `{UP}/shared/`",
        "The contracts live in shared" + "/reference/.",
        f"a token in {R}.config/x",
        f"HOME={H}someone",
        f"(collaboration.md {SECTION}4.1 step 5)",
        f"file://{W}main/README.md",
        f"cd {CHECKOUT} && make",
        f"`{CHECKOUT}/src`",
    ],
)
def test_forbidden_references_are_found(line: str) -> None:
    found, _ = problems("docs/x.md", line, CHECKOUT, {})
    assert len(found) >= 1, line


@pytest.mark.parametrize(
    "line",
    [
        f'FILTER_CWD = "/srv{W}main"',
        f"a copy in /srv{CHECKOUT} or {CHECKOUT}-old",
        "state in ~/.clawline/clawline.db",
        'CHROMIUM = "/usr/bin/chromium"',
        "open /proc/self/fd and /dev/null",
        "shared/acp-chat/subagent-lineage.ts (a ClawX module)",
        "rootSessionKey, lineage path /agent:main:main/agent:main:subagent:x",
    ],
)
def test_ordinary_paths_are_not_flagged(line: str) -> None:
    found, _ = problems("docs/x.md", line, CHECKOUT, {})
    assert found == []


def test_an_allowed_text_excuses_only_itself_in_its_own_file() -> None:
    allowed = {("tests/a.py", f'"{W}project"'): "fake data"}
    line = f'cwd = "{W}project"; other = "{W}elsewhere"'
    found, used = problems("tests/a.py", line, CHECKOUT, allowed)
    assert used == {("tests/a.py", f'"{W}project"')}
    assert len(found) == 1
    assert "elsewhere" in found[0]
    found, used = problems("tests/b.py", f'cwd = "{W}project"', CHECKOUT, allowed)
    assert len(found) == 1
    assert used == set()
