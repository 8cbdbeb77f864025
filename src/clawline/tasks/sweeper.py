"""Task retention and lost-task detection (docs/tasks.md).

:func:`sweep` does one pass: it deletes terminal tasks whose ``cleanupAfter`` has passed
(``endedAt`` + 7 days) and marks ``lost`` the queued or running tasks whose backing session
(the child, else the requester of a session-scoped task) is no longer in the catalog and that
have shown no activity for :data:`LOST_GRACE_MS`. The store has no record of when a session was
deleted, so the grace period is measured from the task's last activity (``lastEventAt``, else
``startedAt``, else ``createdAt``): a task is only declared lost once it has been quiet for
five minutes with nothing left to run it.

:class:`clawline.collab.sweepers.Sweepers` runs a pass every :data:`SWEEP_INTERVAL_MS` on a
store worker, in the runtime's background task group.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field

from clawline.records.task import InvalidTaskTransition, TaskRecord
from clawline.tasks.registry import TaskRegistry

SWEEP_INTERVAL_MS = 60_000
"""How often the sweeper runs (OpenClaw: every 60 s)."""
LOST_GRACE_MS = 5 * 60_000
"""How long a task whose backing session is gone may stay quiet before it is ``lost``."""
SWEEP_BATCH = 500
"""The most tasks one pass deletes, and the most it marks lost."""
LOST_ERROR = "backing session missing"

log = logging.getLogger("clawline.tasks")


@dataclass(frozen=True, slots=True)
class SweepResult:
    deleted: list[str] = field(default_factory=list)
    """Ids of the expired terminal tasks deleted."""
    lost: list[TaskRecord] = field(default_factory=list)
    """The tasks marked lost, as they are now."""


def sweep(
    registry: TaskRegistry, now: int | None = None, *, batch: int = SWEEP_BATCH
) -> SweepResult:
    """One pass (blocking: run it on the store thread)."""
    now = registry.clock.now_ms() if now is None else now
    with registry.store.transaction() as tx:
        deleted = tx.tasks.delete_expired(now, batch)
    lost: list[TaskRecord] = []
    for candidate in registry.store.tasks.orphaned(now - LOST_GRACE_MS, batch):
        with registry.store.transaction() as tx:
            current = tx.tasks.get(candidate.task_id)
            # Only if nothing happened to it since it was found (it may have just finished).
            if current is None or current != candidate:
                continue
            with contextlib.suppress(InvalidTaskTransition):
                lost.append(registry.mark_lost(candidate.task_id, LOST_ERROR, tx=tx))
    return SweepResult(deleted=deleted, lost=lost)
