"""Expected errors: exactly one ``error: <message>`` line on stderr, a non-zero exit code (2 for
invalid input, 1 otherwise), nothing on stdout and nothing written to the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.cli.root import CommandFailed, one_line
from clawline.errors import InvalidLabel, SessionNotFound, StoreUnavailable
from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, seed_family, snapshot

CASES: list[tuple[list[str], int, str]] = [
    # bad keys
    (
        ["show", "bad key"],
        2,
        "invalid session key: whitespace or control characters are not allowed: 'bad key'",
    ),
    (["create", "agent::x"], 2, "invalid session key: empty part in 'agent::x'"),
    (
        ["create", "agent:main"],
        2,
        "invalid session key: 'agent:main' needs the form agent:<agentId>:<rest>",
    ),
    # labels
    (["create", "ops", "--label", "   "], 2, "invalid label: empty"),
    (["create", "ops", "--label", "x" * 513], 2, "invalid label: too long (max 512)"),
    (["create", "subagent:z", "--label", "researcher"], 2, "label already in use: researcher"),
    (["patch", "main", "--label", "researcher"], 2, "label already in use: researcher"),
    # lineage
    (
        ["patch", "subagent:a", "--parent", "subagent:b"],
        2,
        "parentSessionKey cannot be changed once set",
    ),
    (
        ["patch", "subagent:b", "--parent", "subagent:a"],
        2,
        "lineage parent cannot be changed once set (agent:main:main)",
    ),
    (
        ["patch", "main", "--parent", "subagent:c"],
        2,
        "lineage cycle: agent:main:subagent:c already descends from agent:main:main",
    ),
    (
        ["patch", "main", "--parent", "main"],
        2,
        "lineage cycle: agent:main:main cannot be its own parent",
    ),
    (
        ["create", "ops", "--role", "leaf"],
        2,
        "subagentRole is only supported for subagent:* or acp:* sessions",
    ),
    (["patch", "subagent:b", "--spawn-depth", "-1"], 2, "invalid spawnDepth (use an integer >= 0)"),
    # listing
    (["list", "--cursor", "garbage"], 2, "invalid cursor: malformed"),
    (["list", "--limit", "0"], 2, "invalid limit (use an integer from 1 to 10000)"),
    (["list", "--limit", "10001", "--all"], 2, "invalid limit (use an integer from 1 to 10000)"),
    (["list", "--active", "0"], 2, "invalid --active (use a number of minutes >= 1)"),
    (
        ["list", "--agent", "bad!"],
        2,
        'Invalid agentId "bad!". Agent IDs must match [a-z0-9][a-z0-9_-]{0,63}.',
    ),
    # fields and options
    (
        ["patch", "main", "--status", "bogus"],
        2,
        'invalid status (use "running", "done", "failed", "killed" or "timeout")',
    ),
    (["patch", "main", "--set", 'key="x"'], 2, "key is maintained by clawline and cannot be set"),
    (
        ["patch", "main", "--set", "model"],
        2,
        "invalid --set 'model': use FIELD=JSON, e.g. model='\"gpt\"'",
    ),
    (
        ["patch", "main", "--set", "model=gpt"],
        2,
        "invalid --set model: the value is not JSON (Expecting value: line 1 column 1 (char 0))",
    ),
    (
        ["patch", "main", "--set", "x=NaN"],
        2,
        "invalid --set x: the value is not JSON (NaN is not allowed)",
    ),
    (
        ["patch", "main", "--label", "x", "--set", 'label="y"'],
        2,
        "label is given more than once",
    ),
    (["patch", "main"], 2, "nothing to change: give at least one option"),
    # not found and conflicts
    (["show", "nope"], 1, "session not found: agent:main:nope"),
    (["tree", "nope"], 1, "session not found: agent:main:nope"),
    (["delete", "nope", "--yes"], 1, "session not found: agent:main:nope"),
    (["delete", "nope"], 1, "session not found: agent:main:nope"),
    (["patch", "nope", "--label", "x"], 1, "session not found: agent:main:nope"),
    (["create", "main"], 1, "session already exists: agent:main:main (use 'sessions patch')"),
]


@pytest.mark.parametrize(("args", "code", "message"), CASES)
def test_error_prints_one_line_and_writes_nothing(
    clawline: Cli,
    catalog: SessionCatalog,
    clock: FakeClock,
    db_path: Path,
    args: list[str],
    code: int,
    message: str,
) -> None:
    seed_family(catalog, clock)
    before = snapshot(db_path)
    result = clawline.run("sessions", *args)
    assert (result.exit_code, result.stderr) == (code, f"error: {message}\n")
    assert result.stdout == ""
    assert snapshot(db_path) == before


def test_cursor_of_another_query_is_refused(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    result = clawline.run("sessions", "list", "--agent", "main", "--limit", "1")
    cursor = result.stderr.split("--cursor ")[1].split()[0]
    result = clawline.run("sessions", "list", "--cursor", cursor)
    assert (result.exit_code, result.stderr) == (
        2,
        "error: invalid cursor: it belongs to a different query\n",
    )


def test_tampered_cursor_is_refused(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    result = clawline.run("sessions", "list", "--limit", "1")
    cursor = result.stderr.split("--cursor ")[1].split()[0]
    other = SessionCatalog(catalog.store, clock=clock)  # same store, same secret: still valid
    assert other.page(limit=1, cursor=cursor).entries
    tampered = cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")
    result = clawline.run("sessions", "list", "--cursor", tampered)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid cursor: ")
    assert result.stderr.count("\n") == 1


def test_invalid_config_is_one_line(clawline: Cli, state_dir: Path) -> None:
    state_dir.mkdir(parents=True)
    (state_dir / "config.toml").write_text("[store\nurl = 1\n", encoding="utf-8")
    result = clawline.run("sessions", "list")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: config: {state_dir / 'config.toml'} is not valid TOML")
    assert result.stderr.count("\n") == 1
    assert not (state_dir / "clawline.db").exists()


def test_unsupported_store_url_is_one_line(clawline: Cli, state_dir: Path) -> None:
    result = clawline.run("--store-url", "mysql://db/x", "sessions", "list")
    assert (result.exit_code, result.stderr) == (
        1,
        "error: unsupported store URL 'mysql://db/x' (use sqlite: or postgresql:)\n",
    )
    assert not state_dir.exists()


def test_usage_errors_exit_2_without_writing(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock, db_path: Path
) -> None:
    seed_family(catalog, clock)
    before = snapshot(db_path)
    result = clawline.run("sessions", "create", "subagent:q", "--role", "boss")
    assert result.exit_code == 2
    assert "Invalid value for '--role'" in result.stderr
    assert "Traceback" not in result.output
    assert snapshot(db_path) == before


def test_error_messages_are_joined_into_one_line() -> None:
    assert one_line("first\n  second\r\n\nthird ") == "first second third"
    failure = CommandFailed.from_error(InvalidLabel("bad\nlabel"))
    assert (failure.exit_code, failure.format_message()) == (2, "bad label")
    assert CommandFailed.from_error(SessionNotFound("gone")).exit_code == 1
    assert CommandFailed.from_error(StoreUnavailable("down")).exit_code == 1
