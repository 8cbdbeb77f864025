"""Start-up recovery: what a crash (or a shutdown mid-run) left behind (design-agents.md).

Runs live in memory, so after a restart nothing is running. Before the gateway serves:

1. every sub-agent run record still active is ended as lost — outcome ``{status:"error",
   error:"lost: gateway restarted"}``, task ``lost`` with that error — with an inbox row for its
   requester (unless the spawn asked for no completion message), and its child session's status
   becomes ``failed``; all in batches of :data:`RECOVERY_BATCH` records per transaction;
2. every other session whose status is still ``running`` (its run died with the process)
   becomes ``failed`` (``abortedLastRun: true``);
3. every stored idempotency key without an outcome (its run died with the process) gets the
   outcome of a failed run with that same error, kept for the idempotency window from now, so
   a retry of the key replays it instead of running again (:mod:`clawline.agents.run_keys`).

The dispatcher then delivers every undelivered inbox row (:meth:`Announcer.start`).

Recovery only ever touches runs of a gateway that is provably gone: it runs in the gateway's
lifespan, which :func:`clawline.gateway.server.serve` starts only once it holds the store's
instance lock (:mod:`clawline.store.instance_lock`). The lock is released by the kernel or the
database server when its holder dies, so holding it proves that whoever left these runs active
is no longer running them; a second gateway on the store is refused before it gets here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.agents import idempotency
from clawline.agents.run_keys import lose_live_keys
from clawline.collab.completion import LOST_ERROR, lost_ending
from clawline.collab.ending import end_record
from clawline.errors import SessionNotFound
from clawline.store.base import SessionQuery
from clawline.store.records import SubagentRun

if TYPE_CHECKING:
    from clawline.runtime import Runtime

__all__ = ["RECOVERY_BATCH", "Recovery", "recover", "recover_now"]

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


def _lose(services: Runtime, batch: Sequence[SubagentRun], now: int) -> tuple[list[str], int]:
    lost: list[str] = []
    announced = 0
    with services.catalog.transaction() as work:
        for candidate in batch:
            record = work.tx.runs.get(candidate.run_id)
            if record is None or not record.active:
                continue
            item = end_record(
                services,
                work,
                record,
                lost_ending(),
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
                )
    return lost, announced


def _fail_running(services: Runtime, now: int) -> int:
    store = services.store
    failed = 0
    seen: set[str] = set()
    while True:
        page = store.page(SessionQuery(status="running"), None, RECOVERY_BATCH)
        entries = [entry for entry in page.entries if entry.key not in seen]
        if not entries:
            return failed
        with services.catalog.transaction() as work:
            for entry in entries:
                seen.add(entry.key)
                work.patch(
                    entry.key,
                    {"status": "failed", "endedAt": now, "abortedLastRun": True},
                    create=False,
                )
                failed += 1


def recover_now(services: Runtime) -> Recovery:
    """Blocking: run on the store thread, before any run starts."""
    now = services.clock.now_ms()
    active = services.store.runs.active()
    lost: list[str] = []
    announced = 0
    for start in range(0, len(active), RECOVERY_BATCH):
        ended, written = _lose(services, active[start : start + RECOVERY_BATCH], now)
        lost.extend(ended)
        announced += written
    failed = _fail_running(services, now)
    keys_lost = lose_live_keys(
        services.store,
        now=now,
        ttl_ms=idempotency.IDEMPOTENCY_TTL_MS,
        error=LOST_ERROR,
        batch=RECOVERY_BATCH,
    )
    return Recovery(lost=lost, announced=announced, sessions_failed=failed, keys_lost=keys_lost)


async def recover(services: Runtime) -> Recovery:
    result = await services.call(recover_now, services)
    if result.lost or result.sessions_failed or result.keys_lost:
        log.warning(
            "recovery: %d subagent run(s) lost (%d completion(s) queued), %d session(s) marked"
            " failed, %d idempotency key(s) of lost runs ended",
            len(result.lost),
            result.announced,
            result.sessions_failed,
            result.keys_lost,
        )
    return result
