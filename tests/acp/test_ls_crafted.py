"""``clawline acp ls`` against the crafted agent (a real subprocess), and its pure parts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from clawline.cli.acp_ls import (
    LISTED_FIELDS,
    bridge_command,
    lineage_trees,
    listed_sessions,
    ls,
)
from clawline.cli.root import CliState

from .crafted_agent import MAIN, SUB, row
from .crafted_run import Traffic, agent_command, agent_env, process_gone


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich would colour or re-wrap output if these were set."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


FAMILY_TREE = [
    "agent:main:main  Main chat",
    "├── agent:main:subagent:b  B",
    "├── agent:main:subagent:a  first A",
    "│   └── agent:main:subagent:grand",
    "├── agent:main:acp:x",
    "├── agent:main:subagent:self",
    "├── agent:main:subagent:blank",
    "├── agent:main:subagent:none",
    "├── agent:main:subagent:bad",
    "└── agent:main:subagent:a:b",
    "agent:main:subagent:num",
    "agent:main:subagent:meta-array",
]


def run_ls(tmp_path: Path, scenario: str, *args: str) -> tuple[Result, Traffic]:
    log = tmp_path / f"ls-{scenario}.jsonl"
    result = CliRunner().invoke(
        ls, [*args, "--", *agent_command()], env=agent_env(scenario, log), obj=CliState()
    )
    traffic = Traffic(log)
    assert all(process_gone(pid) for pid in traffic.pids())
    traffic.check_sent_requests()
    return result, traffic


def test_tree_shows_nested_children(tmp_path: Path) -> None:
    result, traffic = run_ls(tmp_path, "family", "--tree")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == FAMILY_TREE
    assert traffic.params("session/list") == [{}, {"cursor": "c1"}, {"cursor": "c2"}]
    assert traffic.received("session/load") == []


def test_table_lists_each_session_once_in_agent_order(tmp_path: Path) -> None:
    result, _ = run_ls(tmp_path, "family")
    assert result.exit_code == 0
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == ["SESSION", "TITLE", "UPDATED", "PARENT", "CWD"]
    assert lines[1] == [MAIN, "Main", "chat", "2026-01-01T12:00:00Z", "-", "/work/project"]
    assert lines[4] == [SUB + "a", "first", "A", "2026-01-01T11:00:00Z", MAIN, "/work/project"]
    assert lines[8] == [SUB + "none", "-", "-", MAIN, "/work/project"]
    listed = ["main", *(f"subagent:{n}" for n in ("b", "grand", "a")), "acp:x"]
    listed += [
        f"subagent:{n}" for n in ("self", "blank", "none", "bad", "num", "meta-array", "a:b")
    ]
    assert [cells[0] for cells in lines[1:]] == [f"agent:main:{name}" for name in listed]


def test_json_document(tmp_path: Path) -> None:
    result, _ = run_ls(tmp_path, "family", "--format", "json", "--tree")
    document = json.loads(result.stdout)
    assert list(document) == ["sessions"]
    sessions = document["sessions"]
    assert len(sessions) == 12
    assert all(list(session) == list(LISTED_FIELDS) for session in sessions)
    assert sessions[0] == {
        "sessionId": MAIN,
        "title": "  Main chat  ",
        "updatedAt": "2026-01-01T12:00:00Z",
        "parent": None,
        "cwd": "/work/project",
        "_meta": {"sessionKey": MAIN, "kind": "direct"},
    }
    by_id = {session["sessionId"]: session for session in sessions}
    assert by_id[SUB + "a"]["title"] == "first A"
    assert by_id[SUB + "grand"]["parent"] == SUB + "a"
    assert by_id[SUB + "self"]["parent"] == MAIN
    assert by_id[SUB + "num"]["parent"] == " " + MAIN
    assert by_id[SUB + "meta-array"]["_meta"] is None
    assert by_id[SUB + "none"]["updatedAt"] is None


def test_walks_past_128_pages(tmp_path: Path) -> None:
    result, traffic = run_ls(tmp_path, "pages_200", "--format", "json")
    assert result.exit_code == 0
    sessions = json.loads(result.stdout)["sessions"]
    assert [s["sessionId"] for s in sessions] == [f"{SUB}p{n}" for n in range(200)]
    assert len(traffic.received("session/list")) == 200


def test_agent_without_load_session_can_be_listed(tmp_path: Path) -> None:
    result, _ = run_ls(tmp_path, "no_load", "--format", "json")
    assert result.exit_code == 0
    assert len(json.loads(result.stdout)["sessions"]) == 12


@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ("cursor_repeat", "Invalid ACP session/list cursor"),
        ("cursor_blank", "Invalid ACP session/list cursor"),
        ("row_cwd_number", "Invalid ACP session/list response"),
        ("row_empty_cwd", "Invalid ACP session/list response"),
        ("list_false", "ACP agent does not support session/list"),
        ("list_error", "gateway said no"),
        ("exit_on_init", "ACP process exited with code 3"),
    ],
)
def test_failures_are_one_error_line(tmp_path: Path, scenario: str, error: str) -> None:
    result, _ = run_ls(tmp_path, scenario)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"error: {error}\n")


def test_an_agent_that_cannot_start(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    result = CliRunner().invoke(ls, ["--", missing], obj=CliState())
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ACP agent could not be started: ")


def test_url_only_applies_to_the_bridge(tmp_path: Path) -> None:
    result = CliRunner().invoke(ls, ["--url", "ws://x", "--", "agent"], obj=CliState())
    assert result.exit_code == 2
    assert result.stderr == "error: --url and --token apply only to the default bridge\n"


def test_bridge_command_passes_state_dir_and_url(tmp_path: Path) -> None:
    state = CliState(state_dir=tmp_path, store_url="sqlite:///x.db")
    command = bridge_command(state, "ws://127.0.0.1:1")
    assert command[1:] == [
        "-m",
        "clawline",
        "--state-dir",
        str(tmp_path),
        "--store-url",
        "sqlite:///x.db",
        "acp",
        "--url",
        "ws://127.0.0.1:1",
    ]
    assert bridge_command(None, None)[1:] == ["-m", "clawline", "acp"]


def draw(rows: list[Any]) -> list[str]:
    console = Console(width=200, file=None, record=True, color_system=None)
    with console.capture() as capture:
        for tree in lineage_trees(listed_sessions(rows)):
            console.print(tree)
    return capture.get().splitlines()


def test_parent_cycles_and_unlisted_parents_are_drawn() -> None:
    rows = [
        row(SUB + "x", parentSessionId=SUB + "y"),
        row(SUB + "y", parentSessionId=SUB + "x"),
        row(SUB + "z", parentSessionId="agent:main:gone"),
        row(SUB + "w", spawnedBy=SUB + "z", title="  W  "),
        row(SUB + "x", parentSessionId=MAIN),
    ]
    assert draw(rows) == [
        SUB + "z",
        f"└── {SUB}w  W",
        SUB + "x",
        f"└── {SUB}y",
    ]
    assert [s["parent"] for s in listed_sessions(rows)] == [
        SUB + "y",
        SUB + "x",
        "agent:main:gone",
        SUB + "z",
    ]
