"""``store.tasks`` and ``tx.tasks`` in SQL shared by the backends (see :mod:`._dialect`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawline.errors import Conflict
from clawline.records.task import TERMINAL_STATUSES, TaskEvent, TaskRecord
from clawline.store._changed_columns import KnownRows, update_changed
from clawline.store._dialect import TASK_COLUMNS, Dialect, Execute, task_from_row, task_params
from clawline.store.collab import TaskPage, TaskQuery, TaskReads, TaskWrites
from clawline.store.cursor import Position

DEDUPE_LOCK_CLASS = 0x636C746B
"""First key of the advisory lock taken while looking for a duplicate task ("cltk")."""

_SELECT = f"SELECT {', '.join(TASK_COLUMNS)} FROM tasks"
_ORDER = "ORDER BY created_at DESC, task_id DESC"
_TERMINAL = ", ".join(f"'{status}'" for status in sorted(TERMINAL_STATUSES))
_BACKING = (
    "coalesce(tasks.child_session_key,"
    " CASE WHEN tasks.scope_kind = 'session' AND tasks.requester_session_key <> ''"
    " THEN tasks.requester_session_key END)"
)
"""The session a task depends on (:attr:`TaskRecord.backing_session_key`)."""


def _where(query: TaskQuery) -> tuple[list[str], list[Any]]:
    conditions: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("status", query.status),
        ("runtime", query.runtime),
        ("owner_key", query.owner_key),
        ("agent_id", query.agent_id),
        ("parent_flow_id", query.parent_flow_id),
    ):
        if value is not None:
            conditions.append(f"{column} = ?")
            params.append(value)
    if query.session_key is not None:
        conditions.append("(requester_session_key = ? OR child_session_key = ?)")
        params.extend([query.session_key, query.session_key])
    return conditions, params


class SqlTaskReads(TaskReads):
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _tasks(self, statement: str, params: list[Any]) -> list[TaskRecord]:
        return [task_from_row(row) for row in self._execute(self._d.q(statement), params)]

    def get(self, task_id: str) -> TaskRecord | None:
        found = self._tasks(f"{_SELECT} WHERE task_id = ?", [task_id])
        return found[0] if found else None

    def by_run_id(self, run_id: str) -> list[TaskRecord]:
        return self._tasks(f"{_SELECT} WHERE run_id = ? {_ORDER}", [run_id])

    def page(self, query: TaskQuery, after: Position | None, limit: int) -> TaskPage:
        conditions, params = _where(query)
        if after is not None:
            conditions.append("(created_at, task_id) < (?, ?)")
            params.extend([after.updated_at, after.key])
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        tasks = self._tasks(f"{_SELECT}{where} {_ORDER} LIMIT ?", [*params, limit + 1])
        following = None
        if len(tasks) > limit:
            tasks = tasks[:limit]
            following = Position(tasks[-1].created_at, tasks[-1].task_id) if tasks else None
        return TaskPage(tasks=tasks, next=following)

    def counts(self) -> dict[tuple[str, str], int]:
        rows = self._execute(
            "SELECT status, runtime, count(*) FROM tasks GROUP BY status, runtime", []
        )
        return {(status, runtime): int(count) for status, runtime, count in rows}

    def events(self, task_id: str) -> list[TaskEvent]:
        rows = self._execute(
            self._d.q(
                "SELECT task_id, seq, at, kind, summary FROM task_events"
                " WHERE task_id = ? ORDER BY seq"
            ),
            [task_id],
        )
        return [TaskEvent(*row) for row in rows]

    def orphaned(self, idle_since: int, limit: int) -> list[TaskRecord]:
        return self._tasks(
            f"{_SELECT} WHERE status IN ('queued', 'running')"
            " AND coalesce(last_event_at, started_at, created_at) <= ?"
            f" AND {_BACKING} IS NOT NULL"
            f" AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.key = {_BACKING})"
            " ORDER BY created_at, task_id LIMIT ?",
            [idle_since, limit],
        )


class SqlTaskWrites(TaskWrites):
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect
        self._known = KnownRows()
        """Rows this transaction read or wrote (their values are the row's columns, in
        :data:`TASK_COLUMNS` order): :meth:`update` writes only what changed."""

    def _rows(self, statement: str, params: list[Any]) -> list[Any]:
        return self._execute(self._d.q(statement), params)

    def _read(self, row: Sequence[Any]) -> TaskRecord:
        self._known.remember(row[0], row)
        return task_from_row(row)

    def get(self, task_id: str) -> TaskRecord | None:
        rows = self._rows(f"{_SELECT} WHERE task_id = ?{self._d.for_update}", [task_id])
        return self._read(rows[0]) if rows else None

    def get_many(self, task_ids: Sequence[str]) -> dict[str, TaskRecord]:
        unique = list(dict.fromkeys(task_ids))
        if not unique:
            return {}
        rows = self._rows(
            f"{_SELECT} WHERE task_id IN ({self._d.marks(len(unique))})"
            f" ORDER BY task_id{self._d.for_update}",
            unique,
        )
        return {task.task_id: task for task in map(self._read, rows)}

    def find_duplicate(self, task: TaskRecord) -> TaskRecord | None:
        identity = (
            task.runtime,
            task.owner_key,
            task.child_session_key,
            task.run_id,
            task.label,
            task.task,
        )
        self._d.lock(self._execute, DEDUPE_LOCK_CLASS, repr(identity))
        same = self._d.same
        rows = self._rows(
            f"{_SELECT} WHERE runtime = ? AND owner_key = ? AND child_session_key {same} ?"
            f" AND run_id {same} ? AND label {same} ? AND task = ? {_ORDER} LIMIT 1",
            list(identity),
        )
        return self._read(rows[0]) if rows else None

    def insert(self, task: TaskRecord) -> None:
        params = task_params(task)
        rows = self._rows(
            f"INSERT INTO tasks ({', '.join(TASK_COLUMNS)})"
            f" VALUES ({self._d.marks(len(TASK_COLUMNS))})"
            " ON CONFLICT (task_id) DO NOTHING RETURNING task_id",
            params,
        )
        if not rows:
            raise Conflict(f"task already exists: {task.task_id}")
        self._known.remember(task.task_id, params)

    def update(self, task: TaskRecord) -> None:
        update_changed(self._known, self._rows, "tasks", TASK_COLUMNS, task_params(task))

    def set_delivery_many(self, task_ids: Sequence[str], delivery_status: str) -> None:
        unique = list(dict.fromkeys(task_ids))
        for task_id in unique:
            self._known.forget(task_id)
        if unique:
            self._rows(
                "UPDATE tasks SET delivery_status = ?"
                f" WHERE task_id IN ({self._d.marks(len(unique))})",
                [delivery_status, *unique],
            )

    def delete(self, task_id: str) -> bool:
        self._known.forget(task_id)
        return bool(self._rows("DELETE FROM tasks WHERE task_id = ? RETURNING task_id", [task_id]))

    def delete_expired(self, now: int, limit: int) -> list[str]:
        self._known.forget()
        rows = self._rows(
            "DELETE FROM tasks WHERE task_id IN (SELECT task_id FROM tasks"
            f" WHERE cleanup_after <= ? AND status IN ({_TERMINAL})"
            " ORDER BY cleanup_after, task_id LIMIT ?) RETURNING task_id",
            [now, limit],
        )
        return sorted(row[0] for row in rows)

    def add_event(self, task_id: str, at: int, kind: str, summary: str | None) -> TaskEvent:
        rows = self._rows(
            "INSERT INTO task_events (task_id, seq, at, kind, summary)"
            " SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM task_events WHERE task_id = ?"
            " RETURNING seq",
            [task_id, at, kind, summary, task_id],
        )
        return TaskEvent(task_id=task_id, seq=int(rows[0][0]), at=at, kind=kind, summary=summary)
