"""Commands reach data only through the ``SessionsBackend`` given to them, so a different
implementation (e.g. one that talks to a gateway) can stand in without a store."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from click.testing import CliRunner

from clawline.cli.backend import (
    Deletion,
    ListRequest,
    SessionDetail,
    SessionsBackend,
    SessionsPage,
    SessionTree,
    Write,
)
from clawline.cli.root import CliState, cli
from clawline.clock import Clock
from clawline.config import Settings
from clawline.errors import SessionNotFound
from clawline.lineage.tree import TreeNode, build_forest
from clawline.records.session import SessionEntry
from clawline.testing import FakeClock


def _entry(key: str, path: tuple[str, ...]) -> SessionEntry:
    return SessionEntry(
        key=key,
        session_id="s",
        created_at=1,
        updated_at=1,
        root_session_key=path[0],
        trace_id="t" * 32,
        lineage_path=path,
    )


class CannedBackend:
    """Answers from a fixed list and records every request."""

    def __init__(self) -> None:
        self.entries = [_entry("agent:x:main", ("agent:x:main",))]
        self.requests: list[ListRequest] = []
        self.closed = False

    def list_page(self, request: ListRequest) -> SessionsPage:
        self.requests.append(request)
        return SessionsPage(entries=self.entries, next_cursor=None)

    def lookup(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        return {}

    def detail(self, key: str, *, events: int) -> SessionDetail:
        raise SessionNotFound(f"remote: no {key}")

    def tree(self, key: str) -> SessionTree:
        return SessionTree(root=self.forest()[0], key=key)

    def forest(self) -> list[TreeNode]:
        return build_forest(self.entries)

    def create(self, key: str, changes: Mapping[str, object]) -> Write:
        raise NotImplementedError

    def patch(self, key: str, changes: Mapping[str, object]) -> Write:
        raise NotImplementedError

    def delete(self, key: str) -> Deletion:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True


def test_commands_use_the_backend_they_are_given(tmp_path: Path) -> None:
    backend = CannedBackend()
    given: list[Settings] = []

    def factory(settings: Settings, clock: Clock) -> SessionsBackend:
        given.append(settings)
        return backend

    state = CliState(clock=FakeClock(), env={}, backend_factory=factory)
    args = ["--state-dir", str(tmp_path / "s"), "sessions", "list", "--format", "json"]
    args += ["--agent", "x", "--active", "5", "--limit", "7", "--cursor", "c1"]
    result = CliRunner().invoke(cli, args, obj=state, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert [row["key"] for row in json.loads(result.stdout)["sessions"]] == ["agent:x:main"]
    assert backend.requests == [ListRequest("x", 5, 7, "c1")]
    assert backend.closed
    assert given[0].state_dir == tmp_path / "s"
    assert not (tmp_path / "s").exists()

    result = CliRunner().invoke(
        cli,
        ["sessions", "show", "k"],
        obj=CliState(env={"CLAWLINE_STATE_DIR": str(tmp_path / "s")}, backend_factory=factory),
    )
    assert (result.exit_code, result.stderr) == (1, "error: remote: no k\n")
