"""docs/cli.md documents the JSON output: its field tables must match what is emitted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clawline.cli.render import ROW_FIELDS
from clawline.cli.sessions import NOT_LISTED
from clawline.cli.treeview import FOCUS_MARK, NOT_IN_CATALOG
from clawline.cli.views import TABLE_COLUMNS
from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, seed_family

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_FIELD_ROW = re.compile(r"^\|\s*`([A-Za-z]+)`\s*\|")


def documented_fields(section: str) -> list[str]:
    """The backticked names in the first column of the table under ``### <section>``."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^### {re.escape(section)}\n(.*?)(?=^#|\Z)", text, re.M | re.S)
    assert match is not None, f"no section {section!r} in {DOC}"
    fields = [m.group(1) for line in match.group(1).splitlines() if (m := _FIELD_ROW.match(line))]
    assert fields, f"no field table in section {section!r}"
    return fields


def test_field_tables_are_found() -> None:
    assert documented_fields("Lineage object") == ["parent", "path", "depth"]
    with pytest.raises(AssertionError):
        documented_fields("No such section")


def test_session_row_fields_are_documented_in_output_order(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    rows = json.loads(clawline.ok("sessions", "list", "--format", "json"))["sessions"]
    assert documented_fields("Session row") == list(ROW_FIELDS)
    for row in rows:
        assert list(row) == documented_fields("Session row")
        assert list(row["lineage"]) == documented_fields("Lineage object")


def test_list_envelope_is_documented(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    document = json.loads(clawline.ok("sessions", "list", "--format", "json", "--limit", "1"))
    assert list(document) == documented_fields("List envelope")
    assert isinstance(document["nextCursor"], str)


def test_show_document_is_documented(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    document = json.loads(clawline.ok("sessions", "show", "main", "--format", "json"))
    assert list(document) == documented_fields("Session row") + documented_fields("Show document")


def test_tree_envelope_and_nodes_are_documented(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    document = json.loads(clawline.ok("sessions", "tree", "subagent:c", "--format", "json"))
    assert list(document) == documented_fields("Tree envelope")
    node = document["trees"][0]
    while node["children"]:
        assert list(node) == documented_fields("Tree node")
        assert list(node["entry"]) == documented_fields("Session row")
        node = node["children"][0]
    assert list(node) == documented_fields("Tree node")


def test_every_error_message_format_in_the_doc_is_the_real_one(clawline: Cli) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "error: <message>" in text
    result = clawline.run("sessions", "show", "nope")
    assert re.fullmatch(r"error: [^\n]+\n", result.stderr)


def test_table_columns_and_tree_marks_are_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name in TABLE_COLUMNS:
        assert f"`{name}`" in text
    for mark in (NOT_IN_CATALOG, NOT_LISTED, FOCUS_MARK):
        assert f"`{mark}`" in text
