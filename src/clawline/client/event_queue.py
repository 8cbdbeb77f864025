"""Events as the client hands them out, and the bounded queue behind ``GatewayClient.events``.

The reader task must never wait for a slow consumer, so the queue is bounded and drops its
*oldest* event when full, counting what it dropped. A consumer that sees ``dropped`` grow has
lost events and should re-list (or :meth:`GatewayClient.resume` from an earlier ``seq``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from clawline.types import JSON

DEFAULT_EVENT_QUEUE = 10_000


@dataclass(frozen=True, slots=True)
class GatewayEvent:
    """One ``{type:"event"}`` frame. ``seq`` is the gateway's stream number (absent for
    connection-local events such as ``connect.challenge``)."""

    name: str
    payload: JSON
    seq: int | None = None
    replayed: bool = False
    """True for an event the gateway sent again for :meth:`GatewayClient.resume` (it was
    published while the client was disconnected)."""


class _End:
    """Queue marker: the stream ended (``error`` is what ended it, ``None`` for a close)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class EventQueue:
    """A bounded FIFO of events that drops the oldest when full; never blocks a producer."""

    def __init__(self, maxsize: int = DEFAULT_EVENT_QUEUE) -> None:
        if maxsize < 1:
            raise ValueError("the event queue holds at least one event")
        self.maxsize = maxsize
        self.dropped = 0
        self._items: deque[GatewayEvent | _End] = deque()
        self._events = 0
        self._signal = asyncio.Event()

    def __len__(self) -> int:
        return self._events

    def put(self, event: GatewayEvent) -> None:
        if self._events >= self.maxsize:
            for index, item in enumerate(self._items):
                if isinstance(item, GatewayEvent):
                    del self._items[index]
                    break
            self._events -= 1
            self.dropped += 1
        self._items.append(event)
        self._events += 1
        self._signal.set()

    def end(self, error: BaseException | None) -> None:
        """Mark the end of a connection's stream: a waiting consumer gets ``error`` (or stops
        when it is ``None``) after the events queued before it."""
        self._items.append(_End(error))
        self._signal.set()

    def discard_ends(self) -> None:
        """Forget end markers not consumed yet (the connection was resumed meanwhile)."""
        self._items = deque(item for item in self._items if isinstance(item, GatewayEvent))

    def get_nowait(self) -> GatewayEvent | None:
        """The next event, ``None`` when there is none; raises the end marker's error."""
        while self._items:
            item = self._items.popleft()
            if isinstance(item, GatewayEvent):
                self._events -= 1
                return item
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return None

    async def get(self) -> GatewayEvent:
        while True:
            event = self.get_nowait()
            if event is not None:
                return event
            self._signal.clear()
            await self._signal.wait()
