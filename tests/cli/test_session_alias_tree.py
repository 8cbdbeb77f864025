"""``clawline session …`` (an alias of ``sessions``), ``sessions list --tree`` and the tree
drawing, exactly as docs/cli.md ("Tree drawing") shows it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, lines, seed_family

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
TREE = [
    'root agent:main:main ── "Main chat"  [running]',
    '├── agent:main:subagent:a ── "researcher"  [-]',
    "│   └── agent:main:subagent:c  [done]",
    "└── agent:main:subagent:b  [-]",
]


def test_session_list_tree_draws_roots_quoted_titles_and_guides(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    drawn = clawline.ok("session", "list", "--tree")
    assert drawn.splitlines() == TREE
    assert clawline.ok("sessions", "list", "--tree") == drawn
    assert clawline.ok("sessions", "list", "--format", "tree") == drawn
    assert clawline.ok("session", "list", "--format", "tree") == drawn


def test_session_list_json_is_sessions_list_json(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    keys = seed_family(catalog, clock)
    listed = clawline.ok("sessions", "list", "--format", "json")
    assert clawline.ok("session", "list", "--format", "json") == listed
    assert clawline.ok("session", "list", "--tree", "--format", "json") == listed
    assert [row["key"] for row in json.loads(listed)["sessions"]] == list(reversed(keys))


def test_the_alias_reaches_every_sessions_command(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    for command in (("show", "subagent:c"), ("tree", "subagent:c"), ("list",)):
        assert clawline.ok("session", *command) == clawline.ok("sessions", *command)
    made = clawline.ok("session", "create", "agent:main:extra")
    assert made.startswith("created agent:main:extra\n")
    assert catalog.require("agent:main:extra").key == "agent:main:extra"
    help_lines = lines(clawline.ok("--help"))
    assert any(line.split()[:1] == ["sessions"] for line in help_lines)
    assert not any(line.split()[:1] == ["session"] for line in help_lines)
    refused = clawline.run("sesion", "list")
    assert refused.exit_code == 2  # only the one alias, no guessing


def documented_session() -> list[tuple[list[str], list[str]]]:
    """The ``$ clawline …`` commands of the "Tree drawing" example and the lines after each."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Tree drawing\n")
    block = text[text.index("```\n", start) + 4 :]
    steps: list[tuple[list[str], list[str]]] = []
    for line in block[: block.index("```")].splitlines():
        if line.startswith("$ clawline "):
            steps.append((shlex.split(line.removeprefix("$ clawline ")), []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_documented_tree_commands_print_what_the_doc_shows(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    steps = documented_session()
    assert [args[:2] for args, _ in steps] == [
        ["session", "list"],
        ["sessions", "delete"],
        ["sessions", "tree"],
    ]
    for args, expected in steps:
        assert lines(clawline.ok(*args)) == expected, args
