"""The task registry: the one domain service that writes tasks.

Two kinds of status change, with different answers to a move the transition table forbids:

- **Lifecycle events** (:meth:`TaskRegistry.start`, :meth:`~TaskRegistry.progress`,
  :meth:`~TaskRegistry.finish`) come from runs. As in OpenClaw, a task that is already terminal
  ignores them: the stored task is returned unchanged and nothing is written (a run that ends
  after its task was cancelled, a replayed event). ``start`` of a running task is likewise a
  no-op. Any other illegal move (``finish(..., "succeeded")`` of a queued task) raises
  :class:`InvalidTaskTransition`.
- **Commands** (:meth:`~TaskRegistry.cancel`, :meth:`~TaskRegistry.mark_lost`) come from
  operators and sweepers and always raise :class:`InvalidTaskTransition` for an illegal move,
  terminal tasks included, so ``tasks.cancel`` of a finished task says why nothing happened.

Every write accepts ``tx=``: pass a :class:`StoreTransaction` to make it part of a larger
transaction (spawning a child, ending a run); without one the registry opens its own. Once that
transaction commits, every task it created or changed is published as a
:class:`~clawline.events.TaskChanged` domain event.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from clawline import keys
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.errors import InvalidField
from clawline.events import DomainEvents, TaskChanged
from clawline.records.task import (
    DELIVERY_STATUSES,
    NOTIFY_POLICIES,
    RUNTIMES,
    SCOPE_KINDS,
    TASK_STATUSES,
    TERMINAL_OUTCOMES,
    TERMINAL_STATUSES,
    TaskNotFound,
    TaskRecord,
    check_transition,
    default_delivery_status,
    default_notify_policy,
)
from clawline.store.base import Store, StoreTransaction
from clawline.tasks.fields import MAX_TEXT, choice, optional, text
from clawline.tasks.lookups import TaskLookups

TASK_RETENTION_MS = 7 * 24 * 3600 * 1000
"""How long a terminal task is kept: ``cleanupAfter = endedAt + 7 days`` (OpenClaw)."""


class TaskRegistry(TaskLookups):
    """Create, move and look up tasks in one :class:`Store`."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock = SYSTEM_CLOCK,
        retention_ms: int = TASK_RETENTION_MS,
        events: DomainEvents | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.retention_ms = retention_ms
        self._events = events
        self._codec = None

    @contextmanager
    def _tx(self, tx: StoreTransaction | None) -> Iterator[StoreTransaction]:
        if tx is not None:
            yield tx
            return
        with self.store.transaction() as own:
            yield own

    def _told(self, tx: StoreTransaction, task: TaskRecord) -> TaskRecord:
        """Publish ``task`` as changed once ``tx`` commits."""
        events = self._events
        if events is not None:
            tx.after_commit(lambda: events.publish(TaskChanged(task)))
        return task

    @classmethod
    def _read(
        cls,
        active: StoreTransaction,
        task_id: str,
        current: TaskRecord | None,
        given: StoreTransaction | None,
    ) -> TaskRecord:
        """``current`` when the caller's own transaction read it (and it is that task), else
        the task read in ``active``."""
        if current is not None and given is not None and current.task_id == task_id:
            return current
        return cls._locked(active, task_id)

    @staticmethod
    def _locked(tx: StoreTransaction, task_id: str) -> TaskRecord:
        task = tx.tasks.get(task_id)
        if task is None:
            raise TaskNotFound(f"task not found: {task_id}")
        return task

    # --- creation --------------------------------------------------------------------------

    def create(
        self,
        *,
        runtime: str,
        task: str,
        requester_session_key: str,
        owner_key: str | None = None,
        scope_kind: str = "session",
        child_session_key: str | None = None,
        run_id: str | None = None,
        label: str | None = None,
        agent_id: str | None = None,
        task_kind: str | None = None,
        source_id: str | None = None,
        parent_flow_id: str | None = None,
        parent_task_id: str | None = None,
        notify_policy: str | None = None,
        delivery_status: str | None = None,
        running: bool = False,
        task_id: str | None = None,
        new_child: bool = False,
        tx: StoreTransaction | None = None,
    ) -> TaskRecord:
        """A new task (``queued``, or ``running`` with ``running=True``); or the existing one
        when a task with the same runtime, owner, child, run id, label and task text exists
        (not looked for with ``new_child``: the child session was created in ``tx`` under a
        key just minted, so no task can name it yet).

        ``owner_key`` defaults to the requester; ``agent_id`` to the agent of the child (else
        the requester) session key; ``notify_policy`` and ``delivery_status`` to OpenClaw's
        defaults for the runtime."""
        runtime = choice("runtime", runtime, RUNTIMES)
        requester = text("requesterSessionKey", requester_session_key, empty=True)
        scope = choice("scopeKind", scope_kind, SCOPE_KINDS)
        owner = text("ownerKey", requester if owner_key is None else owner_key, empty=True)
        child = optional("childSessionKey", child_session_key)
        policy = choice(
            "notifyPolicy", notify_policy or default_notify_policy(runtime), NOTIFY_POLICIES
        )
        delivery = choice(
            "deliveryStatus",
            delivery_status or default_delivery_status(requester, policy),
            DELIVERY_STATUSES,
        )
        if agent_id is None:
            base = child or requester
            agent_id = keys.agent_id_of(base) if base else None
        now = self.clock.now_ms()
        record = TaskRecord(
            task_id=text("taskId", task_id) if task_id is not None else str(uuid.uuid4()),
            runtime=runtime,
            requester_session_key=requester,
            owner_key=owner,
            scope_kind=scope,
            task=text("task", task, limit=MAX_TEXT),
            status="running" if running else "queued",
            delivery_status=delivery,
            notify_policy=policy,
            created_at=now,
            task_kind=optional("taskKind", task_kind),
            source_id=optional("sourceId", source_id),
            child_session_key=child,
            parent_flow_id=optional("parentFlowId", parent_flow_id),
            parent_task_id=optional("parentTaskId", parent_task_id),
            agent_id=optional("agentId", agent_id),
            run_id=optional("runId", run_id),
            label=optional("label", label),
            started_at=now if running else None,
            last_event_at=now,
        )
        with self._tx(tx) as active:
            existing = None if new_child else active.tasks.find_duplicate(record)
            if existing is not None:
                return existing
            active.tasks.insert(record)
            active.tasks.add_event(record.task_id, now, record.status, None)
            self._told(active, record)
        return record

    # --- lifecycle events (terminal tasks ignore them) --------------------------------------

    def start(self, task_id: str, *, tx: StoreTransaction | None = None) -> TaskRecord:
        """``queued -> running``; a running or terminal task is returned unchanged."""
        with self._tx(tx) as active:
            current = self._locked(active, task_id)
            if current.status != "queued":
                return current
            return self._move(active, current, "running", None)

    def progress(
        self, task_id: str, summary: str, *, tx: StoreTransaction | None = None
    ) -> TaskRecord:
        """Record progress of a queued or running task (``progressSummary`` and an event)."""
        summary = text("summary", summary, limit=MAX_TEXT)
        with self._tx(tx) as active:
            current = self._locked(active, task_id)
            if current.terminal:
                return current
            now = self.clock.now_ms()
            task = replace(current, progress_summary=summary, last_event_at=now)
            active.tasks.update(task)
            active.tasks.add_event(task_id, now, "progress", summary)
            return self._told(active, task)

    def finish(
        self,
        task_id: str,
        status: str,
        *,
        summary: str | None = None,
        error: str | None = None,
        outcome: str | None = None,
        tx: StoreTransaction | None = None,
        current: TaskRecord | None = None,
    ) -> TaskRecord:
        """End the task with a terminal ``status`` (``succeeded``, ``failed``, ``timed_out``,
        ``cancelled`` or ``lost``). A task already terminal is returned unchanged.
        ``current``: the task as ``tx`` has just read it (not read again)."""
        if status not in TERMINAL_STATUSES:
            raise InvalidField(
                f"invalid status: {status!r} (finish needs one of "
                f"{', '.join(s for s in TASK_STATUSES if s in TERMINAL_STATUSES)})"
            )
        summary = optional("summary", summary, limit=MAX_TEXT)
        error = optional("error", error, limit=MAX_TEXT)
        if outcome is not None:
            outcome = choice("terminalOutcome", outcome, TERMINAL_OUTCOMES)
        with self._tx(tx) as active:
            current = self._read(active, task_id, current, tx)
            if current.terminal:
                return current
            return self._move(active, current, status, summary, error=error, outcome=outcome)

    # --- commands (illegal moves always raise) ---------------------------------------------

    def cancel(
        self, task_id: str, *, reason: str | None = None, tx: StoreTransaction | None = None
    ) -> TaskRecord:
        """``queued|running -> cancelled``; anything else raises."""
        reason = optional("reason", reason, limit=MAX_TEXT)
        with self._tx(tx) as active:
            current = self._locked(active, task_id)
            return self._move(active, current, "cancelled", reason)

    def mark_lost(
        self,
        task_id: str,
        error: str,
        *,
        tx: StoreTransaction | None = None,
        current: TaskRecord | None = None,
    ) -> TaskRecord:
        """``queued|running -> lost`` (the backing session or runtime is gone)."""
        error = text("error", error, limit=MAX_TEXT)
        with self._tx(tx) as active:
            current = self._read(active, task_id, current, tx)
            return self._move(active, current, "lost", error, error=error)

    def set_delivery(
        self,
        task_id: str,
        delivery_status: str,
        *,
        tx: StoreTransaction | None = None,
        current: TaskRecord | None = None,
    ) -> TaskRecord:
        """Record how the task's completion reached its requester."""
        delivery = choice("deliveryStatus", delivery_status, DELIVERY_STATUSES)
        with self._tx(tx) as active:
            current = self._read(active, task_id, current, tx)
            changed = self.set_deliveries([current], delivery, tx=active)
            return changed[0] if changed else current

    def set_deliveries(
        self, tasks: Sequence[TaskRecord], delivery_status: str, *, tx: StoreTransaction
    ) -> list[TaskRecord]:
        """:meth:`set_delivery` for several tasks ``tx`` has read (locked), in one statement;
        the tasks changed."""
        delivery = choice("deliveryStatus", delivery_status, DELIVERY_STATUSES)
        changed = [
            replace(t, delivery_status=delivery) for t in tasks if t.delivery_status != delivery
        ]
        tx.tasks.set_delivery_many([task.task_id for task in changed], delivery)
        return [self._told(tx, task) for task in changed]

    def delete(self, task_id: str, *, tx: StoreTransaction | None = None) -> bool:
        with self._tx(tx) as active:
            return active.tasks.delete(task_id)

    def _move(
        self,
        tx: StoreTransaction,
        current: TaskRecord,
        status: str,
        summary: str | None,
        *,
        error: str | None = None,
        outcome: str | None = None,
    ) -> TaskRecord:
        check_transition(current.task_id, current.status, status)
        now = self.clock.now_ms()
        task = replace(current, status=status, last_event_at=now)
        if status == "running":
            task = replace(task, started_at=current.started_at or now)
        else:
            task = replace(
                task,
                ended_at=now,
                cleanup_after=now + self.retention_ms,
                error=error if error is not None else current.error,
                terminal_summary=summary,
                terminal_outcome=outcome,
            )
        tx.tasks.update(task)
        tx.tasks.add_event(task.task_id, now, status, summary)
        return self._told(tx, task)
