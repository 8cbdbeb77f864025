"""Human views of sessions: the listing table and the ``sessions show`` text."""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from clawline.cli.backend import SessionDetail
from clawline.cli.fitted_table import Cell, Column, print_table
from clawline.cli.render import (
    ago,
    label_width,
    labelled_lines,
    printable,
    relative_time,
    sorted_json,
    status_text,
    utc_time,
)
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.types import JSON

SESSION_COLUMNS = (
    Column("KEY", squeeze=5),
    Column("TITLE", squeeze=4, max_width=40),
    Column("STATUS"),
    Column("DEPTH", fold=2, justify="right"),
    Column("PARENT", fold=1),
    Column("UPDATED", fold=3),
)
"""When too wide: fold ``PARENT``, ``DEPTH``, ``UPDATED``, then cut ``TITLE``, then ``KEY``."""
TABLE_COLUMNS = tuple(column.header for column in SESSION_COLUMNS)
_MAX_VALUE = 100
_MAX_CHILDREN = 10
_NONE = "-"
_EVENTS = "events:"


def print_sessions_table(console: Console, entries: Iterable[SessionEntry], now_ms: int) -> None:
    """One row per session: key, title (display name, else label), status, depth, parent and
    how long ago it was updated. Plain columns, no borders, so the output is easy to grep."""
    print_table(console, SESSION_COLUMNS, [_row(entry, now_ms) for entry in entries])


def _row(entry: SessionEntry, now_ms: int) -> tuple[Cell, ...]:
    lineage = entry.lineage
    return (
        printable(entry.key),
        printable(entry.display_name or entry.label or _NONE),
        status_text(entry.status or _NONE),
        str(lineage.depth),
        printable(lineage.parent or _NONE),
        ago(entry.updated_at, now_ms),
    )


def _when(ms: int | None, now_ms: int) -> str:
    return _NONE if ms is None else f"{utc_time(ms)} ({relative_time(ms, now_ms)})"


def _compact(value: JSON) -> str:
    text = json.dumps(sorted_json(value), ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _event_line(event: TranscriptEvent) -> str:
    data = _compact(dict(event.data))
    return f"#{event.seq}  {utc_time(event.ts)}  {printable(event.type)}  {printable(data)}"


def detail_lines(detail: SessionDetail, now_ms: int) -> list[tuple[str, str | None]]:
    """``(label, value)`` pairs, ``None`` for an absent value; a label ending in ``:`` starts a
    section, and in the ``events:`` section each value is a whole line."""
    entry = detail.entry
    lineage = entry.lineage
    pairs: list[tuple[str, str | None]] = [
        ("session:", ""),
        ("key", entry.key),
        ("session id", entry.session_id),
        ("agent", entry.agent_id),
        ("label", entry.label),
        ("display name", entry.display_name),
        ("status", entry.status),
        ("created", _when(entry.created_at, now_ms)),
        ("updated", _when(entry.updated_at, now_ms)),
        ("started", None if entry.started_at is None else _when(entry.started_at, now_ms)),
        ("ended", None if entry.ended_at is None else _when(entry.ended_at, now_ms)),
        ("lineage:", ""),
        ("parent", lineage.parent or _NONE),
        ("path", lineage.path_string),
        ("depth", str(lineage.depth)),
        ("root", lineage.root),
        ("trace id", entry.trace_id),
        ("spawned by", entry.spawned_by),
        ("spawn depth", None if entry.spawn_depth is None else str(entry.spawn_depth)),
        ("role", entry.subagent_role),
        ("control scope", entry.subagent_control_scope),
        ("workspace", entry.spawned_workspace_dir),
        ("cwd", entry.spawned_cwd),
        ("children", str(len(detail.children))),
    ]
    for index, child in enumerate(detail.children[:_MAX_CHILDREN]):
        pairs.append(("" if index else "child keys", child))
    if len(detail.children) > _MAX_CHILDREN:
        pairs.append(("", f"… and {len(detail.children) - _MAX_CHILDREN} more"))
    other = {
        **entry.extra,
        **({"pluginExtensions": entry.plugin_extensions} if entry.plugin_extensions else {}),
    }
    if other:
        pairs.append(("other fields:", ""))
        pairs.extend((name, _compact(other[name])) for name in sorted(other))
    pairs.append((_EVENTS, "" if detail.events else "none"))
    pairs.extend(("", _event_line(event)) for event in detail.events)
    return pairs


Section = tuple[str, str | None, list[tuple[str, str | None]]]


def _sections(pairs: list[tuple[str, str | None]]) -> list[Section]:
    sections: list[Section] = []
    for name, value in pairs:
        if name.endswith(":"):
            sections.append((name, value, []))
        else:
            sections[-1][2].append((name, value))
    return sections


def print_detail(console: Console, detail: SessionDetail, now_ms: int) -> None:
    """The ``detail_lines`` by section, every section's values in one column."""
    sections = _sections(detail_lines(detail, now_ms))
    width = label_width(
        pair for heading, _, pairs in sections if heading != _EVENTS for pair in pairs
    )
    for heading, note, pairs in sections:
        console.print(Text(f"{heading} {note or ''}".rstrip(), style="bold"), soft_wrap=True)
        if heading == _EVENTS:
            body = [f"  {line}" for _, line in pairs if line is not None]
        else:
            body = labelled_lines(pairs, indent="  ", width=width)
        for line in body:
            console.print(Text(line), soft_wrap=True)
