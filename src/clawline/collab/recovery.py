"""Recovery: what a crash (or a shutdown mid-run) left behind (design-agents.md).

Runs live in the memory of the gateway instance that accepted them, so what a gone instance
left active is running nowhere. Recovery ends what **no running instance answers for**
(:mod:`clawline.instances`: its run owners and its active sub-agent records), and leaves the
rest alone — the runs of the other instances sharing a PostgreSQL store:

1. every sub-agent run record still active — but a deferred orchestrator's, whose own run is
   over and which a running instance adopts (:meth:`SubagentRegistry.adopt_deferred
   <clawline.collab.subagents.SubagentRegistry.adopt_deferred>`) — is ended as lost — outcome
   ``{status:"error", error:"lost: gateway restarted"}``, task ``lost`` with that error — with an
   inbox row for its requester (unless the spawn asked for no completion message), and its child
   session's status becomes ``failed``; all in batches of :data:`RECOVERY_BATCH` records per
   transaction;
2. every other session whose status is still ``running`` (its run died with the process)
   becomes ``failed`` (``abortedLastRun: true``);
3. every stored idempotency key without an outcome (its run died with the process) gets the
   outcome of a failed run with that same error, kept for the idempotency window from now, so
   a retry of the key replays it instead of running again (:mod:`clawline.agents.run_keys`).

:class:`StartupRecovery` does it; the announce dispatcher runs it at start-up
(:meth:`Announcer.start`) and then delivers every undelivered inbox row. A clean stop
(:meth:`Runtime.stop <clawline.runtime.Runtime.stop>`) runs the same pass once its runs are
stopped, with the error ``lost: gateway stopped`` (and a ``shutdown:`` log line), so no task
stays ``running`` until the next start; the completions it queues are delivered then.

It runs at start-up (after the instance registered, :meth:`Announcer.start`), at a clean stop
(after the instance marked itself stopped), and on a shared store whenever this instance took
over another whose lease lapsed. Only instances provably gone stop *running*: an exclusive
store's next holder (SQLite's ``flock``), a clean stop, or a take-over after a lapsed lease.
Passes may overlap (two instances, or a start beside a take-over): every record is re-read and
ended only while active, and the inbox keeps one completion per run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.agents import idempotency
from clawline.agents.run_keys import lose_live_keys
from clawline.collab.completion import LOST_ERROR, end_record, lost_ending
from clawline.errors import SessionNotFound
from clawline.records.collab import SubagentRun
from clawline.sessions.catalog import Cause
from clawline.store.base import SessionQuery
from clawline.store.cursor import Position

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.config import AgentsConfig
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab")

RECOVERY_BATCH = 100
"""Run records ended (or sessions fixed) per transaction."""


@dataclass(frozen=True, slots=True)
class Recovery:
    lost: list[str]
    """Run ids ended as lost."""
    announced: int
    """Inbox rows written for them."""
    sessions_failed: int
    """Sessions moved from ``running`` to ``failed``."""
    keys_lost: int = 0
    """Idempotency keys of lost runs given their outcome."""


class StartupRecovery:
    """Ends what a previous process left running (module docstring); ``config`` gives each
    requester's agent's archive setting for the records it ends."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        tasks: TaskRegistry,
        clock: Clock,
        config: AgentsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._tasks = tasks
        self._clock = clock
        self._config = config

    async def recover(self, *, error: str = LOST_ERROR) -> Recovery:
        """Recover (on a store worker) and log what was found; ``error`` is the lost runs'
        error (:data:`~clawline.collab.completion.STOPPED_ERROR` when a clean shutdown ends
        what its own runs left active)."""
        result = await self._workers.run(self.recover_now, error=error)
        if result.lost or result.sessions_failed or result.keys_lost:
            log.warning(
                "%s: %d subagent run(s) lost (%d completion(s) queued), %d session(s)"
                " marked failed, %d idempotency key(s) of lost runs ended",
                "recovery" if error == LOST_ERROR else "shutdown",
                len(result.lost),
                result.announced,
                result.sessions_failed,
                result.keys_lost,
            )
        return result

    def recover_now(self, *, error: str = LOST_ERROR) -> Recovery:
        """Blocking: run on a store worker, before any run starts (or after every run ended)."""
        now = self._clock.now_ms()
        store = self._store
        with store.transaction() as tx:
            tx.handoffs.drop_unanswered()  # their runs' owners are unanswered too: ended below
            tx.run_stops.drop_unanswered()
        # A deferred orchestrator's own run is over: it is adopted, not lost (collab.subagents).
        active = [record for record in store.runs.unanswered() if record.deferred_outcome is None]
        lost: list[str] = []
        announced = 0
        for start in range(0, len(active), RECOVERY_BATCH):
            ended, written = self._lose(active[start : start + RECOVERY_BATCH], now, error)
            lost.extend(ended)
            announced += written
        failed = self._fail_running(now)
        keys_lost = lose_live_keys(
            store,
            now=now,
            ttl_ms=idempotency.IDEMPOTENCY_TTL_MS,
            error=error,
            batch=RECOVERY_BATCH,
        )
        self._release_owners()
        return Recovery(lost=lost, announced=announced, sessions_failed=failed, keys_lost=keys_lost)

    def _release_owners(self) -> None:
        while owners := self._store.run_owners.unanswered(RECOVERY_BATCH):
            with self._store.transaction() as tx:
                tx.run_owners.remove([owner.run_id for owner in owners])

    def _lose(self, batch: Sequence[SubagentRun], now: int, error: str) -> tuple[list[str], int]:
        lost: list[str] = []
        announced = 0
        with self._catalog.transaction() as work:
            for candidate in batch:
                record = work.tx.runs.get(candidate.run_id)
                if record is None or not record.active:
                    continue
                item = end_record(
                    work,
                    record,
                    lost_ending(error),
                    store=self._store,
                    tasks=self._tasks,
                    config=self._config,
                    result="",
                    usage=None,
                    runtime_ms=now - (record.started_at or record.created_at),
                    now=now,
                )
                announced += item is not None
                lost.append(record.run_id)
                with contextlib.suppress(SessionNotFound):
                    work.patch(
                        record.child_session_key,
                        {"status": "failed", "endedAt": now, "abortedLastRun": True},
                        create=False,
                        cause=Cause("send", "error", record.run_id),
                    )
        return lost, announced

    def _fail_running(self, now: int) -> int:
        failed = 0
        query = SessionQuery(status="running")
        after: Position | None = None
        while True:
            page = self._store.page(query, after, RECOVERY_BATCH)
            keys = [entry.key for entry in page.entries]
            answered = self._store.run_owners.answered_sessions(keys)
            entries = [entry for entry in page.entries if entry.key not in answered]
            if entries:
                with self._catalog.transaction() as work:
                    for entry in entries:
                        work.patch(
                            entry.key,
                            {"status": "failed", "endedAt": now, "abortedLastRun": True},
                            create=False,
                            cause=Cause("send", "error"),
                        )
                        failed += 1
            if page.next is None:
                return failed
            after = page.next
