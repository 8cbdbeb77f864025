"""``clawline sessions …`` through a running gateway: the same output, errors and exit codes as
with the store.

The gateway runs in a thread on the test's state directory and fake clock, so the store
expectations of test_list, test_show_tree, test_edit_delete and test_errors apply unchanged:
their tests are imported here and run again with ``clawline`` talking to the gateway. Tests
of things the gateway protocol does differently are replaced by the variants below.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from clawline.errors import StoreUnavailable
from clawline.gateway.bus import Event
from clawline.gateway.options import GatewaySettings
from clawline.sessions.catalog import Change, SessionCatalog
from clawline.testing import FakeClock
from clawline.testing.gateway_thread import GatewayThread

from .helpers import Cli, lines, seed_family, snapshot
from .test_edit_delete import (
    test_create_json_prints_the_row,
    test_create_sets_every_field_option,
    test_patch_reports_an_unchanged_session,
)
from .test_errors import (
    CASES,
    test_cursor_of_another_query_is_refused,
    test_tampered_cursor_is_refused,
    test_usage_errors_exit_2_without_writing,
)
from .test_list import (
    test_active_keeps_rows_updated_within_the_window,
    test_active_pages_end_at_the_first_inactive_row,
    test_agent_filter,
    test_all_walks_every_page,
    test_cursor_pages_cover_every_row_once,
    test_json_envelope_holds_every_row_in_to_json_order,
    test_json_output_is_byte_for_byte_stable,
    test_table_lists_newest_first_with_lineage_columns,
    test_table_of_an_empty_catalog,
    test_table_pages_hint_the_next_cursor_on_stderr,
    test_tree_format_draws_the_listed_sessions,
    test_tree_format_marks_ancestors_outside_the_listing,
)
from .test_show_tree import (
    test_show_events_option_limits_the_tail,
    test_show_json_is_the_row_plus_children,
    test_tree_after_deleting_a_middle_node_keeps_the_grandchild_in_place,
    test_tree_json_nests_nodes_with_placeholders,
    test_tree_json_without_key_lists_every_root,
    test_tree_of_a_key_draws_its_whole_tree_with_the_key_marked,
    test_tree_of_an_empty_catalog,
    test_tree_without_key_draws_every_tree,
)

__all__ = [  # the store tests re-run here against the gateway
    "test_active_keeps_rows_updated_within_the_window",
    "test_active_pages_end_at_the_first_inactive_row",
    "test_agent_filter",
    "test_all_walks_every_page",
    "test_create_json_prints_the_row",
    "test_create_sets_every_field_option",
    "test_cursor_of_another_query_is_refused",
    "test_cursor_pages_cover_every_row_once",
    "test_json_envelope_holds_every_row_in_to_json_order",
    "test_json_output_is_byte_for_byte_stable",
    "test_patch_reports_an_unchanged_session",
    "test_show_events_option_limits_the_tail",
    "test_show_json_is_the_row_plus_children",
    "test_table_lists_newest_first_with_lineage_columns",
    "test_table_of_an_empty_catalog",
    "test_table_pages_hint_the_next_cursor_on_stderr",
    "test_tampered_cursor_is_refused",
    "test_tree_after_deleting_a_middle_node_keeps_the_grandchild_in_place",
    "test_tree_format_draws_the_listed_sessions",
    "test_tree_format_marks_ancestors_outside_the_listing",
    "test_tree_json_nests_nodes_with_placeholders",
    "test_tree_json_without_key_lists_every_root",
    "test_tree_of_a_key_draws_its_whole_tree_with_the_key_marked",
    "test_tree_of_an_empty_catalog",
    "test_tree_without_key_draws_every_tree",
    "test_usage_errors_exit_2_without_writing",
]

TOKEN = "sessions-token-3"


@dataclass
class GatewayCli(Cli):
    """Runs ``clawline`` with the gateway configured through the environment."""

    url: str = ""

    def environment(self) -> dict[str, str]:
        return {
            "CLAWLINE_STATE_DIR": str(self.state_dir),
            "CLAWLINE_GATEWAY_URL": self.url,
            "CLAWLINE_GATEWAY_TOKEN": TOKEN,
        }

    def run(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        terminal: dict[str, str] | None = None,
    ) -> Result:
        environment = self.environment() if env is None else env
        return super().run(*args, input=input, env=environment, terminal=terminal)


@pytest.fixture
def gateway(state_dir: Path, clock: FakeClock) -> Iterator[GatewayThread]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    with GatewayThread(state_dir, clock=clock, gateway_settings=settings) as running:
        yield running


@pytest.fixture
def clawline(state_dir: Path, clock: FakeClock, gateway: GatewayThread) -> GatewayCli:
    return GatewayCli(state_dir, clock, gateway.url)


@pytest.fixture
def published(gateway: GatewayThread) -> list[Event]:
    """Every event the gateway publishes from now on."""
    events: list[Event] = []
    gateway.running.gateway.bus.tap(events.append)
    return events


# --- the commands really go through the gateway --------------------------------------------


def test_commands_go_through_the_gateway_unless_local(
    clawline: GatewayCli, catalog: SessionCatalog, published: list[Event]
) -> None:
    clawline.ok("sessions", "create", "ops")
    assert [(e.name, e.payload.get("reason")) for e in published] == [
        ("sessions.changed", "create")
    ]
    clawline.ok("--local", "sessions", "patch", "ops", "--label", "x")
    assert len(published) == 1  # written straight to the store
    assert catalog.require("ops").label == "x"
    clawline.ok("sessions", "patch", "ops", "--label", "y")
    assert [e.payload.get("reason") for e in published] == ["create", "patch"]


def test_no_gateway_without_url_even_with_a_runtime_file(
    clawline: GatewayCli, state_dir: Path, published: list[Event]
) -> None:
    assert (state_dir / "gateway.json").is_file()
    clawline.run("sessions", "create", "ops", env={"CLAWLINE_STATE_DIR": str(state_dir)})
    assert published == []


def test_config_url_selects_the_gateway(
    clawline: GatewayCli, state_dir: Path, published: list[Event]
) -> None:
    (state_dir / "config.toml").write_text(
        f'[gateway]\nurl = "{clawline.url}"\ntoken = "{TOKEN}"\n', encoding="utf-8"
    )
    result = clawline.run("sessions", "create", "ops", env={"CLAWLINE_STATE_DIR": str(state_dir)})
    assert result.exit_code == 0, result.output
    assert [e.name for e in published] == ["sessions.changed"]


def test_a_store_url_option_means_local(
    clawline: GatewayCli, tmp_path: Path, published: list[Event]
) -> None:
    db = tmp_path / "other.db"
    clawline.ok("--store-url", f"sqlite:///{db}", "sessions", "create", "ops")
    assert db.is_file()
    assert published == []


def test_the_same_output_as_the_store(
    clawline: GatewayCli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    main, a, _b, c = seed_family(catalog, clock)
    catalog.append(a, "message", {"role": "user", "content": "hello"})
    clock.advance(1000)
    catalog.append(a, "message", {"role": "assistant", "content": [{"type": "text", "text": "hi"}]})
    catalog.patch(c, {"pluginExtensions": {"p": {"k": [1, 2]}}, "model": "gpt"})
    commands = [
        ["sessions", "list"],
        ["sessions", "list", "--format", "json"],
        ["sessions", "list", "--format", "tree", "--limit", "2"],
        ["sessions", "list", "--agent", "main", "--active", "3", "--format", "json"],
        ["sessions", "show", "subagent:a"],
        ["sessions", "show", "subagent:c", "--format", "json"],
        ["sessions", "show", "main", "--events", "0"],
        ["sessions", "tree"],
        ["sessions", "tree", c, "--format", "json"],
        ["sessions", "show", "agent:main:nope"],
        ["sessions", "tree", "bad key"],
        ["sessions", "list", "--limit", "0"],
    ]
    for command in commands:
        remote = clawline.run(*command)
        local = clawline.run("--local", *command)
        assert (remote.exit_code, remote.stdout, remote.stderr) == (
            local.exit_code,
            local.stdout,
            local.stderr,
        ), command
    assert main in clawline.ok("sessions", "tree")


# --- what the gateway protocol does differently ------------------------------------------

GATEWAY_ONLY = "use 'clawline --local' to write the store directly"


def test_show_lists_message_events_only(
    clawline: GatewayCli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    key = catalog.patch("main", {}).key
    catalog.append(key, "message", {"role": "user", "content": "hello"})
    catalog.append(key, "tool", {"name": "grep"})
    catalog.append(key, "message", {"text": "after"})
    remote = lines(clawline.ok("sessions", "show", "main"))
    local = lines(clawline.ok("--local", "sessions", "show", "main"))
    assert [line for line in local if "  tool  " not in line] == remote
    assert remote[-2:] == [
        '  #1  2026-09-21 14:13:20Z  message  {"content":"hello","role":"user"}',
        '  #3  2026-09-21 14:13:20Z  message  {"text":"after"}',
    ]


def test_deleting_a_main_session_is_refused_by_the_gateway(
    clawline: GatewayCli, catalog: SessionCatalog, clock: FakeClock, db_path: Path
) -> None:
    main, a, _b, c = seed_family(catalog, clock)
    before = snapshot(db_path)
    result = clawline.run("sessions", "delete", main, "--yes")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "error: Cannot delete the main session (agent:main:main).\n"
    assert snapshot(db_path) == before
    out = clawline.ok("sessions", "delete", a, "--yes")
    assert (
        out == "deleted agent:main:subagent:a\nchildren left in place: 1\n  agent:main:subagent:c\n"
    )
    assert catalog.get(a) is None
    assert catalog.require(c).lineage_path == (main, a, c)


def test_delete_asks_and_archives_the_transcript(
    clawline: GatewayCli, catalog: SessionCatalog, db_path: Path
) -> None:
    """test_edit_delete's delete tests, on a session the gateway may delete."""
    entry = catalog.patch("ops", {}).after
    assert entry is not None
    before = snapshot(db_path)
    result = clawline.run("sessions", "delete", "ops", input="n\n")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "error: not confirmed; nothing deleted"
    assert "Delete agent:main:ops? (0 direct children will be kept)" in result.stderr
    assert snapshot(db_path) == before
    result = clawline.run("sessions", "delete", "ops", input="y\n")
    assert result.exit_code == 0
    assert result.stdout == "deleted agent:main:ops\nchildren left in place: 0\n"
    assert catalog.get("ops") is None
    info = catalog.store.transcript_info(entry.session_id)
    assert info is not None
    assert info.archive_reason == "deleted"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--status", "done"], "status"),
        (["--set", 'meta={"a": 1}'], "meta"),
        (["--parent", "main"], "parentSessionKey"),
    ],
)
def test_fields_sessions_patch_does_not_accept_are_refused(
    clawline: GatewayCli, catalog: SessionCatalog, db_path: Path, args: list[str], field: str
) -> None:
    catalog.patch("agent:main:subagent:x", {})
    catalog.patch("main", {})
    before = snapshot(db_path)
    result = clawline.run("sessions", "patch", "subagent:x", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {field} cannot be changed through the gateway (sessions.patch does not "
        f"accept it); {GATEWAY_ONLY}\n"
    )
    assert snapshot(db_path) == before
    assert clawline.ok("--local", "sessions", "patch", "subagent:x", *args).startswith("patched")


def test_patch_of_accepted_fields_and_extra_settings(
    clawline: GatewayCli, catalog: SessionCatalog
) -> None:
    clawline.ok("sessions", "create", "main", "--label", "home")
    out = clawline.ok("sessions", "patch", "main", "--set", 'model="gpt-5"', "--set", "label=null")
    assert out.splitlines()[0] == "patched agent:main:main"
    entry = catalog.require("main")
    assert (entry.label, dict(entry.extra)) == (None, {"model": "gpt-5"})
    clawline.ok("sessions", "patch", "main", "--set", "model=null")
    assert "model" not in catalog.require("main").extra


def test_create_with_an_unknown_parent_is_refused(
    clawline: GatewayCli, catalog: SessionCatalog, db_path: Path
) -> None:
    catalog.patch("main", {})
    before = snapshot(db_path)
    result = clawline.run("sessions", "create", "subagent:x", "--parent", "agent:main:ghost")
    assert (result.exit_code, result.stderr) == (
        1,
        "error: unknown parent session: agent:main:ghost\n",
    )
    assert snapshot(db_path) == before


def test_a_failed_second_step_of_create_is_undone(
    clawline: GatewayCli,
    catalog: SessionCatalog,
    gateway: GatewayThread,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """create = sessions.create (key, label, parent) + sessions.patch (the rest); when the
    patch fails, the new session is deleted again."""
    catalog.patch("main", {})
    served = gateway.running.runtime.catalog
    real_patch = served.patch

    def failing_patch(key: object, changes: Mapping[str, object], **options: Any) -> Change:
        if "displayName" in changes:
            raise StoreUnavailable("disk on fire")
        return real_patch(key, changes, **options)

    monkeypatch.setattr(served, "patch", failing_patch)
    result = clawline.run(
        "sessions", "create", "subagent:x", "--parent", "main", "--display-name", "X"
    )
    assert (result.exit_code, result.stderr) == (1, "error: disk on fire\n")
    assert catalog.get("agent:main:subagent:x") is None


# --- the error cases of test_errors, through the gateway -----------------------------------

GATEWAY_CASES = [case for case in CASES if case[0] != ["patch", "main", "--parent", "subagent:c"]]
"""All but the cycle made by patching a parent, which the gateway cannot do (see below)."""


@pytest.mark.parametrize(("args", "code", "message"), GATEWAY_CASES)
def test_error_prints_one_line_and_writes_nothing(
    clawline: GatewayCli,
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


def test_a_lineage_cycle_through_the_gateway(
    clawline: GatewayCli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    clawline.ok("sessions", "create", "subagent:top")
    result = clawline.run("sessions", "create", "subagent:low", "--parent", "subagent:top")
    assert result.exit_code == 0
    # a cycle needs a parent change, which only sessions.create makes: refused as unsupported
    result = clawline.run("sessions", "patch", "subagent:top", "--parent", "subagent:low")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: parentSessionKey cannot be changed through the gateway")
    refused = clawline.run("sessions", "show", "subagent:top", "--format", "json")
    assert json.loads(refused.stdout)["parentSessionKey"] is None
