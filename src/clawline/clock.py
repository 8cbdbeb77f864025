"""Time sources. Domain code asks a :class:`Clock`, never ``time`` or ``asyncio.sleep``
directly, so tests can run it in virtual time with :class:`clawline.testing.FakeClock`.

A clock tells the wall time (:meth:`Clock.now_ms`) and waits (:meth:`Clock.sleep`): every timer
of clawline's runtime — periodic passes, retry back-offs, run timeouts, waits for a run's
outcome (:func:`wait_for`) — sleeps on the clock it was given, so a fake clock that only moves
when a test says so moves those timers too. Network and process timeouts (a handshake, an agent
process's exit) stay in real time: they measure the outside world.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK: Clock = SystemClock()


async def wait_for(clock: Clock, awaitable: Awaitable[T], seconds: float | None) -> T:
    """``asyncio.wait_for`` in ``clock``'s time: the result of ``awaitable``, or
    :class:`TimeoutError` (``awaitable`` cancelled) once ``seconds`` have passed on ``clock``;
    ``None``: no limit."""
    task = asyncio.ensure_future(awaitable)
    if seconds is None:
        return await task
    timer = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        timer.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise TimeoutError
