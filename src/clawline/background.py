"""The owner of the process's background work: one task group, one periodic helper, one
error policy.

Every task clawline runs in the background — the announce dispatcher's ticks, the sweepers,
thread-binding expiry, an agent-to-agent exchange that outlives its tool call — is started
through a :class:`Background`, which the runtime owns (:meth:`Runtime.start
<clawline.runtime.Runtime.start>` enters it, :meth:`~clawline.runtime.Runtime.stop` closes
it). Nothing is fired and forgotten: :meth:`Background.close` cancels what is still running
and waits until every task has finished, so a stopped runtime leaves no task behind.

- :meth:`Background.every` runs a coroutine function every ``interval`` seconds of the
  runtime's clock (virtual time under :class:`clawline.testing.FakeClock`), first after
  ``interval`` unless told otherwise.
- :meth:`Background.spawn` runs a coroutine once.

The error policy (:func:`clawline.failure_log.log_failure`): a pass or a task that raises is
logged — a typed clawline error as one WARNING line, anything else at ERROR with its traceback —
and the loop carries on with its next pass; one failure never takes other tasks down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from clawline.clock import Clock
from clawline.failure_log import log_failure

log = logging.getLogger("clawline.background")


class Background:
    """A task group for the runtime's background work (module docstring)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def tasks(self) -> list[asyncio.Task[None]]:
        """The tasks still running."""
        return [task for task in self._tasks if not task.done()]

    def spawn(self, coroutine: Coroutine[Any, Any, object], *, name: str) -> asyncio.Task[None]:
        """Run ``coroutine`` once, as a task this group owns."""
        if self._closed:
            coroutine.close()
            raise RuntimeError(f"background work is closed; {name} was not started")
        task = asyncio.create_task(self._guarded(coroutine, name), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # A task cancelled before its first step never starts ``coroutine``: close it, or
        # Python warns that it was never awaited (a no-op once it has run).
        task.add_done_callback(lambda _: coroutine.close())
        return task

    def every(
        self,
        interval: float,
        work: Callable[[], Awaitable[object]],
        *,
        name: str,
        first_after: float | None = None,
    ) -> asyncio.Task[None]:
        """Await ``work()`` every ``interval`` seconds (the first time after ``first_after``,
        by default ``interval``), until closed."""
        return self.spawn(self._periodic(interval, work, name, first_after), name=name)

    async def close(self) -> None:
        """Cancel every task still running and wait until all have finished."""
        self._closed = True
        while self._tasks:
            pending = list(self._tasks)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _periodic(
        self,
        interval: float,
        work: Callable[[], Awaitable[object]],
        name: str,
        first_after: float | None,
    ) -> None:
        await self._clock.sleep(interval if first_after is None else first_after)
        while True:
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log_failure(log, error, f"{name} failed")
            await self._clock.sleep(interval)

    @staticmethod
    async def _guarded(coroutine: Coroutine[Any, Any, object], name: str) -> None:
        try:
            await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log_failure(log, error, f"{name} failed")
