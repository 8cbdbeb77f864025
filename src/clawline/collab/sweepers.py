"""The periodic sweeps of the collaboration layer (:class:`Sweepers`), which the runtime runs in
its background task group (:mod:`clawline.background`) from start-up on:

- the **task sweep** (:meth:`Sweepers.sweep_tasks`, every
  :data:`~clawline.tasks.sweeper.SWEEP_INTERVAL_MS`: :func:`clawline.tasks.sweeper.sweep`,
  retention and lost tasks);
- the **archive sweep** (:meth:`Sweepers.sweep_once`, every :data:`ARCHIVE_SWEEP_INTERVAL_MS`):
  ``cleanup: "delete"`` run-mode children whose ``archiveAtMs`` has passed (and that are not
  running, and have neither running children nor undelivered completions of their own) are
  deleted — entry removed, transcript archived as ``sessions.delete`` does, thread bindings
  ended — and every run record of that child is dropped, in one transaction per child;
- **inbox pruning**: delivered inbox rows older than :data:`INBOX_RETENTION_MS` are deleted;
- **idempotency key pruning**: stored run keys whose window has passed are deleted, at most
  :data:`KEY_PRUNE_PASSES` transactions of :data:`~clawline.agents.run_keys.KEY_PRUNE_BATCH`
  rows per sweep (lookups never return an expired key, so this only bounds the table).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from clawline.agents.run_keys import KEY_PRUNE_BATCH, prune_expired
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import Cause
from clawline.tasks.sweeper import SweepResult, sweep

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab")

ARCHIVE_SWEEP_INTERVAL_MS = 60_000
"""OpenClaw's registry sweeper interval."""
ARCHIVE_BATCH = 100
INBOX_RETENTION_MS = 7 * 24 * 3600 * 1000
"""How long a delivered inbox row is kept (as long as a finished task)."""
INBOX_PRUNE_BATCH = 1000
KEY_PRUNE_PASSES = 10


class Sweepers:
    """The sweeps (module docstring); ``runs`` tells which children are running."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        tasks: TaskRegistry,
        clock: Clock,
        runs: RunManager,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._tasks = tasks
        self._clock = clock
        self._runs = runs

    def archive_due_now(self, now: int, busy: frozenset[str]) -> list[SessionEntry]:
        """Archive the children that are due (blocking); return the deleted entries. ``busy``:
        the sessions with a queued or running run (taken on the loop)."""
        store = self._store
        deleted: list[SessionEntry] = []
        for due in store.runs.archive_due(now, ARCHIVE_BATCH):
            child = due.child_session_key
            if child in busy:
                continue  # followed up meanwhile; a later pass takes it
            if store.runs.count_active(child) or store.inbox.pending_for(child):
                # Its own children's completions are still to come: their way to its requester
                # (past a requester that is gone) goes through this child's run records.
                continue
            with self._catalog.transaction() as work:
                current = work.tx.runs.get(due.run_id)
                if current is None or current.active or current.cleanup_completed_at is not None:
                    continue
                entry = work.tx.get(child)
                if entry is not None:
                    work.delete(child, cause=Cause("delete"))
                    deleted.append(entry)
                for record in store.runs.by_child(child):
                    work.tx.runs.delete(record.run_id)
                work.tx.bindings.unbind_session(child, now, "archived")
        return deleted

    def prune_inbox_now(self, now: int) -> int:
        with self._store.transaction() as tx:
            return tx.inbox.prune_delivered(now - INBOX_RETENTION_MS, INBOX_PRUNE_BATCH)

    async def prune_keys(self, now: int) -> int:
        """Delete expired idempotency keys, a batch per transaction; return how many."""
        pruned = 0
        for _ in range(KEY_PRUNE_PASSES):
            count = await self._workers.run(prune_expired, self._store, now, KEY_PRUNE_BATCH)
            pruned += count
            if count < KEY_PRUNE_BATCH:
                break
        return pruned

    async def sweep_once(self) -> tuple[list[SessionEntry], int]:
        """One archive sweep, one inbox prune and a key prune; publishes the deletions.
        Returns the archived entries and the number of inbox rows pruned."""
        now = self._clock.now_ms()
        busy = self._runs.busy_sessions()
        deleted = await self._workers.run(self.archive_due_now, now, busy)
        pruned = await self._workers.run(self.prune_inbox_now, now)
        keys = await self.prune_keys(now)
        if keys:
            log.info("sweep: %d expired idempotency key(s) pruned", keys)
        if deleted or pruned:
            log.info("sweep: %d child(ren) archived, %d inbox row(s) pruned", len(deleted), pruned)
        return deleted, pruned

    async def sweep_tasks(self) -> SweepResult:
        """One task sweep (retention, lost tasks: :func:`clawline.tasks.sweeper.sweep`)."""
        return await self._workers.run(sweep, self._tasks)
