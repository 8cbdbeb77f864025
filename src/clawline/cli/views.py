"""Human views of sessions: the listing table and the ``sessions show`` text."""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from clawline.cli.backend import SessionDetail
from clawline.cli.render import ago, printable, sorted_json, utc_time
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.types import JSON

TABLE_COLUMNS = ("KEY", "TITLE", "STATUS", "DEPTH", "PARENT", "UPDATED")
_MAX_TITLE = 40
_MAX_VALUE = 100
_MAX_CHILDREN = 10
_NONE = "-"


def sessions_table(entries: Iterable[SessionEntry], now_ms: int) -> Table:
    """One row per session: key, title (display name, else label), status, depth, parent and
    how long ago it was updated. Plain columns, no borders, so the output is easy to grep."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for name in TABLE_COLUMNS:
        table.add_column(
            name,
            no_wrap=True,
            overflow="ellipsis",
            justify="right" if name == "DEPTH" else "left",
            max_width=_MAX_TITLE if name == "TITLE" else None,
        )
    for entry in entries:
        table.add_row(*_row(entry, now_ms))
    return table


def _row(entry: SessionEntry, now_ms: int) -> tuple[str, ...]:
    lineage = entry.lineage
    return (
        printable(entry.key),
        printable(entry.display_name or entry.label or _NONE),
        printable(entry.status or _NONE),
        str(lineage.depth),
        printable(lineage.parent or _NONE),
        ago(entry.updated_at, now_ms),
    )


def _when(ms: int | None, now_ms: int) -> str:
    return _NONE if ms is None else f"{utc_time(ms)} ({ago(ms, now_ms)})"


def _compact(value: JSON) -> str:
    text = json.dumps(sorted_json(value), ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _event_line(event: TranscriptEvent) -> str:
    data = _compact(dict(event.data))
    return f"#{event.seq}  {utc_time(event.ts)}  {printable(event.type)}  {printable(data)}"


def detail_lines(detail: SessionDetail, now_ms: int) -> list[tuple[str, str]]:
    """``(label, value)`` pairs; a label ending in ``:`` starts a section."""
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
    shown = [(name, value) for name, value in pairs if value is not None]
    for index, child in enumerate(detail.children[:_MAX_CHILDREN]):
        shown.append(("" if index else "child keys", child))
    if len(detail.children) > _MAX_CHILDREN:
        shown.append(("", f"… and {len(detail.children) - _MAX_CHILDREN} more"))
    other = {
        **entry.extra,
        **({"pluginExtensions": entry.plugin_extensions} if entry.plugin_extensions else {}),
    }
    if other:
        shown.append(("other fields:", ""))
        shown.extend((name, _compact(other[name])) for name in sorted(other))
    shown.append(("events:", "" if detail.events else "none"))
    shown.extend(("", _event_line(event)) for event in detail.events)
    return shown


def print_detail(console: Console, detail: SessionDetail, now_ms: int) -> None:
    for name, value in detail_lines(detail, now_ms):
        if name.endswith(":"):
            console.print(Text(f"{name} {value}".rstrip(), style="bold"), soft_wrap=True)
        else:
            console.print(Text(f"  {name:<14}{printable(value)}"), soft_wrap=True)
