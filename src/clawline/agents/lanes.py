"""Session lanes: each session's runs execute one after another, sessions side by side.

This is OpenClaw's queue mode ``followup``: a message for a
busy session is accepted and its run starts when the runs before it have ended. A lane exists
while its session has a queued or running run; its worker task drains it and then goes away.

A run sent with ``bypass_queue`` goes to the session's *nested* lane instead: nested runs of one
session run one after another, but side by side with the session's ordinary lane. This is what
lets an agent-to-agent step run on a requester whose own turn is still running (that turn may
be the one waiting for the step; queueing behind it would deadlock until a timeout).

Lane limits: a run whose ``lane`` has a limit (``limits``, e.g. ``{"subagent": 8}`` from
``agents.defaults.subagents.maxConcurrent``) waits at the head of its session's queue until
fewer than that many runs of the lane are executing, across all sessions. It still counts as
queued (its session is busy); an abort while it waits ends it at once without running.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from clawline.agents.run import Run, RunState

log = logging.getLogger("clawline.agents")


@dataclass(eq=False)
class _Lane:
    key: str
    queue: deque[Run] = field(default_factory=deque)
    current: Run | None = None
    worker: asyncio.Task[None] | None = None
    claimed: Run | None = None
    """A run whose start is reserved (:meth:`SessionLanes.claim`): it runs first, and the
    lane's worker waits for it to be enqueued."""

    @property
    def busy(self) -> bool:
        current = self.current
        return (current is not None and current.active) or bool(self.queue) or bool(self.claimed)


_NESTED = "\x1fnested"
"""Suffix of a session's nested lane key (keys never contain control characters)."""


def _lane_key(run: Run) -> str:
    return run.session_key + _NESTED if run.bypass_queue else run.session_key


class SessionLanes:
    def __init__(
        self,
        execute: Callable[[Run], Awaitable[None]],
        fail: Callable[[Run, str], None],
        limits: Mapping[str, int] | None = None,
    ) -> None:
        self._execute = execute
        self._fail = fail
        self._lanes: dict[str, _Lane] = {}
        self._slots = {name: asyncio.Semaphore(n) for name, n in (limits or {}).items()}
        """Per-lane concurrency (``lane`` name → semaphore), across sessions."""

    def busy(self, session_key: str) -> bool:
        """Whether the session has a queued or running run. Reads only; safe to call from the
        store thread (row building) while the loop changes the lanes."""
        lanes = self._lanes
        return any(
            lane is not None and lane.busy
            for lane in (lanes.get(session_key), lanes.get(session_key + _NESTED))
        )

    def busy_sessions(self) -> frozenset[str]:
        """The sessions :meth:`busy` is true of (call on the loop)."""
        return frozenset(
            lane.key.removesuffix(_NESTED) for lane in list(self._lanes.values()) if lane.busy
        )

    def running_besides(self, run: Run) -> bool:
        """Whether another run of ``run``'s session is running right now (on either lane)."""
        for key in (run.session_key, run.session_key + _NESTED):
            lane = self._lanes.get(key)
            current = None if lane is None else lane.current
            if current is not None and current is not run and current.active:
                return True
        return False

    async def claim(self, run: Run) -> bool:
        """Reserve an immediate start for ``run``, before it is accepted: its lane is idle and
        its lane's limit has room, and the slot is taken now (the accepting transaction may
        then write the run as started). ``run`` must then be enqueued, or :meth:`unclaim`ed.
        Whether it was reserved. Never waits."""
        key = _lane_key(run)
        lane = self._lanes.get(key)
        if lane is not None and (lane.busy or lane.worker is not None):
            return False
        slot = self._slots.get(run.lane or "")
        if slot is not None:
            if slot.locked():
                return False
            await slot.acquire()  # free: returns without suspending
        if lane is None:
            lane = self._lanes[key] = _Lane(key)
        lane.claimed = run
        run.slot_held = slot is not None
        return True

    def unclaim(self, run: Run) -> None:
        """Give up the reservation :meth:`claim` made (the run was not accepted)."""
        key = _lane_key(run)
        lane = self._lanes.get(key)
        if lane is None or lane.claimed is not run:
            return
        lane.claimed = None
        if run.slot_held:
            run.slot_held = False
            self._slots[run.lane or ""].release()
        if lane.queue and lane.worker is None:
            lane.worker = asyncio.create_task(self._drain(lane), name=f"runs {key!r}")
        elif not lane.busy and lane.worker is None:
            del self._lanes[key]

    def enqueue(self, run: Run) -> None:
        key = _lane_key(run)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane(key)
        run.state = RunState.QUEUED
        if lane.claimed is run:
            lane.claimed = None
            lane.queue.appendleft(run)
        else:
            lane.queue.append(run)
        if lane.worker is None and lane.claimed is None:
            lane.worker = asyncio.create_task(self._drain(lane), name=f"runs {key!r}")

    def unqueue(self, run: Run) -> bool:
        """Take a run that has not started yet out of its lane; whether it was there."""
        lane = self._lanes.get(_lane_key(run))
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
                slot = self._slots.get(run.lane or "")
                if run.slot_held:  # taken when its start was claimed
                    run.slot_held = False
                    holding = slot is not None
                else:
                    holding = slot is not None and await _take_slot(slot, run)
                try:
                    await self._execute(run)
                except Exception as error:
                    log.exception("run %s broke", run.run_id)
                    if not run.done.done():
                        self._fail(run, f"internal error: {error}")
                finally:
                    lane.current = None
                    if holding and slot is not None:
                        slot.release()
        finally:
            lane.worker = None
            if self._lanes.get(lane.key) is lane and not lane.busy:
                del self._lanes[lane.key]


async def _take_slot(slot: asyncio.Semaphore, run: Run) -> bool:
    """Wait for a slot of the run's lane, or until the run is asked to stop (then it is ended
    unstarted by the executor); whether a slot is held."""
    if run.stop is not None:
        return False
    taking = asyncio.ensure_future(slot.acquire())
    stopping = asyncio.ensure_future(run.stop_requested.wait())
    try:
        await asyncio.wait({taking, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not taking.done():
            taking.cancel()
    if taking.done() and not taking.cancelled():
        if not run.stop_requested.is_set():
            return True
        slot.release()
    return False
