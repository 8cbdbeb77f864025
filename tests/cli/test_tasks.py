"""``clawline tasks list|show|cancel`` on the local store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.cli.tasks import TASK_TABLE_COLUMNS
from clawline.records.task import TaskRecord
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TaskRegistry
from clawline.testing import FakeClock

from .helpers import Cli, cells

MAIN = "agent:main:main"


@pytest.fixture
def registry(db_path: Path, clock: FakeClock) -> Iterator[TaskRegistry]:
    store = SQLiteStore(db_path)
    yield TaskRegistry(store, clock=clock)
    store.close()


def seed(registry: TaskRegistry, clock: FakeClock) -> list[TaskRecord]:
    """Four tasks a minute apart: a running sub-agent, a failed one, a queued CLI turn and a
    running ACP session owned by another session."""
    made = []
    made.append(
        registry.create(
            runtime="subagent",
            task="research the thing\nwith details",
            requester_session_key=MAIN,
            child_session_key="agent:main:subagent:a",
            run_id="run-a",
            label="researcher",
            running=True,
        )
    )
    clock.advance(60_000)
    failed = registry.create(
        runtime="subagent",
        task="write it up",
        requester_session_key=MAIN,
        child_session_key="agent:main:subagent:b",
        run_id="run-b",
        running=True,
    )
    made.append(registry.finish(failed.task_id, "failed", error="model exploded"))
    clock.advance(60_000)
    made.append(registry.create(runtime="cli", task="hello", requester_session_key=MAIN))
    clock.advance(60_000)
    made.append(
        registry.create(
            runtime="acp",
            task="fix bug",
            requester_session_key="agent:main:other",
            child_session_key="agent:codex:acp:1",
            run_id="run-c",
            running=True,
        )
    )
    clock.advance(60_000)
    return made


def test_list_table_newest_first(clawline: Cli, registry: TaskRegistry, clock: FakeClock) -> None:
    a, b, c, d = seed(registry, clock)
    rows = cells(clawline.ok("tasks", "list"))
    assert rows == [
        list(TASK_TABLE_COLUMNS),
        [d.task_id, "acp", "running", "fix bug", "agent:main:other", "agent:codex:acp:1", "1m ago"],
        [c.task_id, "cli", "queued", "hello", MAIN, "-", "2m ago"],
        [b.task_id, "subagent", "failed", "write it up", MAIN, "agent:main:subagent:b", "3m ago"],
        [a.task_id, "subagent", "running", "researcher", MAIN, "agent:main:subagent:a", "4m ago"],
    ]


def test_list_filters(clawline: Cli, registry: TaskRegistry, clock: FakeClock) -> None:
    a, b, _c, d = seed(registry, clock)

    def listed(*options: str) -> list[str]:
        output = json.loads(clawline.ok("tasks", "list", "--format", "json", *options))
        return [task["taskId"] for task in output["tasks"]]

    assert listed("--status", "running") == [d.task_id, a.task_id]
    assert listed("--runtime", "subagent") == [b.task_id, a.task_id]
    assert listed("--owner", "agent:main:other") == [d.task_id]
    assert listed("--status", "lost") == []


def test_list_json_envelope_and_paging(
    clawline: Cli, registry: TaskRegistry, clock: FakeClock
) -> None:
    made = seed(registry, clock)
    document = json.loads(clawline.ok("tasks", "list", "--format", "json"))
    assert document == {
        "tasks": [task.to_json() for task in reversed(made)],
        "count": 4,
        "nextCursor": None,
    }
    result = clawline.run("tasks", "list", "--limit", "3")
    assert result.exit_code == 0
    cursor = result.stderr.split("--cursor ")[1].split()[0]
    assert result.stderr == f"more tasks: repeat with --cursor {cursor} (or use --all)\n"
    rest = json.loads(
        clawline.ok("tasks", "list", "--limit", "3", "--cursor", cursor, "--format", "json")
    )
    assert [task["taskId"] for task in rest["tasks"]] == [made[0].task_id]
    walked = json.loads(clawline.ok("tasks", "list", "--limit", "1", "--all", "--format", "json"))
    assert walked["count"] == 4
    assert walked["nextCursor"] is None


def test_list_of_no_tasks(clawline: Cli) -> None:
    assert clawline.ok("tasks", "list") == "no tasks\n"


def test_show_by_id_run_or_session(clawline: Cli, registry: TaskRegistry, clock: FakeClock) -> None:
    a, b, _c, _d = seed(registry, clock)
    expected = json.loads(clawline.ok("tasks", "show", b.task_id, "--format", "json"))
    assert expected["task"] == b.to_json()
    assert [e["kind"] for e in expected["events"]] == ["running", "failed"]
    for token in ("run-b", "agent:main:subagent:b"):
        assert json.loads(clawline.ok("tasks", "show", token, "--format", "json")) == expected
    # A session key alias resolves to the newest task of that session.
    newest_of_main = json.loads(clawline.ok("tasks", "show", "main", "--format", "json"))
    assert newest_of_main["task"]["runtime"] == "cli"
    text = clawline.ok("tasks", "show", a.task_id)
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[:4] == [
        f"task id        {a.task_id}",
        "runtime        subagent",
        "status         running",
        "delivery       pending",
    ]
    assert "label          researcher" in lines
    at = lines.index("task           research the thing")
    assert lines[at + 1] == "               with details"
    assert "run id         run-a" in lines
    assert lines[-2:] == ["events:", "  2026-09-21 14:13:20Z  running"]


def test_show_unknown(clawline: Cli) -> None:
    result = clawline.run("tasks", "show", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        "error: task not found: nope\n",
    )


def test_cancel(clawline: Cli, registry: TaskRegistry, clock: FakeClock) -> None:
    a, b, c, _d = seed(registry, clock)
    result = clawline.run("tasks", "cancel", a.task_id, "--reason", "enough")
    assert (result.exit_code, result.stdout) == (0, f"cancelled {a.task_id}\n")
    assert result.stderr == "note: run run-a was not aborted (only a gateway can abort runs)\n"
    cancelled = registry.require(a.task_id)
    assert (cancelled.status, cancelled.terminal_summary) == ("cancelled", "enough")
    assert clawline.ok("tasks", "cancel", c.task_id) == f"cancelled {c.task_id}\n"
    refused = clawline.run("tasks", "cancel", b.task_id)
    assert (refused.exit_code, refused.stderr) == (
        2,
        f"error: invalid task transition: failed -> cancelled (task {b.task_id})\n",
    )
    unknown = clawline.run("tasks", "cancel", "nope")
    assert (unknown.exit_code, unknown.stderr) == (1, "error: task not found: nope\n")


def test_usage_errors(clawline: Cli) -> None:
    result = clawline.run("tasks", "list", "--status", "done")
    assert result.exit_code == 2
    assert "Invalid value for '--status'" in result.stderr
    assert clawline.run("tasks", "list", "--limit", "0").exit_code == 2
    assert clawline.run("tasks", "show").exit_code == 2
