"""The store interface of the collaboration tables: tasks, sub-agent runs, the announce inbox
and thread bindings.

Every backend exposes four read objects on the :class:`~clawline.store.base.Store`
(``store.tasks``, ``store.runs``, ``store.inbox``, ``store.bindings``) and four write objects on
each :class:`~clawline.store.base.StoreTransaction` (``tx.tasks``, ``tx.runs``, ``tx.inbox``,
``tx.bindings``), bound to the transaction's connection. Writes that belong together (a child's
run ending: run record, task status and inbox row) therefore commit or roll back together, with
session and transcript writes too.

Like the session tables, these objects know SQL and indexes, not rules: the task registry
(:mod:`clawline.tasks.registry`) and the collaboration services validate and decide.

A :class:`~clawline.errors.Conflict` raised by a write (a duplicate id, a conversation already
bound) leaves the transaction usable: conflicting inserts are ``ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

import abc
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from clawline.records.collab import InboxItem, SubagentRun, ThreadBinding
from clawline.records.task import TaskEvent, TaskRecord
from clawline.store.cursor import Position
from clawline.types import JSONObject


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """Filters of a task listing (all optional, combined with AND).

    ``session_key`` matches the requester or the child session.
    """

    status: str | None = None
    runtime: str | None = None
    owner_key: str | None = None
    session_key: str | None = None
    agent_id: str | None = None
    parent_flow_id: str | None = None

    def fingerprint(self) -> str:
        """A short digest binding a cursor to these filters (and to task listings)."""
        text = json.dumps({"tasks": asdict(self)}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class TaskPage:
    """Tasks newest first (``createdAt desc, taskId desc``); ``next`` is where the following
    page starts: ``Position(updated_at=<createdAt>, key=<taskId>)`` of the last task."""

    tasks: list[TaskRecord]
    next: Position | None


# --- tasks ---------------------------------------------------------------------------------


class TaskReads(abc.ABC):
    """``store.tasks``."""

    @abc.abstractmethod
    def get(self, task_id: str) -> TaskRecord | None: ...

    @abc.abstractmethod
    def by_run_id(self, run_id: str) -> list[TaskRecord]:
        """Tasks of a run, newest first."""

    @abc.abstractmethod
    def page(self, query: TaskQuery, after: Position | None, limit: int) -> TaskPage:
        """Up to ``limit`` tasks strictly after ``after``, newest first."""

    @abc.abstractmethod
    def counts(self) -> dict[tuple[str, str], int]:
        """``(status, runtime) -> number of tasks`` (one grouped query)."""

    @abc.abstractmethod
    def events(self, task_id: str) -> list[TaskEvent]:
        """The task's history in order (``seq`` ascending)."""

    @abc.abstractmethod
    def orphaned(self, idle_since: int, limit: int) -> list[TaskRecord]:
        """Queued or running tasks whose backing session (child, else for session-scoped tasks
        the requester) is not in the session table and whose last activity (``lastEventAt``,
        else ``startedAt``, else ``createdAt``) is at or before ``idle_since``; oldest first."""


class TaskWrites(abc.ABC):
    """``tx.tasks``."""

    @abc.abstractmethod
    def get(self, task_id: str) -> TaskRecord | None:
        """The task, locked for update until the transaction ends."""

    @abc.abstractmethod
    def get_many(self, task_ids: Sequence[str]) -> dict[str, TaskRecord]:
        """The tasks found of ``task_ids`` by id (one statement), locked like :meth:`get`."""

    @abc.abstractmethod
    def find_duplicate(self, task: TaskRecord) -> TaskRecord | None:
        """The newest stored task with ``task``'s runtime, owner, child, run id, label and task
        text (``None`` matches ``None``). Serialises creators of the same task across
        processes until the transaction ends."""

    @abc.abstractmethod
    def insert(self, task: TaskRecord) -> None:
        """Raises :class:`~clawline.errors.Conflict` when the id is taken."""

    @abc.abstractmethod
    def update(self, task: TaskRecord) -> None: ...

    @abc.abstractmethod
    def set_delivery_many(self, task_ids: Sequence[str], delivery_status: str) -> None:
        """Set the ``deliveryStatus`` of the tasks ``task_ids`` (one statement)."""

    @abc.abstractmethod
    def delete(self, task_id: str) -> bool:
        """Delete the task and its events."""

    @abc.abstractmethod
    def delete_expired(self, now: int, limit: int) -> list[str]:
        """Delete up to ``limit`` terminal tasks with ``cleanupAfter <= now`` (oldest first) and
        their events; return their ids."""

    @abc.abstractmethod
    def add_event(self, task_id: str, at: int, kind: str, summary: str | None) -> TaskEvent:
        """Append to the task's history with the next per-task ``seq`` (from 1)."""


# --- sub-agent runs -------------------------------------------------------------------------


class RunReads(abc.ABC):
    """``store.runs``."""

    @abc.abstractmethod
    def get(self, run_id: str) -> SubagentRun | None: ...

    @abc.abstractmethod
    def by_child(self, child_session_key: str) -> list[SubagentRun]:
        """Runs of one child session, newest first."""

    @abc.abstractmethod
    def for_requester(
        self, requester_session_key: str, *, active_only: bool = False
    ) -> list[SubagentRun]:
        """Runs a session spawned, oldest first; ``active_only``: not yet ended."""

    @abc.abstractmethod
    def for_controller(
        self, controller_session_key: str, *, active_only: bool = False
    ) -> list[SubagentRun]:
        """Runs a session controls (its own ``controllerSessionKey``, else its requester's),
        oldest first."""

    @abc.abstractmethod
    def count_active(self, requester_session_key: str) -> int:
        """How many runs of this requester have not ended (one index-only query)."""

    @abc.abstractmethod
    def by_spawn_key(self, requester_session_key: str, spawn_key: str) -> SubagentRun | None:
        """The run this requester's spawn with ``spawn_key`` recorded, ended or not."""

    @abc.abstractmethod
    def active(self) -> list[SubagentRun]:
        """Every run that has not ended, oldest first."""

    @abc.abstractmethod
    def unanswered(self) -> list[SubagentRun]:
        """Every run that has not ended and that no running gateway instance answers for
        (:mod:`clawline.instances`), oldest first (recovery)."""

    @abc.abstractmethod
    def orphaned_deferred(self, limit: int) -> list[SubagentRun]:
        """Up to ``limit`` deferred orchestrators' records (active, with a
        ``deferred_outcome``) that no running instance answers for, oldest first."""

    @abc.abstractmethod
    def archive_due(self, now: int, limit: int) -> list[SubagentRun]:
        """Runs with ``archiveAtMs <= now`` whose cleanup has not completed, due first."""

    @abc.abstractmethod
    def cleaned_before(self, before: int, limit: int) -> list[SubagentRun]:
        """Runs whose cleanup completed at or before ``before``, oldest first."""


class RunWrites(abc.ABC):
    """``tx.runs``."""

    @abc.abstractmethod
    def get(self, run_id: str) -> SubagentRun | None:
        """The run, locked for update until the transaction ends."""

    @abc.abstractmethod
    def insert(self, run: SubagentRun) -> None:
        """Raises :class:`~clawline.errors.Conflict` for a run id already recorded (or a
        ``spawn_key`` its requester already used) and :class:`~clawline.errors.InvalidField`
        for a ``frozenResultText`` over 100 KiB."""

    @abc.abstractmethod
    def update(self, run: SubagentRun) -> None:
        """Rewrite the run (found by ``run_id``); same limits as :meth:`insert`."""

    @abc.abstractmethod
    def delete(self, run_id: str) -> bool: ...

    @abc.abstractmethod
    def count_active(self, requester_session_key: str) -> int:
        """Like :meth:`RunReads.count_active`, and serialises this requester's spawns across
        processes until the transaction ends, so a limit check and the insert that follows it
        cannot race. Take it at the same point in every transaction (e.g. first)."""

    @abc.abstractmethod
    def has_pending(self, requester_session_key: str) -> bool:
        """Whether the requester has an active child run or an undelivered inbox row (one
        statement: a finishing orchestrator looks before its record may end)."""

    @abc.abstractmethod
    def adopt(self, run_id: str) -> bool:
        """Make this transaction's instance answer for the active record ``run_id`` if no
        running instance does; whether it does now (of concurrent adopters, one wins)."""

    @abc.abstractmethod
    def by_spawn_key(self, requester_session_key: str, spawn_key: str) -> SubagentRun | None:
        """Like :meth:`RunReads.by_spawn_key`, the run locked for update. After
        :meth:`count_active` it sees every spawn of the requester committed before."""


# --- announce inbox -------------------------------------------------------------------------


class InboxReads(abc.ABC):
    """``store.inbox``."""

    @abc.abstractmethod
    def get(self, item_id: int) -> InboxItem | None: ...

    @abc.abstractmethod
    def by_run(self, run_id: str) -> InboxItem | None: ...

    @abc.abstractmethod
    def pending_for(self, requester_session_key: str) -> list[InboxItem]:
        """Undelivered rows of one requester, in ``id`` order."""

    @abc.abstractmethod
    def requesters_with_pending(self) -> list[str]:
        """Requesters with undelivered rows, the one waiting longest first."""

    @abc.abstractmethod
    def delivered_since(self, since: int, limit: int) -> list[InboxItem]:
        """Rows delivered into a transcript (``delivery_seq`` set) at or after ``since``, in
        ``id`` order, at most ``limit``."""


class InboxWrites(abc.ABC):
    """``tx.inbox``."""

    @abc.abstractmethod
    def add(
        self,
        *,
        requester_session_key: str,
        child_session_key: str,
        run_id: str,
        status: str,
        payload: JSONObject,
        created_at: int,
        task_id: str | None = None,
    ) -> InboxItem | None:
        """Record a completion; ``None`` (and nothing written) when the run already has one."""

    @abc.abstractmethod
    def pending_for(self, requester_session_key: str) -> list[InboxItem]:
        """Undelivered rows of one requester in ``id`` order, locked until the transaction
        ends: a concurrent dispatcher waits, then no longer sees them if they were marked."""

    @abc.abstractmethod
    def mark_delivered(
        self, item_ids: Sequence[int], at: int, delivery_seq: int | None = None
    ) -> list[int]:
        """Mark the rows among ``item_ids`` that are still undelivered; return those ids
        (ascending). Two transactions never both mark one row."""

    @abc.abstractmethod
    def retarget(self, item_ids: Sequence[int], requester_session_key: str) -> int:
        """Give undelivered rows another requester (the original one is gone)."""

    @abc.abstractmethod
    def prune_delivered(self, before: int, limit: int) -> int:
        """Delete up to ``limit`` rows delivered before ``before``; return how many."""


# --- thread bindings ------------------------------------------------------------------------


class BindingReads(abc.ABC):
    """``store.bindings``."""

    @abc.abstractmethod
    def get(self, binding_id: int) -> ThreadBinding | None: ...

    @abc.abstractmethod
    def active(self, channel: str, account_id: str, conversation_id: str) -> ThreadBinding | None:
        """The conversation's active binding."""

    @abc.abstractmethod
    def for_session(self, session_key: str, *, active_only: bool = True) -> list[ThreadBinding]:
        """Bindings of a session, newest first."""

    @abc.abstractmethod
    def active_for_sessions(self, session_keys: Sequence[str]) -> dict[str, list[ThreadBinding]]:
        """The active bindings of each of ``session_keys`` that has any, newest first."""

    @abc.abstractmethod
    def expiring(self, before: int, limit: int) -> list[ThreadBinding]:
        """Active bindings whose expiry (:meth:`ThreadBinding.expiry`) is at or before
        ``before``, soonest first."""


class BindingWrites(abc.ABC):
    """``tx.bindings``."""

    @abc.abstractmethod
    def get_active(
        self, channel: str, account_id: str, conversation_id: str
    ) -> ThreadBinding | None:
        """The conversation's active binding, locked until the transaction ends."""

    @abc.abstractmethod
    def bind(self, binding: ThreadBinding) -> ThreadBinding:
        """Store an active binding; return it with its ``id``. Raises
        :class:`~clawline.errors.Conflict` when the conversation already has one."""

    @abc.abstractmethod
    def touch(self, binding_id: int, at: int) -> bool:
        """Record activity at ``at`` (never moves ``lastActivityAt`` back); ``False`` when the
        binding is unknown or no longer active."""

    @abc.abstractmethod
    def unbind(self, binding_id: int, at: int, reason: str) -> ThreadBinding | None:
        """End an active binding; the binding as ended, or ``None`` if it was not active."""

    @abc.abstractmethod
    def unbind_session(self, session_key: str, at: int, reason: str) -> list[ThreadBinding]:
        """End every active binding of a session; return them as ended."""
