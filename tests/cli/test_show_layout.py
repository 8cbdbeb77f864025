"""The text of ``tasks show`` and ``sessions show``: relative times of instants to come,
multi-line values as indented lines (control characters still escaped), every label apart
from its value, events indented like the other lines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.cli.render import printable_lines, relative_time
from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TASK_RETENTION_MS, TaskRegistry
from clawline.testing import FakeClock

from .helpers import START_MS, Cli, lines, seed_family

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR


@pytest.mark.parametrize(
    ("ahead_ms", "expected"),
    [
        (1, "in less than a minute"),
        (MINUTE - 1, "in less than a minute"),
        (MINUTE, "in 1 minute"),
        (90 * SECOND, "in 2 minutes"),  # to the nearest minute
        (59 * MINUTE + 29 * SECOND, "in 59 minutes"),
        (59 * MINUTE + 30 * SECOND, "in 1 hour"),
        (3 * HOUR, "in 3 hours"),
        (47 * HOUR, "in 47 hours"),
        (47 * HOUR + 30 * MINUTE, "in 2 days"),
        (7 * DAY - 1, "in 7 days"),
        (7 * DAY, "in 7 days"),
        (30 * DAY - 12 * HOUR, "2026-10-21"),
    ],
)
def test_relative_time_of_an_instant_to_come(ahead_ms: int, expected: str) -> None:
    assert relative_time(START_MS + ahead_ms, START_MS) == expected


@pytest.mark.parametrize(("ago_ms", "expected"), [(0, "just now"), (5 * MINUTE, "5m ago")])
def test_relative_time_of_an_instant_past_is_ago(ago_ms: int, expected: str) -> None:
    assert relative_time(START_MS - ago_ms, START_MS) == expected


def test_printable_lines_splits_at_line_breaks_and_escapes_the_rest() -> None:
    assert printable_lines("a\r\n\tb\x07\n\n") == ["a", "    b\\x07"]
    assert printable_lines("one line") == ["one line"]
    assert printable_lines("") == [""]


@pytest.fixture
def registry(db_path: Path, clock: FakeClock) -> Iterator[TaskRegistry]:
    store = SQLiteStore(db_path)
    yield TaskRegistry(store, clock=clock)
    store.close()


def test_tasks_show_says_when_cleanup_comes_and_prints_lines_as_lines(
    clawline: Cli, registry: TaskRegistry, clock: FakeClock
) -> None:
    task = registry.create(
        runtime="subagent",
        task="research the thing\nwith details\r\n\tindented\nand \x1b[31mno escape",
        requester_session_key="agent:main:main",
        child_session_key="agent:main:subagent:a",
        run_id="run-a",
        running=True,
    )
    clock.advance(MINUTE)
    ended = registry.finish(task.task_id, "succeeded")
    assert ended.cleanup_after == clock.now_ms() + TASK_RETENTION_MS
    clock.advance(5 * SECOND)
    out = lines(clawline.ok("tasks", "show", task.task_id))
    at = out.index("task           research the thing")
    assert out[at : at + 4] == [
        "task           research the thing",
        "               with details",
        " " * 19 + "indented",  # the tab expanded
        "               and \\x1b[31mno escape",
    ]
    assert "cleanup after  2026-09-28 14:14:20Z (in 7 days)" in out
    assert "ended          2026-09-21 14:14:20Z (just now)" in out
    assert all("\x1b" not in line and "\r" not in line for line in out)
    # every value in one column, whatever label it has
    for line in out[: out.index("events:")]:
        if not line.startswith(" "):
            assert line[13:15] == "  ", line
            assert line[15] != " ", line


def test_sessions_show_keeps_labels_apart_and_indents_events_like_the_rest(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    _main, a, _b, _c = seed_family(catalog, clock)
    catalog.append(a, "message", {"text": "hello"})
    catalog.patch(a, {"abortedLastRun": False, "model": "gpt"})
    out = lines(clawline.ok("sessions", "show", a))
    assert "  abortedLastRun  false" in out
    assert '  model           "gpt"' in out
    assert "  key             agent:main:subagent:a" in out  # one column for the whole page
    assert out[-2:] == ["events:", '  #1  2026-09-21 14:17:20Z  message  {"text":"hello"}']
    for line in out:
        if line.startswith("  ") and not line.startswith("  #"):
            label, value = line[2:18], line[18:]
            assert label.endswith("  "), line
            assert value, line
            assert not value.startswith(" ") or not label.strip(), line


def test_sessions_show_documented_excerpt_is_real(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    """The excerpt under ``sessions show`` in docs/cli.md: each of its lines, in order."""
    _main, a, _b, _c = seed_family(catalog, clock)
    catalog.append(a, "message", {"text": "hello"})
    catalog.patch(a, {"abortedLastRun": False})
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    block = doc[doc.index("```\nsession:\n") + 4 :]
    excerpt = [line for line in block[: block.index("```")].splitlines() if line.strip() != "…"]
    out = lines(clawline.ok("sessions", "show", a))
    positions = [out.index(line) for line in excerpt]
    assert positions == sorted(positions)
    assert len(excerpt) == 9
