"""``clawline tasks …``: list, show and cancel tasks of the task registry.

Through a running gateway when one is configured (``tasks.list|get|cancel``), else straight
from the store; ``--local`` forces the store. Only a gateway can abort a task's live run: a
local ``cancel`` marks the task cancelled and says so. JSON shapes are in docs/tasks.md.
"""

from __future__ import annotations

import click
from rich.text import Text

from clawline.cli.fitted_table import Cell, Column, print_table
from clawline.cli.render import (
    ago,
    dump_json,
    labelled_lines,
    make_console,
    printable,
    relative_time,
    status_text,
    utc_time,
)
from clawline.cli.root import CliState, pass_state
from clawline.cli.tasks_backend import TaskDetail, TasksBackend, open_tasks_backend
from clawline.records.task import RUNTIMES, TASK_STATUSES, TaskRecord
from clawline.tasks.lookups import MAX_TASK_LIST_LIMIT
from clawline.types import JSON, JSONObject

TASK_COLUMNS = (
    Column("TASK ID", squeeze=5),
    Column("RUNTIME", fold=3),
    Column("STATUS"),
    Column("LABEL", squeeze=4, max_width=40),
    Column("OWNER", fold=2),
    Column("CHILD", fold=1),
    Column("CREATED"),
)
"""When too wide: fold ``CHILD``, ``OWNER``, ``RUNTIME``, then cut ``LABEL``, then ``TASK ID``."""
TASK_TABLE_COLUMNS = tuple(column.header for column in TASK_COLUMNS)
_NONE = "-"


def _backend(state: CliState) -> TasksBackend:
    backend = open_tasks_backend(state)
    click.get_current_context().call_on_close(backend.close)
    return backend


@click.group()
def tasks() -> None:
    """Inspect and cancel tasks (sub-agent, ACP, CLI and cron work)."""


def _title(task: TaskRecord) -> str:
    """The label, else the first line of the task text."""
    lines = task.task.strip().splitlines()
    return task.label or (lines[0] if lines else _NONE)


def _row(task: TaskRecord, now_ms: int) -> tuple[Cell, ...]:
    return (
        task.task_id,
        task.runtime,
        status_text(task.status),
        printable(_title(task)),
        printable(task.owner_key or _NONE),
        printable(task.child_session_key or _NONE),
        ago(task.created_at, now_ms),
    )


@tasks.command("list")
@click.option("--status", type=click.Choice(TASK_STATUSES), help="Only tasks in this status.")
@click.option("--runtime", type=click.Choice(RUNTIMES), help="Only tasks of this runtime.")
@click.option("--owner", "owner_key", metavar="KEY", help="Only tasks owned by KEY.")
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_TASK_LIST_LIMIT),
    default=100,
    show_default=True,
    help="Rows per page.",
)
@click.option("--cursor", metavar="C", help="Continue after a previous page (its nextCursor).")
@click.option("--all", "walk_all", is_flag=True, help="Walk every page.")
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@pass_state
def list_tasks(
    state: CliState,
    status: str | None,
    runtime: str | None,
    owner_key: str | None,
    limit: int,
    cursor: str | None,
    walk_all: bool,
    output: str,
) -> None:
    """List tasks, newest first."""
    backend = _backend(state)
    records: list[TaskRecord] = []
    while True:
        page = backend.list_page(
            status=status, runtime=runtime, owner_key=owner_key, limit=limit, cursor=cursor
        )
        records.extend(page.tasks)
        cursor = page.next_cursor
        if not walk_all or cursor is None:
            break
    if output == "json":
        rows: list[JSON] = [task.to_json() for task in records]
        envelope: JSONObject = {"tasks": rows, "count": len(rows), "nextCursor": cursor}
        click.echo(dump_json(envelope))
        return
    console = make_console()
    if records:
        now = state.clock.now_ms()
        print_table(console, TASK_COLUMNS, [_row(task, now) for task in records])
    else:
        console.print("no tasks")
    if cursor is not None:
        click.echo(f"more tasks: repeat with --cursor {cursor} (or use --all)", err=True)


def _when(ms: int | None, now_ms: int) -> str | None:
    return None if ms is None else f"{utc_time(ms)} ({relative_time(ms, now_ms)})"


def _detail_lines(detail: TaskDetail, now_ms: int) -> list[tuple[str, str | None]]:
    task = detail.task
    pairs: list[tuple[str, str | None]] = [
        ("task id", task.task_id),
        ("runtime", task.runtime),
        ("kind", task.task_kind),
        ("status", task.status),
        ("delivery", task.delivery_status),
        ("notify", task.notify_policy),
        ("label", task.label),
        ("task", task.task),
        ("requester", task.requester_session_key or None),
        ("owner", task.owner_key or None),
        ("scope", task.scope_kind),
        ("child", task.child_session_key),
        ("agent", task.agent_id),
        ("run id", task.run_id),
        ("source id", task.source_id),
        ("parent flow", task.parent_flow_id),
        ("parent task", task.parent_task_id),
        ("created", _when(task.created_at, now_ms)),
        ("started", _when(task.started_at, now_ms)),
        ("ended", _when(task.ended_at, now_ms)),
        ("last event", _when(task.last_event_at, now_ms)),
        ("cleanup after", _when(task.cleanup_after, now_ms)),
        ("progress", task.progress_summary),
        ("summary", task.terminal_summary),
        ("outcome", task.terminal_outcome),
        ("error", task.error),
    ]
    return pairs


@tasks.command("show")
@click.argument("token", metavar="ID_OR_RUN_OR_SESSION")
@click.option(
    "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@pass_state
def show_task(state: CliState, token: str, output: str) -> None:
    """Show one task and its history: by task id, else run id, else session key (its newest
    task)."""
    detail = _backend(state).show(token)
    if output == "json":
        events: list[JSON] = [event.to_json() for event in detail.events]
        click.echo(dump_json({"task": detail.task.to_json(), "events": events}))
        return
    console = make_console()
    now = state.clock.now_ms()
    for line in labelled_lines(_detail_lines(detail, now)):
        console.print(Text(line), soft_wrap=True)
    console.print(Text("events:" if detail.events else "events: none", style="bold"))
    for event in detail.events:
        summary = f"  {printable(event.summary)}" if event.summary else ""
        console.print(Text(f"  {utc_time(event.at)}  {event.kind}{summary}"), soft_wrap=True)


@tasks.command("cancel")
@click.argument("task_id", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why (kept as the task's summary).")
@pass_state
def cancel_task(state: CliState, task_id: str, reason: str | None) -> None:
    """Cancel a queued or running task (and, through a gateway, abort its run)."""
    result = _backend(state).cancel(task_id, reason)
    click.echo(f"cancelled {result.task.task_id}")
    for run_id in result.run_ids:
        click.echo(f"aborted run {run_id}")
    if result.local and result.task.run_id:
        click.echo(
            f"note: run {result.task.run_id} was not aborted (only a gateway can abort runs)",
            err=True,
        )
