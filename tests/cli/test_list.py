"""``clawline sessions list``: table, json and tree formats, filters and paging."""

from __future__ import annotations

import json

from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, cells, lines, seed_family

TABLE = [
    "KEY                    TITLE       STATUS   DEPTH  PARENT                 UPDATED",
    "agent:main:subagent:c  -           done         2  agent:main:subagent:a  1m ago",
    "agent:main:subagent:b  -           -            1  agent:main:main        2m ago",
    "agent:main:subagent:a  researcher  -            1  agent:main:main        3m ago",
    "agent:main:main        Main chat   running      0  -                      4m ago",
]


def test_table_lists_newest_first_with_lineage_columns(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    assert lines(clawline.ok("sessions", "list")) == TABLE


def test_table_of_an_empty_catalog(clawline: Cli) -> None:
    assert clawline.ok("sessions", "list") == "no sessions\n"


def test_json_envelope_holds_every_row_in_to_json_order(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    keys = seed_family(catalog, clock)
    document = json.loads(clawline.ok("sessions", "list", "--format", "json"))
    assert list(document) == ["sessions", "count", "nextCursor"]
    assert document["count"] == 4
    assert document["nextCursor"] is None
    assert [row["key"] for row in document["sessions"]] == [keys[3], keys[2], keys[1], keys[0]]
    for row in document["sessions"]:
        entry = catalog.require(row["key"])
        assert row == entry.to_json()
        assert list(row) == list(entry.to_json())
    c = document["sessions"][0]
    assert c["lineage"] == {
        "parent": "agent:main:subagent:a",
        "path": "/agent:main:main/agent:main:subagent:a/agent:main:subagent:c",
        "depth": 2,
    }


def test_json_output_is_byte_for_byte_stable(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    catalog.patch(
        "agent:main:subagent:b",
        {
            "zeta": {"b": 1, "a": [{"y": 1, "x": 2}]},
            "model": "gpt",
            "pluginExtensions": {"p": {"z": 1, "a": 2}},
        },
    )
    first = clawline.ok("sessions", "list", "--format", "json")
    assert clawline.ok("sessions", "list", "--format", "json") == first
    row = json.loads(first)["sessions"][0]
    assert row["key"] == "agent:main:subagent:b"
    # documented fields first, extra fields after them sorted by name, nested keys sorted
    assert list(row)[-3:] == ["lineage", "model", "zeta"]
    assert first.index('"x": 2') < first.index('"y": 1')
    assert list(row["pluginExtensions"]["p"]) == ["a", "z"]
    assert list(row["zeta"]) == ["a", "b"]


def test_tree_format_draws_the_listed_sessions(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    assert lines(clawline.ok("sessions", "list", "--format", "tree")) == [
        'root agent:main:main ── "Main chat"  [running]',
        '├── agent:main:subagent:a ── "researcher"  [-]',
        "│   └── agent:main:subagent:c  [done]",
        "└── agent:main:subagent:b  [-]",
    ]


def test_tree_format_marks_ancestors_outside_the_listing(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    _main, a, _b, _c = seed_family(catalog, clock)
    catalog.delete(a)
    # only c is on the first page: main exists but is not listed, a is gone
    result = clawline.run("sessions", "list", "--format", "tree", "--limit", "1")
    assert result.exit_code == 0
    assert lines(result.stdout) == [
        "root agent:main:main  (not listed)",
        "└── agent:main:subagent:a  (not in catalog)",
        "    └── agent:main:subagent:c  [done]",
    ]
    assert result.stderr.startswith("more sessions: repeat with --cursor ")


def test_agent_filter(clawline: Cli, catalog: SessionCatalog, clock: FakeClock) -> None:
    seed_family(catalog, clock)
    catalog.patch("agent:ops:main", {})
    document = json.loads(clawline.ok("sessions", "list", "--agent", "OPS", "--format", "json"))
    assert [row["key"] for row in document["sessions"]] == ["agent:ops:main"]


def test_active_keeps_rows_updated_within_the_window(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)  # now = c + 1m, b + 2m, a + 3m, main + 4m
    out = clawline.ok("sessions", "list", "--active", "2", "--format", "json")
    assert [row["key"] for row in json.loads(out)["sessions"]] == [
        "agent:main:subagent:c",
        "agent:main:subagent:b",
    ]
    clock.advance(1)  # b is now 2 minutes and 1 ms old
    out = clawline.ok("sessions", "list", "--active", "2", "--format", "json")
    assert [row["key"] for row in json.loads(out)["sessions"]] == ["agent:main:subagent:c"]


def test_active_pages_end_at_the_first_inactive_row(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    first = json.loads(
        clawline.ok("sessions", "list", "--active", "3", "--limit", "2", "--format", "json")
    )
    assert first["count"] == 2
    assert first["nextCursor"] is not None
    clock.advance(30_000)  # "now" moves between calls; the cursor stays valid
    second = json.loads(
        clawline.ok(
            *("sessions", "list", "--active", "4", "--limit", "2", "--format", "json"),
            *("--cursor", first["nextCursor"]),
        )
    )
    assert [row["key"] for row in second["sessions"]] == ["agent:main:subagent:a"]
    assert second["nextCursor"] is None


def test_cursor_pages_cover_every_row_once(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    keys = seed_family(catalog, clock)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        args = ["sessions", "list", "--limit", "3", "--format", "json"]
        document = json.loads(clawline.ok(*args, *(["--cursor", cursor] if cursor else [])))
        seen.extend(row["key"] for row in document["sessions"])
        pages += 1
        cursor = document["nextCursor"]
        if cursor is None:
            break
    assert pages == 2
    assert seen == list(reversed(keys))


def test_all_walks_every_page(clawline: Cli, catalog: SessionCatalog, clock: FakeClock) -> None:
    keys = seed_family(catalog, clock)
    document = json.loads(
        clawline.ok("sessions", "list", "--all", "--limit", "1", "--format", "json")
    )
    assert [row["key"] for row in document["sessions"]] == list(reversed(keys))
    assert document["count"] == 4
    assert document["nextCursor"] is None


def test_table_pages_hint_the_next_cursor_on_stderr(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    result = clawline.run("sessions", "list", "--limit", "2")
    assert result.exit_code == 0
    assert cells(result.stdout) == cells("\n".join(TABLE[:3]))
    cursor = result.stderr.split("--cursor ")[1].split()[0]
    assert result.stderr == f"more sessions: repeat with --cursor {cursor} (or use --all)\n"
    rest = clawline.ok("sessions", "list", "--limit", "2", "--cursor", cursor)
    assert cells(rest) == cells("\n".join([TABLE[0], *TABLE[3:]]))
