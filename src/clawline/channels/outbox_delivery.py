"""The outbox's delivery loop: every queued message reaches its conversation once.

Rows are queued in the transaction of what they deliver (:mod:`clawline.records.outbox`); this
loop, one task in the runtime's background group, sends them:

- it takes the due rows oldest first and gives each conversation with rows due a worker of its
  own that delivers them in order; different conversations go side by side and the loop does
  not wait for them, so a slow or failing conversation holds up no other, nor what is queued
  while it is slow;
- :meth:`ChannelAdapter.send <clawline.channels.base.ChannelAdapter.send>` answering marks the
  row ``delivered`` (with the channel's message id); :class:`~clawline.channels.base.DeliveryFailed`
  (and any unexpected error) schedules the next attempt — after the channel's ``retry_after``
  when it gave one, else after 1 s, 2 s, 4 s … capped at :data:`MAX_BACKOFF_MS` — until
  :data:`MAX_ATTEMPTS`; :class:`~clawline.channels.base.TargetGone`, a channel with no adapter
  or the last attempt failing mark it ``failed`` with the reason, logged once;
- it sleeps until the next row is due or :meth:`OutboxDelivery.wake` is called (the runtime
  wakes it when a commit queued rows).

Of several gateway instances on one store, each delivers only the rows of the channels whose
connection it holds (:mod:`clawline.channels.connections`), so one conversation's messages leave
from one instance, in order; rows of a channel no running instance holds wait, pending, until
one takes it. Such an instance also looks for due rows every :data:`SHARED_POLL_S`: rows
another instance queued do not wake it.

Exactly once, as the user sees it: each attempt first claims its row for :data:`CLAIM_MS` (one
conditional ``UPDATE``: of several gateway instances sharing the store, one gets it), and the
row is marked delivered in the transaction right after the channel accepted it. A crash between
the two sends it again once the claim has run out; adapters whose channel takes an idempotency
key (Matrix's transaction id, the webhook's ``Idempotency-Key``) pass the row's id, so the
channel drops the repeat.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from clawline.channels.base import DeliveryFailed, TargetGone
from clawline.failure_log import one_line

if TYPE_CHECKING:
    from clawline.channels.connections import ChannelConnections
    from clawline.channels.registry import ChannelRegistry
    from clawline.clock import Clock
    from clawline.records.outbox import OutboxItem, OutboxTarget
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.channels.outbox")

BATCH = 200
"""Due rows taken per pass."""
MAX_ATTEMPTS = 10
"""Attempts before a message is given up (about 17 minutes of backoff)."""
BASE_BACKOFF_MS = 1_000
MAX_BACKOFF_MS = 5 * 60 * 1000
BUSY_RECHECK_S = 1.0
"""The longest the loop waits, with rows due behind busy conversations, before it looks again."""
CLAIM_MS = 30_000
"""A delivery attempt's claim on its row: gateway instances sharing the store leave a claimed
row alone this long (:meth:`OutboxWrites.claim <clawline.store.outbox.OutboxWrites.claim>`)."""
IDLE_WAKE_S = 60.0
"""The longest the loop sleeps with nothing due (it is woken for new rows anyway)."""
SHARED_POLL_S = 1.0
"""The longest the loop sleeps on a store other gateway instances share: :meth:`OutboxDelivery.
wake` hears only this process's commits, and a reply to a channel this instance holds may be
queued by the instance that ran it."""


def backoff_ms(attempts: int, retry_after_s: float | None) -> int:
    """The wait before attempt ``attempts + 1``: the channel's ``retry_after`` when given, else
    exponential from :data:`BASE_BACKOFF_MS`, never above :data:`MAX_BACKOFF_MS`."""
    if retry_after_s is not None and retry_after_s >= 0:
        return min(int(retry_after_s * 1000), MAX_BACKOFF_MS)
    exponent: int = max(attempts - 1, 0)
    return min(BASE_BACKOFF_MS << min(exponent, 20), MAX_BACKOFF_MS)


class OutboxDelivery:
    """The delivery loop (module docstring); :meth:`run` is its task. ``connections`` says
    which channels this instance delivers (without it: every channel, as the only gateway of
    its store)."""

    def __init__(
        self,
        *,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        channels: ChannelRegistry,
        connections: ChannelConnections | None = None,
    ) -> None:
        self._store = store
        self._workers = workers
        self._clock = clock
        self._channels = channels
        self._connections = connections
        self._longest_sleep = (
            SHARED_POLL_S if connections is not None and connections.shared else IDLE_WAKE_S
        )
        self._wake = asyncio.Event()
        self._busy: set[OutboxTarget] = set()
        """Conversations a worker is delivering to."""
        self.passes = 0
        """Completed passes (tests wait on it)."""

    def wake(self) -> None:
        """Look for due rows now (rows were queued)."""
        self._wake.set()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as workers:
            while True:
                self._wake.clear()
                await self._dispatch(workers)
                self.passes += 1
                next_due = await self._workers.run(
                    self._store.outbox.next_due_at, self._delivered()
                )
                wait = self._longest_sleep
                if next_due is not None:
                    wait = min(max(next_due - self._clock.now_ms(), 0) / 1000, wait)
                if wait <= 0:
                    if not self._busy:
                        continue
                    # What is due may be a busy conversation's next row: its worker wakes the
                    # loop when done; a second at most for rows due elsewhere meanwhile.
                    wait = BUSY_RECHECK_S
                sleeper = asyncio.ensure_future(self._clock.sleep(wait))
                waker = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    sleeper.cancel()
                    waker.cancel()

    async def deliver_due(self) -> int:
        """One pass, awaited to its end: deliver what is due now; how many rows it took."""
        async with asyncio.TaskGroup() as workers:
            return await self._dispatch(workers)

    async def _dispatch(self, workers: asyncio.TaskGroup) -> int:
        """Start a worker for every conversation with due rows and none at work: a slow send
        to one conversation holds up neither the others nor the rows queued meanwhile. A busy
        conversation's further rows wait for its worker (order), which wakes the loop when done."""
        due = await self._workers.run(
            self._store.outbox.due, self._clock.now_ms(), BATCH, self._delivered()
        )
        by_target: dict[OutboxTarget, list[OutboxItem]] = defaultdict(list)
        for item in due:
            if item.target not in self._busy:
                by_target[item.target].append(item)
        for target, items in by_target.items():
            self._busy.add(target)
            workers.create_task(self._work(target, items))
        return sum(len(items) for items in by_target.values())

    def _delivered(self) -> frozenset[str] | None:
        return None if self._connections is None else self._connections.delivered

    async def _work(self, target: OutboxTarget, items: list[OutboxItem]) -> None:
        try:
            await self._deliver_in_order(items)
        finally:
            self._busy.discard(target)
            self.wake()

    async def _deliver_in_order(self, items: list[OutboxItem]) -> None:
        for index, item in enumerate(items):
            if not await self._deliver(item):
                # a later message must not overtake one that is still waiting for its retry
                for held in items[index + 1 :]:
                    await self._workers.run(self._hold, held, item)
                return

    def _hold(self, held: OutboxItem, blocking: OutboxItem) -> None:
        assert held.id is not None
        current = self._store.outbox.get(blocking.id or 0)
        if current is None or current.status != "pending":
            return
        with self._store.transaction() as tx:
            tx.outbox.postpone(held.id, current.next_attempt_at)

    async def _deliver(self, item: OutboxItem) -> bool:
        """Attempt ``item``; whether the conversation may take the next message now."""
        assert item.id is not None
        now = self._clock.now_ms()
        if not await self._workers.run(self._claim, item.id, now, now + CLAIM_MS):
            return False  # another gateway instance is attempting it: wait behind it
        adapter = self._channels.get(item.target.channel)
        if adapter is None:
            await self._fail(item, f"channel {item.target.channel} is not configured")
            return True
        try:
            remote_id = await adapter.send(item)
        except TargetGone as error:
            await self._fail(item, one_line(str(error)))
            return True
        except asyncio.CancelledError:
            raise
        except Exception as error:
            retry_after = error.retry_after_s if isinstance(error, DeliveryFailed) else None
            reason = one_line(str(error)) or type(error).__name__
            if not isinstance(error, DeliveryFailed):
                reason = f"{type(error).__name__}: {reason}"
            if item.attempts + 1 >= MAX_ATTEMPTS:
                await self._fail(item, f"gave up after {MAX_ATTEMPTS} attempts: {reason}")
                return True
            at = self._clock.now_ms() + backoff_ms(item.attempts + 1, retry_after)
            await self._workers.run(self._write, "retry_later", item.id, at, reason)
            log.info("outbox #%s to %s: %s (retry)", item.id, item.target.describe(), reason)
            return False
        await self._workers.run(self._write, "delivered", item.id, self._clock.now_ms(), remote_id)
        return True

    async def _fail(self, item: OutboxItem, reason: str) -> None:
        assert item.id is not None
        await self._workers.run(self._write, "failed", item.id, self._clock.now_ms(), reason)
        log.warning("outbox #%s to %s failed for good: %s", item.id, item.target.describe(), reason)

    def _claim(self, item_id: int, now: int, until: int) -> bool:
        with self._store.transaction() as tx:
            return tx.outbox.claim(item_id, now, until)

    def _write(self, what: str, item_id: int, at: int, value: str | None) -> None:
        with self._store.transaction() as tx:
            if what == "delivered":
                tx.outbox.delivered(item_id, at, value)
            elif what == "retry_later":
                tx.outbox.retry_later(item_id, at, value or "")
            else:
                tx.outbox.failed(item_id, at, value or "")
