"""What the collaboration SQL needs to know about a backend, and the row mappings of the
collaboration tables.

The SQL of tasks, runs, the inbox and bindings is written once (``_tasks_sql``, ``_runs_sql``,
``_inbox_sql``, ``_bindings_sql``) with ``?`` placeholders; a :class:`Dialect` supplies the
differences: placeholder style (translated for PostgreSQL by :mod:`clawline.store._placeholders`,
which leaves quoted text, comments and the jsonb operators alone), row locks, null-safe
equality, JSON and boolean conversion, and advisory locks. Statements run through an
:data:`Execute` function: the store's reader for reads, the transaction's cursor for writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from clawline.errors import InvalidField
from clawline.records.collab import FROZEN_RESULT_MAX_BYTES, InboxItem, SubagentRun, ThreadBinding
from clawline.records.task import TaskRecord
from clawline.store._placeholders import to_pyformat

Execute = Callable[[str, Sequence[Any]], list[Any]]
"""Run one statement; its rows (``[]`` for a statement that returns none)."""

Lock = Callable[[Execute, int, str], None]
"""Take a transaction-level lock on ``(class, name)`` (a no-op where writers are serialised)."""


def _no_lock(execute: Execute, lock_class: int, name: str) -> None:
    """SQLite serialises write transactions as a whole (``BEGIN IMMEDIATE``)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    placeholder: str
    """``"?"`` (statements run as written) or ``"%s"`` (psycopg)."""
    for_update: str
    """Appended to a locking ``SELECT`` (``""`` where the transaction already excludes others)."""
    same: str
    """Null-safe equality operator."""
    json_in: Callable[[Any], Any]
    json_out: Callable[[Any], Any]
    lock: Lock = _no_lock
    skip_locked: str = ""
    """Appended to a claiming ``SELECT``: skip rows another transaction holds (``""`` where
    one writer at a time is all there is)."""

    def q(self, statement: str) -> str:
        """``statement`` (written with ``?``) in this backend's placeholder style."""
        return statement if self.placeholder == "?" else to_pyformat(statement)

    def marks(self, count: int) -> str:
        return ", ".join("?" for _ in range(count))


# --- tasks ------------------------------------------------------------------------------------

TASK_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(TaskRecord))


def task_from_row(row: Sequence[Any]) -> TaskRecord:
    return TaskRecord(**dict(zip(TASK_COLUMNS, row, strict=True)))


def task_params(task: TaskRecord) -> list[Any]:
    return [getattr(task, column) for column in TASK_COLUMNS]


# --- sub-agent runs ---------------------------------------------------------------------------

RUN_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(SubagentRun))
_RUN_JSON = ("requester_origin", "outcome", "deferred_outcome")


def run_from_row(row: Sequence[Any], dialect: Dialect) -> SubagentRun:
    values = dict(zip(RUN_COLUMNS, row, strict=True))
    for name in _RUN_JSON:
        if values[name] is not None:
            values[name] = dialect.json_out(values[name])
    expects = values["expects_completion_message"]
    values["expects_completion_message"] = None if expects is None else bool(expects)
    return SubagentRun(**values)


def run_params(run: SubagentRun, dialect: Dialect) -> list[Any]:
    text = run.frozen_result_text
    if text is not None and len(text.encode()) > FROZEN_RESULT_MAX_BYTES:
        raise InvalidField(
            f"frozenResultText is longer than {FROZEN_RESULT_MAX_BYTES} bytes (run {run.run_id})"
        )
    values = []
    for column in RUN_COLUMNS:
        value = getattr(run, column)
        if column in _RUN_JSON and value is not None:
            value = dialect.json_in(dict(value))
        values.append(value)
    return values


# --- announce inbox ---------------------------------------------------------------------------

INBOX_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(InboxItem))


def inbox_from_row(row: Sequence[Any], dialect: Dialect) -> InboxItem:
    values = dict(zip(INBOX_COLUMNS, row, strict=True))
    values["payload"] = dialect.json_out(values["payload"])
    return InboxItem(**values)


# --- thread bindings --------------------------------------------------------------------------

BINDING_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(ThreadBinding))


def binding_from_row(row: Sequence[Any]) -> ThreadBinding:
    return ThreadBinding(**dict(zip(BINDING_COLUMNS, row, strict=True)))


def binding_params(binding: ThreadBinding) -> list[Any]:
    """Every column but ``id`` (the store assigns it)."""
    return [getattr(binding, column) for column in BINDING_COLUMNS if column != "id"]
