"""The periodic sweeps of the collaboration layer, started by :meth:`Announcer.start`:

- the task sweeper (:func:`clawline.tasks.sweeper.sweep_periodically`: retention, lost tasks);
- the **archive sweep** every :data:`ARCHIVE_SWEEP_INTERVAL_MS`: ``cleanup: "delete"`` run-mode
  children whose ``archiveAtMs`` has passed (and that are not running, and have neither running
  children nor undelivered completions of their own) are deleted — entry removed, transcript
  archived as ``sessions.delete`` does, thread bindings ended — and every run record of that
  child is dropped, in one transaction per child;
- **inbox pruning**: delivered inbox rows older than :data:`INBOX_RETENTION_MS` are deleted;
- **idempotency key pruning**: stored run keys whose window has passed are deleted, at most
  :data:`KEY_PRUNE_PASSES` transactions of :data:`~clawline.agents.run_keys.KEY_PRUNE_BATCH`
  rows per sweep (lookups never return an expired key, so this only bounds the table).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from clawline.agents.run_keys import KEY_PRUNE_BATCH, prune_expired
from clawline.errors import ClawlineError
from clawline.sessions.catalog import Cause
from clawline.sessions.entry import SessionEntry
from clawline.tasks.sweeper import sweep_periodically

if TYPE_CHECKING:
    from clawline.runtime import Runtime

__all__ = [
    "ARCHIVE_BATCH",
    "ARCHIVE_SWEEP_INTERVAL_MS",
    "INBOX_PRUNE_BATCH",
    "INBOX_RETENTION_MS",
    "KEY_PRUNE_PASSES",
    "archive_due_now",
    "prune_inbox_now",
    "prune_keys",
    "run_sweepers",
    "sweep_once",
]

log = logging.getLogger("clawline.collab")

ARCHIVE_SWEEP_INTERVAL_MS = 60_000
"""OpenClaw's registry sweeper interval."""
ARCHIVE_BATCH = 100
INBOX_RETENTION_MS = 7 * 24 * 3600 * 1000
"""How long a delivered inbox row is kept (as long as a finished task)."""
INBOX_PRUNE_BATCH = 1000
KEY_PRUNE_PASSES = 10


def archive_due_now(services: Runtime, now: int) -> list[SessionEntry]:
    """Archive the children that are due (blocking); return the deleted entries."""
    store = services.store
    deleted: list[SessionEntry] = []
    for due in store.runs.archive_due(now, ARCHIVE_BATCH):
        child = due.child_session_key
        if services.runs.has_active_run(child):
            continue  # followed up meanwhile; a later pass takes it
        if store.runs.count_active(child) or store.inbox.pending_for(child):
            # Its own children's completions are still to come: their way to its requester
            # (past a requester that is gone) goes through this child's run records.
            continue
        with services.catalog.transaction() as work:
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


def prune_inbox_now(services: Runtime, now: int) -> int:
    with services.store.transaction() as tx:
        return tx.inbox.prune_delivered(now - INBOX_RETENTION_MS, INBOX_PRUNE_BATCH)


async def prune_keys(services: Runtime, now: int) -> int:
    """Delete expired idempotency keys, a batch per transaction; return how many."""
    pruned = 0
    for _ in range(KEY_PRUNE_PASSES):
        count = await services.call(prune_expired, services.store, now, KEY_PRUNE_BATCH)
        pruned += count
        if count < KEY_PRUNE_BATCH:
            break
    return pruned


async def sweep_once(services: Runtime) -> tuple[list[SessionEntry], int]:
    """One archive sweep, one inbox prune and a key prune; publishes the deletions. Returns
    the archived entries and the number of inbox rows pruned."""
    now = services.clock.now_ms()
    deleted = await services.call(archive_due_now, services, now)
    pruned = await services.call(prune_inbox_now, services, now)
    keys = await prune_keys(services, now)
    if keys:
        log.info("sweep: %d expired idempotency key(s) pruned", keys)
    if deleted or pruned:
        log.info("sweep: %d child(ren) archived, %d inbox row(s) pruned", len(deleted), pruned)
    return deleted, pruned


async def run_sweepers(services: Runtime, stop: asyncio.Event) -> None:
    """Run the sweeps until ``stop`` is set (or the task is cancelled)."""
    tasks = asyncio.create_task(
        sweep_periodically(services.tasks, services.call, stop), name="task sweeper"
    )
    try:
        while not stop.is_set():
            try:
                await sweep_once(services)
            except ClawlineError as error:  # the store may be back by the next pass
                log.warning("archive sweep failed: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), ARCHIVE_SWEEP_INTERVAL_MS / 1000)
    finally:
        tasks.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await tasks
