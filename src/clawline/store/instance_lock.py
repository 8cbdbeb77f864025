"""The instance lock: one gateway per SQLite store (security.md, "One gateway per store").

A gateway takes its store's lock before it recovers anything or serves, and holds it for its
whole life (:meth:`clawline.store.base.Store.instance_lock`):

- SQLite (:attr:`InstanceLock.exclusive`): ``flock`` on ``<database file>.lock``, released by the
  kernel with the process. Holding it proves that whoever left runs active is gone, so start-up
  recovery may end them all. The holder writes who it is (:class:`InstanceHolder`) where a
  second gateway can read it, so the refusal (:class:`~clawline.errors.StoreInUse`) names the
  holder.
- PostgreSQL: several gateways share the store (:class:`SharedStoreLock`, never refused); they
  coordinate through their registration and leases instead (:mod:`clawline.instances`).
"""

from __future__ import annotations

import abc
import asyncio
import json
import os
import socket
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from clawline.errors import StoreUnavailable


class StoreInUse(StoreUnavailable):
    """Another gateway holds the store's instance lock (:mod:`clawline.store.instance_lock`);
    ``holder`` describes it when it could be read."""

    def __init__(self, message: str, holder: InstanceHolder | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class StoreLockLost(StoreUnavailable):
    """A running gateway lost the store's instance lock, so it stopped serving."""


HOLDER_WAIT_S = 1.0
"""How long a refused gateway waits for the holder's description to appear (a holder writes
it right after taking the lock; a refusal in between would otherwise name nobody)."""
_HOLDER_POLL_S = 0.02
_ISO_SECONDS = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True, slots=True)
class InstanceHolder:
    """The gateway process holding a store's instance lock."""

    pid: int
    host: str
    started_at_ms: int
    """Wall-clock time the process took the lock."""
    url: str | None = None
    """``ws://host:port`` once it serves."""
    instance_id: str = ""
    """The id it registered under (:mod:`clawline.instances`)."""

    @classmethod
    def this_process(cls) -> InstanceHolder:
        return cls(
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at_ms=time.time_ns() // 10**6,
            instance_id=uuid.uuid4().hex[:12],
        )

    def serving(self, url: str) -> InstanceHolder:
        return replace(self, url=url)

    def describe(self) -> str:
        """``pid 4242 on host-a since 2026-12-01T20:05:16Z (ws://127.0.0.1:18790)``."""
        since = datetime.fromtimestamp(self.started_at_ms / 1000, UTC).strftime(_ISO_SECONDS)
        return f"pid {self.pid} on {self.host} since {since} ({self.url or 'starting'})"

    def to_json(self) -> dict[str, object]:
        return {
            "pid": self.pid,
            "host": self.host,
            "startedAt": self.started_at_ms,
            "url": self.url,
            "instanceId": self.instance_id,
        }

    def encode(self) -> bytes:
        return json.dumps(self.to_json()).encode()

    @classmethod
    def from_json(cls, data: object) -> InstanceHolder | None:
        """The holder a parsed record describes; ``None`` when it does not describe one."""
        if not isinstance(data, dict):
            return None
        pid, host, started, url, instance = (
            data.get(name) for name in ("pid", "host", "startedAt", "url", "instanceId")
        )
        if not (isinstance(pid, int) and isinstance(host, str) and isinstance(started, int)):
            return None
        return cls(
            pid,
            host,
            started,
            url if isinstance(url, str) else None,
            instance if isinstance(instance, str) else "",
        )

    @classmethod
    def decode(cls, text: str | bytes) -> InstanceHolder | None:
        """The holder a record describes; ``None`` when it is empty or unreadable (being
        written, or written by another program)."""
        try:
            return cls.from_json(json.loads(text))
        except (ValueError, UnicodeDecodeError):
            return None


def refusal(holder: InstanceHolder | None) -> StoreInUse:
    if holder is None:
        return StoreInUse("this store is in use by another gateway (it did not say which)")
    return StoreInUse(f"this store is in use by another gateway: {holder.describe()}", holder)


class InstanceLock(abc.ABC):
    """A store's instance lock, as the instance registration (:mod:`clawline.instances`) uses
    it."""

    exclusive: bool = True
    """Whether holding it proves that no other gateway serves the store."""

    async def acquire(self, holder: InstanceHolder) -> None:
        """Take the lock as ``holder``, or raise :class:`~clawline.errors.StoreInUse` naming
        the current holder. Never queues behind the holder: while it is held without a
        description of its holder, this waits at most :data:`HOLDER_WAIT_S` for one (and takes
        the lock should it come free meanwhile)."""
        if self.held:
            raise RuntimeError("the instance lock is already held by this object")
        deadline = time.monotonic() + HOLDER_WAIT_S
        try:
            while True:
                if await self._try_lock(holder):
                    return
                current = await self._current_holder()
                if current is not None or time.monotonic() >= deadline:
                    raise refusal(current)
                await asyncio.sleep(_HOLDER_POLL_S)
        except BaseException:
            await self.release()  # whatever a failed attempt opened
            raise

    @property
    @abc.abstractmethod
    def held(self) -> bool:
        """Whether this object holds the lock (until it is released or found lost)."""

    @abc.abstractmethod
    async def _try_lock(self, holder: InstanceHolder) -> bool:
        """Take the lock without waiting and record ``holder``; ``False`` when it is held."""

    @abc.abstractmethod
    async def _current_holder(self) -> InstanceHolder | None:
        """The recorded holder, when the record is provably the current holder's."""

    @abc.abstractmethod
    async def record(self, holder: InstanceHolder) -> None:
        """Replace the recorded description of the (held) lock's holder, e.g. with its URL."""

    @abc.abstractmethod
    async def watch(self) -> str:
        """Return (with the reason) only when the held lock is lost."""

    @abc.abstractmethod
    async def release(self) -> None:
        """Let go (idempotent)."""


class PrivateStoreLock(InstanceLock):
    """For a store no other process can open (SQLite ``:memory:``): always free."""

    def __init__(self) -> None:
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    async def _try_lock(self, holder: InstanceHolder) -> bool:
        self._held = True
        return True

    async def _current_holder(self) -> InstanceHolder | None:
        return None

    async def record(self, holder: InstanceHolder) -> None:
        return None

    async def watch(self) -> str:
        never: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await never

    async def release(self) -> None:
        self._held = False


class SharedStoreLock(PrivateStoreLock):
    """For a store several gateways share (PostgreSQL): never refused and never lost; the
    instances coordinate through their registration and leases (:mod:`clawline.instances`)."""

    exclusive = False
