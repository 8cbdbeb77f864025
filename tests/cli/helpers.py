"""Helpers for the command-line tests: an in-process runner, store snapshots, output parsing
and a small seeded family of sessions."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from clawline.cli.root import CliState, cli
from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

START_MS = 1_790_000_000_000
"""The fake clock's start: 2026-09-21 14:13:20Z."""


@dataclass
class Cli:
    """Runs ``clawline`` in-process against one state directory and clock."""

    state_dir: Path
    clock: FakeClock

    def run(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        terminal: dict[str, str] | None = None,
    ) -> Result:
        """Run with ``env`` as the whole environment (default: only CLAWLINE_STATE_DIR).
        ``terminal`` goes into the process environment for the run, where rich reads it
        (``COLUMNS``, ``FORCE_COLOR``, ``NO_COLOR``)."""
        state = CliState(
            clock=self.clock,
            env={"CLAWLINE_STATE_DIR": str(self.state_dir)} if env is None else env,
        )
        return CliRunner().invoke(
            cli, list(args), input=input, obj=state, catch_exceptions=False, env=terminal
        )

    def ok(
        self, *args: str, input: str | None = None, terminal: dict[str, str] | None = None
    ) -> str:
        """Run, require exit code 0 and an empty stderr, return stdout."""
        result = self.run(*args, input=input, terminal=terminal)
        assert result.exit_code == 0, (result.exit_code, result.output)
        assert result.stderr == ""
        return result.stdout


def snapshot(db_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the tables that hold sessions and transcripts, in a fixed order."""
    if not db_path.exists():
        return {}
    tables = ("sessions", "transcripts", "transcript_events")
    with sqlite3.connect(db_path) as db:
        return {
            table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in tables
        }


def lines(text: str) -> list[str]:
    """Output lines, each without trailing whitespace."""
    return [line.rstrip() for line in text.splitlines()]


def cells(text: str) -> list[list[str]]:
    """A plain table split into cells (columns are separated by at least two spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]


def seed_family(catalog: SessionCatalog, clock: FakeClock) -> Sequence[str]:
    """main ← a ← c and main ← b, created one minute apart; returns the four keys.

    main: display name "Main chat", status running; a: label "researcher"; b: spawnedBy main
    only; c: status done. Afterwards the clock is one minute past c.
    """
    main = catalog.patch("main", {"displayName": "Main chat", "status": "running"}).key
    clock.advance(60_000)
    a = catalog.patch(
        "agent:main:subagent:a", {"parentSessionKey": main, "label": "researcher"}
    ).key
    clock.advance(60_000)
    b = catalog.patch("agent:main:subagent:b", {"spawnedBy": main}).key
    clock.advance(60_000)
    c = catalog.patch("agent:main:subagent:c", {"parentSessionKey": a, "status": "done"}).key
    clock.advance(60_000)
    return main, a, b, c
