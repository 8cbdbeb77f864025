"""The frames a gateway would send, recorded without a gateway.

:class:`WireRecorder` subscribes the gateway's own projection
(:class:`~clawline.gateway.projection.WireProjection`) to a runtime's domain events and keeps
every frame it publishes, so a test of the domain can check the OpenClaw events a client would
see::

    async with WireRecorder(runtime) as wire:
        ack = await runtime.runs.send(session_key="main", message="hi", idempotency_key="k")
        await ack.done
        await wire.settled()
        assert [event.name for event in wire] == [...]

The projection works on a task of its own, so :meth:`WireRecorder.settled` is what tells a test
that everything published so far has become frames.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

from clawline.gateway.bus import Event, EventBus
from clawline.gateway.projection import WireProjection

if TYPE_CHECKING:
    from clawline.runtime import Runtime

__all__ = ["WireRecorder"]


class WireRecorder:
    """A projection of ``runtime``'s domain events and the frames it made (in order)."""

    def __init__(self, runtime: Runtime) -> None:
        self.bus = EventBus(clock=runtime.clock)
        self.projection = WireProjection(
            bus=self.bus,
            store=runtime.store,
            workers=runtime.workers,
            clock=runtime.clock,
            is_active=runtime.runs.has_active_run,
        )
        self.events: list[Event] = []
        self.bus.tap(self.events.append)
        self._runtime = runtime
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> WireRecorder:
        """Subscribe and start projecting (on the running loop)."""
        if self._task is None:
            self._unsubscribe = self._runtime.events.subscribe(self.projection)
            self._task = asyncio.create_task(self.projection.run(), name="wire-recorder")
        return self

    async def settled(self) -> None:
        """Wait until every domain event published so far is among :attr:`events`."""
        await self.projection.caught_up()

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.projection.close()

    async def __aenter__(self) -> WireRecorder:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index: int) -> Event:
        return self.events[index]
