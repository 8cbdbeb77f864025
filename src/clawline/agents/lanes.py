"""Session lanes: each session's runs execute one after another, sessions side by side.

This is OpenClaw's queue mode ``followup`` (reference collaboration.md §11): a message for a
busy session is accepted and its run starts when the runs before it have ended. A lane exists
while its session has a queued or running run; its worker task drains it and then goes away.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from clawline.agents.run import Run, RunState

__all__ = ["SessionLanes"]

log = logging.getLogger("clawline.agents")


@dataclass(eq=False)
class _Lane:
    key: str
    queue: deque[Run] = field(default_factory=deque)
    current: Run | None = None
    worker: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        current = self.current
        return (current is not None and current.active) or bool(self.queue)


class SessionLanes:
    def __init__(
        self,
        execute: Callable[[Run], Awaitable[None]],
        fail: Callable[[Run, str], None],
    ) -> None:
        self._execute = execute
        self._fail = fail
        self._lanes: dict[str, _Lane] = {}

    def busy(self, session_key: str) -> bool:
        """Whether the session has a queued or running run. Reads only; safe to call from the
        store thread (row building) while the loop changes the lanes."""
        lane = self._lanes.get(session_key)
        return lane is not None and lane.busy

    def enqueue(self, run: Run) -> None:
        lane = self._lanes.get(run.session_key)
        if lane is None:
            lane = self._lanes[run.session_key] = _Lane(run.session_key)
        run.state = RunState.QUEUED
        lane.queue.append(run)
        if lane.worker is None:
            lane.worker = asyncio.create_task(self._drain(lane), name=f"runs {lane.key}")

    def unqueue(self, run: Run) -> bool:
        """Take a run that has not started yet out of its lane; whether it was there."""
        lane = self._lanes.get(run.session_key)
        if lane is None or run not in lane.queue:
            return False
        lane.queue.remove(run)
        return True

    def workers(self) -> list[asyncio.Task[None]]:
        return [lane.worker for lane in list(self._lanes.values()) if lane.worker is not None]

    async def _drain(self, lane: _Lane) -> None:
        try:
            while lane.queue:
                run = lane.queue.popleft()
                lane.current = run
                try:
                    await self._execute(run)
                except Exception as error:
                    log.exception("run %s broke", run.run_id)
                    if not run.done.done():
                        self._fail(run, f"internal error: {error}")
                finally:
                    lane.current = None
        finally:
            lane.worker = None
            if self._lanes.get(lane.key) is lane and not lane.busy:
                del self._lanes[lane.key]
