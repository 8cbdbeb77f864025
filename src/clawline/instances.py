"""The gateway instances of a store: this process's registration, its lease, and who is gone.

Every gateway registers in its store's ``gateway_instances`` when it starts (id, host, pid,
address once serving) and renews its **lease** with a heartbeat every
``lease / HEARTBEATS_PER_LEASE``. An instance is *alive* while its last heartbeat is within its
lease, and *running* until it stops or another instance takes it over. What an instance answers
for — the runs it accepted (``run_owners``), the active sub-agent records it wrote
(``subagent_runs.instance_id``) — is left alone while it is running; recovery ends what no
running instance answers for (:class:`~clawline.collab.recovery.StartupRecovery`: tasks end
``lost``, each completion queued once through the inbox's unique key per run).

How an instance stops running:

- it stops cleanly: :meth:`InstanceRegistration.mark_stopped`, once its runs are stopped, then
  its own recovery pass ends what they left;
- on **SQLite** (an exclusive store: its ``flock`` admits one gateway,
  :mod:`clawline.store.instance_lock`) the next gateway's lock proves every other registered
  instance dead: at start it takes them all over;
- on **PostgreSQL** (a shared store) an instance whose lease lapsed is taken over by the first
  live instance that notices (one conditional ``UPDATE``: exactly one wins); every live
  instance looks every heartbeat, and recovers when it took one over.

An instance that finds at its heartbeat that it was taken over (it stalled longer than its
lease: a long pause, a partition from the database) has lost its runs to another instance and
must stop serving; :meth:`InstanceRegistration.watch` returns then, as it does when the
heartbeat cannot be written for a whole lease. Leases compare the heartbeats' wall-clock times
across hosts: keep the hosts' clocks within a small part of the lease.
"""

from __future__ import annotations

import asyncio
import logging

from clawline.clock import Clock
from clawline.errors import StoreError, StoreUnavailable
from clawline.records.instance import InstanceRecord
from clawline.store.base import Store
from clawline.store.instance_lock import InstanceHolder, InstanceLock
from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.instances")

DEFAULT_LEASE_MS = 15_000
HEARTBEATS_PER_LEASE = 5
MIN_HEARTBEAT_S = 0.05


class InstanceRegistration:
    """This process's entry among its store's gateway instances (module docstring).

    ``lock`` is the store's instance lock (refused to a second gateway on SQLite); the
    registration takes it first, so a refused gateway never registers."""

    def __init__(
        self,
        *,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        lock: InstanceLock,
        holder: InstanceHolder,
        lease_ms: int = DEFAULT_LEASE_MS,
    ) -> None:
        self._store = store
        self._workers = workers
        self._clock = clock
        self._lock = lock
        self.holder = holder
        self.lease_ms = lease_ms
        self._registered = False
        self._url: str | None = None
        self._lost = asyncio.Event()
        self._lost_reason: str | None = None
        self._beat: StoreWorkers | None = None
        """The heartbeat's own thread while registered: renewing the lease never queues
        behind the store's work (a busy instance must not look dead)."""
        store.instance_id = holder.instance_id

    @property
    def instance_id(self) -> str:
        return self.holder.instance_id

    @property
    def exclusive(self) -> bool:
        """Whether this is the store's only gateway (SQLite)."""
        return self._lock.exclusive

    @property
    def heartbeat_s(self) -> float:
        return max(MIN_HEARTBEAT_S, self.lease_ms / 1000 / HEARTBEATS_PER_LEASE)

    # --- lifecycle -----------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Take the store's lock (:class:`~clawline.store.instance_lock.StoreInUse` when another
        gateway holds it), then register. On an exclusive store, every other instance still
        registered as running is marked taken over by this one: the lock proves it gone."""
        await self._lock.acquire(self.holder)
        try:
            await self._workers.run(self._register_now)
        except BaseException:
            await self._lock.release()
            raise
        self._registered = True
        self._beat = StoreWorkers(None, threads=1, name="clawline-heartbeat")

    def _register_now(self) -> None:
        now = self._clock.now_ms()
        holder = self.holder
        with self._store.transaction() as tx:
            if self.exclusive:
                for other in self._store.instances.running():
                    tx.instances.take_over(
                        other.instance_id, holder.instance_id, now, lapsed_only=False
                    )
            tx.instances.register(
                InstanceRecord(
                    instance_id=holder.instance_id,
                    host=holder.host,
                    pid=holder.pid,
                    started_at=now,
                    heartbeat_at=now,
                    lease_ms=self.lease_ms,
                    url=holder.url,
                )
            )

    async def record(self, url: str) -> None:
        """Record the address this instance serves on (with the lock's holder description)."""
        self.holder = self.holder.serving(url)
        self._url = url
        await self._lock.record(self.holder)
        await self._heartbeat()

    async def _heartbeat(self) -> bool:
        return await (self._beat or self._workers).run(self._heartbeat_now)

    def _heartbeat_now(self) -> bool:
        with self._store.transaction() as tx:
            return tx.instances.heartbeat(self.instance_id, self._clock.now_ms(), self._url)

    async def keep_lease(self) -> None:
        """Renew the lease every :attr:`heartbeat_s` until it is lost (then :meth:`watch`
        returns) or this is cancelled; the runtime runs it in its background task group."""
        renewed = self._clock.now_ms()
        while True:
            await self._clock.sleep(self.heartbeat_s)
            try:
                if not await self._heartbeat():
                    self._lose(f"instance {self.instance_id} was taken over by another instance")
                    return
                renewed = self._clock.now_ms()
            except (StoreError, StoreUnavailable) as error:
                if self._clock.now_ms() - renewed >= self.lease_ms:
                    self._lose(f"its lease could not be renewed for {self.lease_ms} ms ({error})")
                    return
                log.warning("instance %s: heartbeat failed: %s", self.instance_id, error)

    def _lose(self, reason: str) -> None:
        self._lost_reason = reason
        self._lost.set()

    async def watch(self) -> str:
        """Return (with the reason) only once the lease, or the store's lock, is lost."""
        lock_lost = asyncio.ensure_future(self._lock.watch())
        lease_lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({lock_lost, lease_lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (lock_lost, lease_lost):
                waiter.cancel()
            await asyncio.gather(lock_lost, lease_lost, return_exceptions=True)
        if lock_lost.done() and not lock_lost.cancelled() and lock_lost.exception() is None:
            return lock_lost.result()
        return self._lost_reason or "the lease was lost"

    async def mark_stopped(self) -> None:
        """Record that this instance answers for nothing any more (its runs are stopped): the
        recovery pass of its own stop then ends what they left, like any other instance's
        (idempotent)."""
        if self._registered:
            self._registered = False
            try:
                await self._workers.run(self._stop_now)
            except (StoreError, StoreUnavailable) as error:
                log.warning("instance %s: stop not recorded: %s", self.instance_id, error)

    async def release(self) -> None:
        """Mark this instance stopped (when not yet) and let go of the lock (idempotent)."""
        await self.mark_stopped()
        await self._lock.release()
        beat, self._beat = self._beat, None
        if beat is not None:
            beat.close()

    def _stop_now(self) -> None:
        with self._store.transaction() as tx:
            tx.instances.stop(self.instance_id, self._clock.now_ms())

    # --- who is gone ---------------------------------------------------------------------------

    async def take_over_lapsed(self) -> list[str]:
        """Take over every instance whose lease lapsed (none on an exclusive store); the ids
        this instance took, whose work is now its to recover."""
        if self.exclusive:
            return []
        return await self._workers.run(self._take_over_now)

    def _take_over_now(self) -> list[str]:
        now = self._clock.now_ms()
        lapsed = [
            record.instance_id
            for record in self._store.instances.running()
            if not record.alive(now) and record.instance_id != self.instance_id
        ]
        taken: list[str] = []
        for instance_id in lapsed:
            with self._store.transaction() as tx:
                if tx.instances.take_over(instance_id, self.instance_id, now):
                    taken.append(instance_id)
        if taken:
            log.warning(
                "instance %s took over %d lapsed instance(s): %s",
                self.instance_id,
                len(taken),
                ", ".join(taken),
            )
        return taken
