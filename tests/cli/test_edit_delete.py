"""``clawline sessions create``, ``patch`` and ``delete``."""

from __future__ import annotations

import json
from pathlib import Path

from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, seed_family, snapshot


def test_create_sets_every_field_option(clawline: Cli, catalog: SessionCatalog) -> None:
    clawline.ok("sessions", "create", "main")
    out = clawline.ok(
        "sessions", "create", "subagent:w", "--label", " worker ", "--display-name", "Worker",
        "--parent", "main", "--spawned-by", "main", "--spawn-depth", "1", "--role", "leaf",
        "--control-scope", "none", "--workspace", "/ws", "--cwd", "/ws/sub",
    )  # fmt: skip
    assert out == (
        "created agent:main:subagent:w\n"
        "  lineage: /agent:main:main/agent:main:subagent:w (depth 1)\n"
    )
    entry = catalog.require("agent:main:subagent:w")
    assert (
        entry.label,
        entry.display_name,
        entry.parent_session_key,
        entry.spawned_by,
        entry.spawn_depth,
        entry.subagent_role,
        entry.subagent_control_scope,
        entry.spawned_workspace_dir,
        entry.spawned_cwd,
        entry.root_session_key,
    ) == (
        "worker",
        "Worker",
        "agent:main:main",
        "agent:main:main",
        1,
        "leaf",
        "none",
        "/ws",
        "/ws/sub",
        "agent:main:main",
    )
    assert entry.trace_id == catalog.require("main").trace_id


def test_create_json_prints_the_row(clawline: Cli, catalog: SessionCatalog) -> None:
    row = json.loads(clawline.ok("sessions", "create", "ops", "--format", "json"))
    assert row == catalog.require("agent:main:ops").to_json()


def test_patch_changes_status_and_any_field(clawline: Cli, catalog: SessionCatalog) -> None:
    clawline.ok("sessions", "create", "main", "--label", "home")
    out = clawline.ok(
        "sessions", "patch", "main", "--status", "done", "--set", 'model="gpt-5"',
        "--set", 'meta={"b": [1, 2], "a": null}', "--set", "label=null",
    )  # fmt: skip
    assert out.splitlines()[0] == "patched agent:main:main"
    entry = catalog.require("main")
    assert entry.status == "done"
    assert entry.label is None
    assert dict(entry.extra) == {"model": "gpt-5", "meta": {"b": [1, 2], "a": None}}
    clawline.ok("sessions", "patch", "main", "--set", "model=null")
    assert "model" not in catalog.require("main").extra


def test_patch_reports_an_unchanged_session(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    catalog.patch("main", {"label": "home"})
    out = clawline.ok("sessions", "patch", "main", "--label", "home")
    assert out.splitlines()[0] == "unchanged agent:main:main"
    clock.advance(5)  # a patch touches updatedAt, so the same label now changes the entry
    out = clawline.ok("sessions", "patch", "main", "--label", "home")
    assert out.splitlines()[0] == "patched agent:main:main"
    assert catalog.require("main").updated_at == clock.now_ms()


def test_patch_sets_a_lineage_parent_once(clawline: Cli, catalog: SessionCatalog) -> None:
    clawline.ok("sessions", "create", "main")
    clawline.ok("sessions", "create", "subagent:x")
    out = clawline.ok("sessions", "patch", "subagent:x", "--parent", "main")
    assert out.splitlines()[1] == "  lineage: /agent:main:main/agent:main:subagent:x (depth 1)"


def test_delete_removes_exactly_one_session_and_keeps_children(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    main, a, b, c = seed_family(catalog, clock)
    before_c = catalog.require(c)
    out = clawline.ok("sessions", "delete", main, "--yes")
    assert out == (
        "deleted agent:main:main\n"
        "children left in place: 2\n"
        "  agent:main:subagent:b\n"
        "  agent:main:subagent:a\n"
    )
    assert catalog.get(main) is None
    for key in (a, b):
        child = catalog.require(key)
        assert child.lineage_path[0] == main
        assert child.root_session_key == main
    assert catalog.require(c) == before_c


def test_delete_asks_unless_yes(clawline: Cli, catalog: SessionCatalog, db_path: Path) -> None:
    catalog.patch("main", {})
    before = snapshot(db_path)
    result = clawline.run("sessions", "delete", "main", input="n\n")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "error: not confirmed; nothing deleted"
    assert "Delete agent:main:main? (0 direct children will be kept)" in result.stderr
    assert snapshot(db_path) == before
    result = clawline.run("sessions", "delete", "main", input="y\n")
    assert result.exit_code == 0
    assert result.stdout == "deleted agent:main:main\nchildren left in place: 0\n"
    assert catalog.get("main") is None


def test_delete_archives_the_transcript(
    clawline: Cli, catalog: SessionCatalog, db_path: Path
) -> None:
    entry = catalog.patch("main", {}).after
    assert entry is not None
    clawline.ok("sessions", "delete", "main", "-y")
    info = catalog.store.transcript_info(entry.session_id)
    assert info is not None
    assert info.archive_reason == "deleted"
