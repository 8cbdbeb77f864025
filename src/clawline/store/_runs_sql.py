"""``store.runs`` and ``tx.runs`` in SQL shared by the backends (see :mod:`._dialect`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from clawline.errors import Conflict
from clawline.records.collab import SubagentRun
from clawline.store._changed_columns import KnownRows, update_changed
from clawline.store._dialect import RUN_COLUMNS, Dialect, Execute, run_from_row, run_params
from clawline.store._instances_sql import RUNNING_INSTANCES
from clawline.store.collab import RunReads, RunWrites

SPAWN_LOCK_CLASS = 0x636C7370
"""First key of the per-requester advisory lock of :meth:`RunWrites.count_active` ("clsp")."""

_SELECT = f"SELECT {', '.join(RUN_COLUMNS)} FROM subagent_runs"
_CONTROLLER = "coalesce(controller_session_key, requester_session_key)"
_COUNT_ACTIVE = (
    "SELECT count(*) FROM subagent_runs WHERE requester_session_key = ? AND ended_at IS NULL"
)
_HAS_PENDING = (
    "SELECT EXISTS (SELECT 1 FROM subagent_runs WHERE requester_session_key = ?"
    " AND ended_at IS NULL) OR EXISTS (SELECT 1 FROM announce_inbox"
    " WHERE requester_session_key = ? AND delivered_at IS NULL)"
)
_BY_SPAWN_KEY = f"{_SELECT} WHERE requester_session_key = ? AND spawn_key = ?"
_UNANSWERED = f"coalesce(instance_id, '') NOT IN ({RUNNING_INSTANCES})"


class _RunSql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _runs(self, statement: str, params: list[Any]) -> list[SubagentRun]:
        rows = self._execute(self._d.q(statement), params)
        return [run_from_row(row, self._d) for row in rows]


class SqlRunReads(_RunSql, RunReads):
    def get(self, run_id: str) -> SubagentRun | None:
        found = self._runs(f"{_SELECT} WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def by_child(self, child_session_key: str) -> list[SubagentRun]:
        return self._runs(
            f"{_SELECT} WHERE child_session_key = ? ORDER BY created_at DESC, run_id DESC",
            [child_session_key],
        )

    def for_requester(
        self, requester_session_key: str, *, active_only: bool = False
    ) -> list[SubagentRun]:
        active = " AND ended_at IS NULL" if active_only else ""
        return self._runs(
            f"{_SELECT} WHERE requester_session_key = ?{active} ORDER BY created_at, run_id",
            [requester_session_key],
        )

    def for_controller(
        self, controller_session_key: str, *, active_only: bool = False
    ) -> list[SubagentRun]:
        active = " AND ended_at IS NULL" if active_only else ""
        return self._runs(
            f"{_SELECT} WHERE {_CONTROLLER} = ?{active} ORDER BY created_at, run_id",
            [controller_session_key],
        )

    def count_active(self, requester_session_key: str) -> int:
        rows = self._execute(self._d.q(_COUNT_ACTIVE), [requester_session_key])
        return int(rows[0][0])

    def by_spawn_key(self, requester_session_key: str, spawn_key: str) -> SubagentRun | None:
        found = self._runs(_BY_SPAWN_KEY, [requester_session_key, spawn_key])
        return found[0] if found else None

    def active(self) -> list[SubagentRun]:
        return self._runs(f"{_SELECT} WHERE ended_at IS NULL ORDER BY created_at, run_id", [])

    def unanswered(self) -> list[SubagentRun]:
        return self._runs(
            f"{_SELECT} WHERE ended_at IS NULL AND {_UNANSWERED} ORDER BY created_at, run_id",
            [],
        )

    def orphaned_deferred(self, limit: int) -> list[SubagentRun]:
        return self._runs(
            f"{_SELECT} WHERE ended_at IS NULL AND deferred_outcome IS NOT NULL"
            f" AND {_UNANSWERED} ORDER BY created_at, run_id LIMIT ?",
            [limit],
        )

    def archive_due(self, now: int, limit: int) -> list[SubagentRun]:
        return self._runs(
            f"{_SELECT} WHERE archive_at_ms <= ? AND cleanup_completed_at IS NULL"
            " ORDER BY archive_at_ms, run_id LIMIT ?",
            [now, limit],
        )

    def cleaned_before(self, before: int, limit: int) -> list[SubagentRun]:
        return self._runs(
            f"{_SELECT} WHERE cleanup_completed_at <= ?"
            " ORDER BY cleanup_completed_at, run_id LIMIT ?",
            [before, limit],
        )


class SqlRunWrites(_RunSql, RunWrites):
    def __init__(self, execute: Execute, dialect: Dialect, instance_id: str | None) -> None:
        super().__init__(execute, dialect)
        self._instance_id = instance_id
        self._known = KnownRows()
        """Rows this transaction read or wrote, as stored (:data:`RUN_COLUMNS` order, JSON
        as the dialect writes it): :meth:`update` writes only what changed."""

    def _runs(self, statement: str, params: list[Any]) -> list[SubagentRun]:
        rows = self._execute(self._d.q(statement), params)
        for row in rows:
            self._known.remember(row[0], row)
        return [run_from_row(row, self._d) for row in rows]

    def get(self, run_id: str) -> SubagentRun | None:
        found = self._runs(f"{_SELECT} WHERE run_id = ?{self._d.for_update}", [run_id])
        return found[0] if found else None

    def insert(self, run: SubagentRun) -> None:
        if run.instance_id is None:
            run = replace(run, instance_id=self._instance_id)
        params = run_params(run, self._d)
        rows = self._execute(
            self._d.q(
                f"INSERT INTO subagent_runs ({', '.join(RUN_COLUMNS)})"
                f" VALUES ({self._d.marks(len(RUN_COLUMNS))})"
                " ON CONFLICT DO NOTHING RETURNING run_id"
            ),
            params,
        )
        if rows:
            self._known.remember(run.run_id, params)
            return
        if run.spawn_key is not None and self.get(run.run_id) is None:
            raise Conflict(f"subagent run already recorded for spawn key {run.spawn_key}")
        raise Conflict(f"subagent run already recorded: {run.run_id}")

    def update(self, run: SubagentRun) -> None:
        execute = self._execute
        update_changed(
            self._known,
            lambda statement, params: execute(self._d.q(statement), params),
            "subagent_runs",
            RUN_COLUMNS,
            run_params(run, self._d),
        )

    def adopt(self, run_id: str) -> bool:
        self._known.forget(run_id)
        rows = self._execute(
            self._d.q(
                "UPDATE subagent_runs SET instance_id = ?"
                f" WHERE run_id = ? AND ended_at IS NULL AND {_UNANSWERED} RETURNING run_id"
            ),
            [self._instance_id, run_id],
        )
        return bool(rows)

    def delete(self, run_id: str) -> bool:
        self._known.forget(run_id)
        rows = self._execute(
            self._d.q("DELETE FROM subagent_runs WHERE run_id = ? RETURNING run_id"), [run_id]
        )
        return bool(rows)

    def count_active(self, requester_session_key: str) -> int:
        self._d.lock(self._execute, SPAWN_LOCK_CLASS, requester_session_key)
        rows = self._execute(self._d.q(_COUNT_ACTIVE), [requester_session_key])
        return int(rows[0][0])

    def has_pending(self, requester_session_key: str) -> bool:
        rows = self._execute(self._d.q(_HAS_PENDING), [requester_session_key] * 2)
        return bool(rows[0][0])

    def by_spawn_key(self, requester_session_key: str, spawn_key: str) -> SubagentRun | None:
        found = self._runs(
            f"{_BY_SPAWN_KEY}{self._d.for_update}", [requester_session_key, spawn_key]
        )
        return found[0] if found else None
