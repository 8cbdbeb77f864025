"""Output helpers: relative times, escaping, JSON ordering and tree drawing."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.cli.render import ago, printable, row_json, sorted_json, utc_time
from clawline.cli.treeview import draw_tree
from clawline.lineage.tree import TreeNode, build_forest
from clawline.records.session import SessionEntry
from clawline.types import JSON

from .helpers import Cli

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


@pytest.mark.parametrize(
    ("age_ms", "expected"),
    [
        (-5_000, "just now"),
        (0, "just now"),
        (MINUTE - 1, "just now"),
        (MINUTE, "1m ago"),
        (HOUR - 1, "59m ago"),
        (HOUR, "1h ago"),
        (2 * DAY - 1, "47h ago"),
        (2 * DAY, "2d ago"),
        (30 * DAY - 1, "29d ago"),
        (30 * DAY, "2026-08-22"),
    ],
)
def test_ago(age_ms: int, expected: str) -> None:
    now = 1_790_000_000_000
    assert ago(now - age_ms, now) == expected


def test_utc_time() -> None:
    assert utc_time(0) == "1970-01-01 00:00:00Z"
    assert utc_time(1_790_000_000_999) == "2026-09-21 14:13:20Z"


def test_printable_escapes_control_characters() -> None:
    assert printable("a\nb\tc\x7fé") == "a\\x0ab\\x09c\\x7fé"


def test_sorted_json_sorts_nested_objects_only() -> None:
    value: JSON = {"b": [{"d": 1, "c": 2}, "x"], "a": ("y", "z")}
    result = sorted_json(value)
    assert result == {"a": ["y", "z"], "b": [{"c": 2, "d": 1}, "x"]}
    assert isinstance(result, dict)
    assert list(result) == ["a", "b"]


def entry(key: str, path: tuple[str, ...], created: int, **fields: object) -> SessionEntry:
    return SessionEntry(
        key=key,
        session_id="s",
        created_at=created,
        updated_at=created,
        root_session_key=path[0],
        trace_id="t" * 32,
        lineage_path=path,
        **fields,  # type: ignore[arg-type]
    )


def test_row_json_orders_extra_fields_after_the_documented_ones() -> None:
    row = row_json(entry("r", ("r",), 1, extra={"zz": 1, "aa": {"y": 1, "x": 2}}))
    assert list(row)[-2:] == ["aa", "zz"]
    assert row["aa"] == {"x": 2, "y": 1}
    assert next(iter(row)) == "key"


def test_draw_tree_connectors_for_a_deeper_tree() -> None:
    r = entry("r", ("r",), 1, display_name="Root\nline", status="running")
    a = entry("a", ("r", "a"), 2, label="A")
    a1 = entry("a1", ("r", "a", "a1"), 3)
    a2 = entry("a2", ("r", "a", "a2"), 4, status="failed")
    b = entry("b", ("r", "b"), 5)
    b1 = entry("b1", ("r", "b", "x", "b1"), 6)
    (root,) = build_forest([b1, a2, r, b, a1, a], placeholders=True)
    assert [line.text for line in draw_tree(root, focus="a1")] == [
        'root r ── "Root\\x0aline"  [running]',
        '├── a ── "A"  [-]',
        "│   ├── a1  [-]  ◀",
        "│   └── a2  [failed]",
        "└── b  [-]",
        "    └── x  (not in catalog)",
        "        └── b1  [-]",
    ]
    styles = {line.text.split()[-1]: line.style for line in draw_tree(root, focus="a1")}
    assert styles["◀"] == "bold"
    assert styles["catalog)"] == "dim"


def test_draw_tree_of_a_lone_placeholder_root() -> None:
    node = TreeNode("gone", None, [TreeNode("kid", entry("kid", ("gone", "kid"), 1))])
    lines = draw_tree(node, placeholder=lambda key: f"({key} is missing)")
    assert [line.text for line in lines] == ["root gone  (gone is missing)", "└── kid  [-]"]


def test_state_dir_option_in_process(clawline: Cli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    result = clawline.run("--state-dir", str(other), "sessions", "create", "x", env={})
    assert result.exit_code == 0, result.output
    assert (other / "clawline.db").is_file()
    assert not clawline.state_dir.exists()


def test_help_and_version_touch_no_store(clawline: Cli) -> None:
    assert clawline.ok("--version") == "clawline, version 0.1.0\n"
    assert "sessions" in clawline.ok("--help")
    assert "Usage:" in clawline.ok("sessions", "list", "--help")
    assert not clawline.state_dir.exists()
