"""Time sources. Domain code asks a :class:`Clock`, never ``time`` or ``asyncio.sleep``
directly, so tests can run it in virtual time with :class:`clawline.testing.FakeClock`.

A clock tells the wall time (:meth:`Clock.now_ms`) and waits (:meth:`Clock.sleep`): every timer
of clawline — periodic loops, retry back-offs, run timeouts — sleeps on the clock it was given,
so a fake clock that only moves when a test says so moves those timers too.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


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
