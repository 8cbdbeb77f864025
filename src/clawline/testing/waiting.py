"""Waiting for conditions, not for time: :func:`eventually`, :func:`settled` and :func:`drained`.

A test that needs something to have happened polls for it with a deadline (:func:`eventually`);
a test that needs everything to have happened waits until the runtime is idle
(:func:`settled`): no run accepted, queued or running, no run-end hook, no agent-to-agent
exchange, no completion delivery under way — and it stays so for a few turns of the event loop,
so that work the last of them kicked off is seen too.

A test that shows something does *not* happen while work is held (a gate, a full lane) cannot
wait for idleness: the runtime stays busy. It waits until the runtime is *drained*
(:func:`drained`): everything that could run without a new outside event has run — no store
call made or queued, no domain event published, no task started or finished, for a few round
trips through the store worker in a row. What has not happened by then cannot happen without one.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawline.runtime import Runtime

POLL_S = 0.002
CALM_ROUNDS = 5


async def eventually(
    check: Callable[[], bool | Awaitable[bool]],
    *,
    timeout: float = 10.0,
    what: str = "the condition",
) -> None:
    """Poll ``check`` (plain or async) until it is true; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        answer = check()
        if inspect.isawaitable(answer):
            answer = await answer
        if answer:
            return
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(POLL_S)


async def settled(runtime: Runtime, *, timeout: float = 10.0) -> None:
    """Wait until ``runtime`` is idle (:attr:`Runtime.busy <clawline.runtime.Runtime.busy>`
    false for :data:`CALM_ROUNDS` polls in a row); fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    calm = 0
    while calm < CALM_ROUNDS:
        if loop.time() >= deadline:
            raise AssertionError(f"the runtime did not come to rest within {timeout} s")
        calm = 0 if runtime.busy else calm + 1
        await asyncio.sleep(POLL_S)


async def drained(runtime: Runtime, *, timeout: float = 10.0) -> None:
    """Wait until everything ``runtime`` can do without a new outside event is done (module
    docstring); fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    workers = runtime.workers
    calm = 0
    before: tuple[int, frozenset[asyncio.Task[object]]] | None = None
    while calm < CALM_ROUNDS:
        if loop.time() >= deadline:
            raise AssertionError(f"the runtime did not drain within {timeout} s")
        calls = workers.calls
        await workers.run(_nothing)  # the store calls queued before this one have run
        for _ in range(CALM_ROUNDS):
            await asyncio.sleep(0)
        now = (runtime.events.published, frozenset(asyncio.all_tasks()))
        quiet = workers.calls == calls + 1 and now == before  # no store call but this round's
        calm = calm + 1 if quiet else 0
        before = now


def _nothing() -> None:
    return None
