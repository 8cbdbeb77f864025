"""The read side of the task registry: lookups, listing and the summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from clawline.errors import ClawlineError, InvalidField
from clawline.records.task import (
    FAILURE_STATUSES,
    RUNTIMES,
    TASK_STATUSES,
    TERMINAL_STATUSES,
    TaskEvent,
    TaskNotFound,
    TaskRecord,
)
from clawline.store.base import Store
from clawline.store.collab import TaskQuery
from clawline.store.cursor import CursorCodec
from clawline.tasks.fields import choice
from clawline.types import JSONObject

MAX_TASK_LIST_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class TaskList:
    tasks: list[TaskRecord]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class TaskSummary:
    total: int
    active: int
    terminal: int
    failures: int
    by_status: dict[str, int]
    by_runtime: dict[str, int]

    def to_json(self) -> JSONObject:
        return {
            "total": self.total,
            "active": self.active,
            "terminal": self.terminal,
            "failures": self.failures,
            "byStatus": dict(self.by_status),
            "byRuntime": dict(self.by_runtime),
        }


class TaskLookups:
    """Reads of tasks in :attr:`store`; the base of
    :class:`~clawline.tasks.registry.TaskRegistry`."""

    store: Store
    _codec: CursorCodec | None = None

    def get(self, task_id: str) -> TaskRecord | None:
        return self.store.tasks.get(task_id)

    def require(self, task_id: str) -> TaskRecord:
        task = self.store.tasks.get(task_id)
        if task is None:
            raise TaskNotFound(f"task not found: {task_id}")
        return task

    def by_run_id(self, run_id: str) -> TaskRecord | None:
        """The newest task of a run."""
        found = self.store.tasks.by_run_id(run_id)
        return found[0] if found else None

    def for_run(self, run_id: str) -> list[TaskRecord]:
        """Every task of a run id, newest first (run ids are unique within a session only)."""
        return self.store.tasks.by_run_id(run_id)

    def for_session(self, session_key: str, *, limit: int = 100) -> list[TaskRecord]:
        """Tasks a session requested or runs as the child, newest first."""
        return self.store.tasks.page(TaskQuery(session_key=session_key), None, limit).tasks

    def latest_for_session(self, session_key: str) -> TaskRecord | None:
        found = self.for_session(session_key, limit=1)
        return found[0] if found else None

    def for_owner(self, owner_key: str, *, limit: int = 100) -> list[TaskRecord]:
        return self.store.tasks.page(TaskQuery(owner_key=owner_key), None, limit).tasks

    def for_agent(self, agent_id: str, *, limit: int = 100) -> list[TaskRecord]:
        return self.store.tasks.page(TaskQuery(agent_id=agent_id), None, limit).tasks

    def for_flow(self, flow_id: str, *, limit: int = 100) -> list[TaskRecord]:
        return self.store.tasks.page(TaskQuery(parent_flow_id=flow_id), None, limit).tasks

    def resolve(
        self, token: str, *, canonical: Callable[[str], str] | None = None
    ) -> TaskRecord | None:
        """OpenClaw's lookup token: a task id, else a run id, else a session key (its newest
        task). ``canonical`` turns a session key alias (``main``) into the stored form; keys
        it refuses are looked up as given only."""
        token = token.strip()
        if not token:
            return None
        found = (
            self.store.tasks.get(token) or self.by_run_id(token) or self.latest_for_session(token)
        )
        if found is None and canonical is not None:
            try:
                key = canonical(token)
            except ClawlineError:
                return None
            if key != token:
                found = self.latest_for_session(key)
        return found

    def require_token(
        self, token: str, *, canonical: Callable[[str], str] | None = None
    ) -> TaskRecord:
        """:meth:`resolve`, or :class:`TaskNotFound` (``task not found: <token>``)."""
        task = self.resolve(token, canonical=canonical)
        if task is None:
            raise TaskNotFound(f"task not found: {token}")
        return task

    def events(self, task_id: str) -> list[TaskEvent]:
        return self.store.tasks.events(task_id)

    def _cursor_codec(self) -> CursorCodec:
        if self._codec is None:
            self._codec = CursorCodec(self.store.secret())
        return self._codec

    def list(
        self,
        *,
        status: str | None = None,
        runtime: str | None = None,
        owner_key: str | None = None,
        session_key: str | None = None,
        agent_id: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> TaskList:
        """One keyset page, newest first; ``cursor`` is the previous page's ``next_cursor``."""
        if status is not None:
            choice("status", status, TASK_STATUSES)
        if runtime is not None:
            choice("runtime", runtime, RUNTIMES)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise InvalidField(f"invalid limit (use an integer from 1 to {MAX_TASK_LIST_LIMIT})")
        if not 0 < limit <= MAX_TASK_LIST_LIMIT:
            raise InvalidField(f"invalid limit (use an integer from 1 to {MAX_TASK_LIST_LIMIT})")
        query = TaskQuery(
            status=status,
            runtime=runtime,
            owner_key=owner_key,
            session_key=session_key,
            agent_id=agent_id,
        )
        fingerprint = query.fingerprint()
        after = None if cursor is None else self._cursor_codec().decode(cursor, fingerprint)
        page = self.store.tasks.page(query, after, limit)
        following = (
            None if page.next is None else self._cursor_codec().encode(page.next, fingerprint)
        )
        return TaskList(tasks=page.tasks, next_cursor=following)

    def summary(self) -> TaskSummary:
        by_status = dict.fromkeys(TASK_STATUSES, 0)
        by_runtime = dict.fromkeys(RUNTIMES, 0)
        for (status, runtime), count in self.store.tasks.counts().items():
            by_status[status] = by_status.get(status, 0) + count
            by_runtime[runtime] = by_runtime.get(runtime, 0) + count
        total = sum(by_status.values())
        terminal = sum(count for s, count in by_status.items() if s in TERMINAL_STATUSES)
        return TaskSummary(
            total=total,
            active=total - terminal,
            terminal=terminal,
            failures=sum(count for s, count in by_status.items() if s in FAILURE_STATUSES),
            by_status=by_status,
            by_runtime=by_runtime,
        )
