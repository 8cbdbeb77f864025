"""Which channel connections this gateway instance runs.

A channel's *connection* — the Matrix sync loop, Telegram's ``getUpdates`` polling or its
``setWebhook`` — runs once per store, not once per gateway. On a store several instances share
(PostgreSQL, docs/instances.md) each channel is **held** by one running instance, as a claim in
the store (``instance_claims``, kind ``channel``, the adapter's id as its name) that lasts as
long as that instance's lease:

- at its start an instance takes the channels no running instance holds and starts their
  adapters (:meth:`ChannelAdapter.start <clawline.channels.base.ChannelAdapter.start>`); the
  others stand by (:meth:`ChannelAdapter.stand_by
  <clawline.channels.base.ChannelAdapter.stand_by>`: they take what is pushed to this
  instance, Telegram's webhook POSTs, but open no connection), with one log line naming the
  holder;
- every heartbeat it tries again for those it does not hold (:meth:`ChannelConnections.
  take_free`). A claim is free once its holder stopped or was taken over, so when the holder
  dies another instance runs the connection within about a lease — reading on from the
  position the holder saved (``channel_cursors``);
- the outbox follows the claims: an instance delivers only the rows of the channels it holds
  (:attr:`ChannelConnections.delivered`), so one conversation's messages leave from one
  instance, in order;
- at a clean stop it closes its adapters and gives its claims up.

On an exclusive store (SQLite: one gateway) nothing is claimed and every adapter starts.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from clawline.errors import StoreError, StoreUnavailable
from clawline.failure_log import log_failure
from clawline.records.instance import CHANNEL_CLAIM

if TYPE_CHECKING:
    from clawline.background import Background
    from clawline.channels.inbox import ChannelInbox
    from clawline.channels.registry import ChannelRegistry
    from clawline.clock import Clock
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.channels")


class ChannelConnections:
    """The channel connections of this instance (module docstring). ``shared``: whether other
    gateway instances may serve the same store."""

    def __init__(
        self,
        *,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        channels: ChannelRegistry,
        shared: bool,
    ) -> None:
        self._store = store
        self._workers = workers
        self._clock = clock
        self._channels = channels
        self.shared = shared
        self._held: set[str] = set()
        self._standing_by: set[str] = set()
        self._inbox: ChannelInbox | None = None
        self._background: Background | None = None

    @property
    def held(self) -> frozenset[str]:
        """The channels whose connection this instance holds (shared stores)."""
        return frozenset(self._held)

    @property
    def delivered(self) -> frozenset[str] | None:
        """The channels whose outbox rows this instance delivers: those it holds on a shared
        store, ``None`` (every channel) on an exclusive one."""
        return frozenset(self._held) if self.shared else None

    async def start(self, inbox: ChannelInbox, background: Background) -> None:
        """Start the adapters whose connection this instance runs: every adapter on an
        exclusive store; on a shared one those whose claim it takes, the others stand by. An
        adapter that fails to start is logged and the others still start."""
        self._inbox, self._background = inbox, background
        channels = self._channels.ids()
        if not self.shared:
            for channel in channels:
                await self._start(channel)
            return
        try:
            taken = await self._workers.run(self._take_now, channels)
        except (StoreError, StoreUnavailable) as error:
            log.warning("channel connections not claimed yet (next heartbeat): %s", error)
            return
        await self._settle(channels, taken)

    async def take_free(self) -> list[str]:
        """Take the channels this instance does not hold and no running instance does, and
        start them; the ones taken. The runtime calls it every heartbeat on a shared store."""
        if not self.shared or self._inbox is None:
            return []
        free = [channel for channel in self._channels.ids() if channel not in self._held]
        if not free:
            return []
        taken = await self._workers.run(self._take_now, free)
        for channel in taken:
            log.info("channel %s: this instance took its connection over", channel)
        await self._settle(free, taken)
        return taken

    async def _settle(self, channels: list[str], taken: list[str]) -> None:
        for channel in channels:
            if channel in taken:
                self._held.add(channel)
                self._standing_by.discard(channel)
                await self._start(channel)
            elif channel not in self._standing_by:
                self._standing_by.add(channel)
                await self._stand_by(channel)

    def _take_now(self, channels: list[str]) -> list[str]:
        # One transaction per claim: two instances taking several at once never wait on each
        # other's rows in opposite orders.
        now = self._clock.now_ms()
        taken: list[str] = []
        for channel in channels:
            with self._store.transaction() as tx:
                if tx.claims.take(CHANNEL_CLAIM, channel, now):
                    taken.append(channel)
        return taken

    async def _start(self, channel: str) -> None:
        adapter = self._channels.get(channel)
        if adapter is None or self._inbox is None or self._background is None:
            return
        try:
            await adapter.start(self._inbox, self._background)
        except Exception as error:
            log_failure(log, error, f"channel {channel} did not start")

    async def _stand_by(self, channel: str) -> None:
        adapter = self._channels.get(channel)
        if adapter is None or self._inbox is None:
            return
        try:
            await adapter.stand_by(self._inbox)
        except Exception as error:
            log_failure(log, error, f"channel {channel} did not stand by")
        try:
            holder = await self._workers.run(self._store.claims.holder, CHANNEL_CLAIM, channel)
        except (StoreError, StoreUnavailable):
            holder = None
        log.info(
            "channel %s: instance %s holds its connection; this instance stands by",
            channel,
            holder or "(unknown)",
        )

    async def aclose(self) -> None:
        """Close every adapter (:meth:`ChannelAdapter.aclose
        <clawline.channels.base.ChannelAdapter.aclose>`), then give up this instance's claims:
        another instance takes them at its next heartbeat."""
        try:
            for channel in self._channels.ids():
                adapter = self._channels.get(channel)
                if adapter is not None:
                    await adapter.aclose()
        finally:
            held = sorted(self._held)
            self._held.clear()
            if held:
                try:
                    await self._workers.run(self._release_now, held)
                except (StoreError, StoreUnavailable) as error:
                    log.warning("channel claims not released: %s", error)

    def _release_now(self, channels: list[str]) -> None:
        with self._store.transaction() as tx:
            tx.claims.release(CHANNEL_CLAIM, channels)
