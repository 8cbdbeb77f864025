"""Output building blocks: the JSON shapes of docs/cli.md, times, titles and the console.

JSON output is deterministic: a row keeps :meth:`SessionEntry.to_json`'s order for the fields
every entry has (:data:`ROW_FIELDS`), then any extra OpenClaw fields sorted by name; objects
inside ``pluginExtensions`` and extra fields are key-sorted, since backends may reorder them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import click
from rich.console import Console

from clawline.lineage.tree import TreeNode
from clawline.records.session import SessionEntry
from clawline.types import JSON, JSONObject

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WIDE = 10_000
"""The width rich lays out for: wider than any line clawline prints."""


def _row_fields() -> tuple[str, ...]:
    sample = SessionEntry(
        key="k",
        session_id="s",
        created_at=0,
        updated_at=0,
        root_session_key="k",
        trace_id="t",
        lineage_path=("k",),
    )
    return tuple(sample.to_json())


ROW_FIELDS: tuple[str, ...] = _row_fields()
"""The fields of every JSON row, in output order (documented in docs/cli.md)."""


def sorted_json(value: JSON) -> JSON:
    """``value`` with every object's keys sorted and sequences as lists."""
    if isinstance(value, Mapping):
        return {name: sorted_json(value[name]) for name in sorted(value)}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [sorted_json(item) for item in value]
    return value


def row_json(entry: SessionEntry) -> JSONObject:
    """One session in the stable row shape."""
    raw = entry.to_json()
    row: JSONObject = {name: raw[name] for name in ROW_FIELDS}
    row["pluginExtensions"] = sorted_json(raw["pluginExtensions"])
    for name in sorted(set(raw) - set(ROW_FIELDS)):
        row[name] = sorted_json(raw[name])
    return row


def node_json(node: TreeNode) -> JSONObject:
    """A tree node: ``{key, entry: row|null, children: [node…]}``."""
    return {
        "key": node.key,
        "entry": None if node.entry is None else row_json(node.entry),
        "children": [node_json(child) for child in node.children],
    }


def dump_json(value: JSON) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


def title_of(entry: SessionEntry) -> str:
    """What a session is called: display name, else label, else key."""
    return entry.display_name or entry.label or entry.key


def printable(text: str) -> str:
    """``text`` with control characters escaped, so one value stays on one line."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def utc_time(ms: int) -> str:
    """``2026-09-21 12:00:00Z``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def ago(ms: int, now_ms: int) -> str:
    """A short relative time: ``just now``, ``5m ago``, ``3h ago``, ``12d ago``, else the date."""
    seconds = max(0, now_ms - ms) // 1000
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h ago"
    if seconds < 30 * 86400:
        return f"{seconds // 86400}d ago"
    return utc_time(ms)[:10]


def make_console() -> Console:
    """A console for human output: no markup or highlighting (values are data, not markup),
    colour only on a terminal, and never any wrapping or cropping by rich. Keys are meant to
    be copied, so a table is printed at its natural width and a narrow terminal wraps the
    lines instead of rich cutting keys short."""
    return Console(highlight=False, markup=False, emoji=False, width=_WIDE)


FORMAT_OPTION = click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
"""``--format table|json`` into the command's ``output_format`` parameter."""
