"""A clock that only moves when told to — wall time and timers alike (virtual time).

:class:`FakeClock` answers a fixed :meth:`~FakeClock.now_ms`; :meth:`~FakeClock.sleep` waits
until the clock has been moved past the sleeper's deadline. So a test drives every timer of the
code under test (periodic loops, back-offs, timeouts) without waiting for real time::

    clock = FakeClock()
    runtime = Runtime.open(settings, clock=clock)
    ...
    await clock.run_for(30_000)   # thirty virtual seconds pass, each timer fires in order
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

_SETTLE_ROUNDS = 5
"""Loop iterations :meth:`FakeClock.run_for` yields after waking sleepers, so that what they
start (another sleep, a store call's completion callback) has run before time moves on."""


class FakeClock:
    """``now_ms`` returns a fixed time; :meth:`advance`, :meth:`set` and :meth:`run_for` move it
    forward and wake the sleepers whose deadline has come."""

    def __init__(self, start_ms: int = 1_790_000_000_000) -> None:
        self._now = start_ms
        self._sleepers: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now_ms(self) -> int:
        return self._now

    @property
    def sleepers(self) -> int:
        """How many sleeps are waiting for the clock to move."""
        return sum(not future.done() for _, _, future in self._sleepers)

    @property
    def next_deadline(self) -> int | None:
        """The earliest deadline of a waiting sleep."""
        self._drop_done()
        return self._sleepers[0][0] if self._sleepers else None

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        deadline = self._now + max(1, round(seconds * 1000))
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (deadline, next(self._order), future))
        await future

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("a clock never goes back")
        self.set(self._now + ms)
        return self._now

    def set(self, ms: int) -> None:
        """Show ``ms`` from now on; the wall time may be set back (a clock stepped by its
        owner), sleepers then wait for it to come round again."""
        self._now = ms
        self._wake()

    async def run_for(self, ms: int) -> None:
        """Let ``ms`` of virtual time pass, waking each sleeper at its deadline in order and
        letting the loop run what it wakes before time moves on."""
        if ms < 0:
            raise ValueError("a clock never goes back")
        target = self._now + ms
        await self._settle()
        while (deadline := self.next_deadline) is not None and deadline <= target:
            self.set(deadline)
            await self._settle()
        self.set(target)
        await self._settle()

    def _wake(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    def _drop_done(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)

    @staticmethod
    async def _settle() -> None:
        for _ in range(_SETTLE_ROUNDS):
            await asyncio.sleep(0)
