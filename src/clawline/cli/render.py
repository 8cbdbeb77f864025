"""Output building blocks: the JSON shapes of docs/cli.md, times, titles, status colours and the
consoles.

JSON output is deterministic: a row keeps :meth:`SessionEntry.to_json`'s order for the fields
every entry has (:data:`ROW_FIELDS`), then any extra OpenClaw fields sorted by name; objects
inside ``pluginExtensions`` and extra fields are key-sorted, since backends may reorder them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime

import click
from rich.console import Console
from rich.text import Text

from clawline.lineage.tree import TreeNode
from clawline.records.session import SessionEntry
from clawline.types import JSON, JSONObject

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WIDE = 10_000
"""The width of output that is not a terminal: wider than any line clawline prints."""

STATUS_STYLES: Mapping[str, str] = {
    "queued": "blue",
    "running": "cyan",
    "done": "green",
    "succeeded": "green",
    "failed": "red",
    "lost": "red",
    "timeout": "red",
    "timed_out": "red",
    "killed": "yellow",
    "cancelled": "yellow",
}
"""The colour of a session or task status (docs/cli.md, "Tables"); other values stay plain."""


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


def printable_lines(text: str) -> list[str]:
    """``text`` split at its line breaks (``\\n``, ``\\r\\n``; those at its end dropped), tabs
    expanded and every other control character escaped as in :func:`printable`."""
    lines = text.rstrip("\r\n").split("\n")
    return [printable(line.removesuffix("\r").expandtabs(4)) for line in lines]


def label_width(pairs: Iterable[tuple[str, str | None]]) -> int:
    """Two more than the longest label, counting those whose value is absent."""
    return max((len(printable(name)) + 2 for name, _ in pairs), default=0)


def labelled_lines(
    pairs: Iterable[tuple[str, str | None]], indent: str = "", width: int = 0
) -> list[str]:
    """``label  value`` lines, values aligned two spaces after the longest label (or at
    ``width``, if further): absent values (``None``) are left out but their labels count, so the
    layout does not move from one record to the next. A value's further lines are indented to
    its column."""
    listed = list(pairs)
    width = max(width, label_width(listed))
    out: list[str] = []
    for name, value in listed:
        if value is None:
            continue
        first, *rest = printable_lines(value)
        name = printable(name)
        out.append(f"{indent}{name:<{width}}{first}".rstrip())
        out.extend(f"{indent}{'':<{width}}{line}".rstrip() for line in rest)
    return out


def status_text(status: str) -> Text:
    """A status in its colour (:data:`STATUS_STYLES`), escaped."""
    return Text(printable(status), style=STATUS_STYLES.get(status, ""))


def utc_time(ms: int) -> str:
    """``2026-09-21 12:00:00Z``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def relative_time(ms: int, now_ms: int) -> str:
    """:func:`ago` for an instant that has passed; for one to come ``in less than a minute``,
    ``in 5 minutes``, ``in 3 hours``, ``in 7 days`` (to the nearest unit), else the date."""
    if ms <= now_ms:
        return ago(ms, now_ms)
    seconds = (ms - now_ms) // 1000
    if seconds < 60:
        return "in less than a minute"
    if (minutes := (seconds + 30) // 60) < 60:
        return f"in {_count(minutes, 'minute')}"
    if (hours := (seconds + 1800) // 3600) < 48:
        return f"in {_count(hours, 'hour')}"
    if (days := (seconds + 43200) // 86400) < 30:
        return f"in {_count(days, 'day')}"
    return utc_time(ms)[:10]


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


def _columns() -> int | None:
    text = os.environ.get("COLUMNS", "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def make_console() -> Console:
    """A console for human output: no markup or highlighting (values are data, not markup),
    colour only on a terminal and never with ``NO_COLOR`` (rich's rules). Its width is
    ``COLUMNS`` when set, else the terminal's; output that goes elsewhere (a pipe, a file) is
    laid out at its natural width, so scripts get every value whole."""
    console = Console(highlight=False, markup=False, emoji=False, width=_WIDE)
    columns = _columns()
    if columns is not None:
        console.width = columns
    elif console.is_terminal:
        console.width = shutil.get_terminal_size().columns
    return console


@contextlib.contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner with ``message`` on stderr while the block runs, when stderr is a terminal;
    nothing otherwise."""
    console = Console(stderr=True, highlight=False, markup=False, emoji=False)
    if not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


FORMAT_OPTION = click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
"""``--format table|json`` into the command's ``output_format`` parameter."""
