"""The store's worker threads: where blocking store and catalog calls run.

The event loop never waits on disk or on another process's lock: a coroutine hands the call to
a worker with ``await workers.run(fn, *args)``. There are as many workers as the store can serve
at once (:attr:`~clawline.store.base.Store.max_concurrency`): one for SQLite, whose one
connection is only ever used from one thread, the pool size for PostgreSQL.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from clawline.store.base import Store

P = ParamSpec("P")
T = TypeVar("T")


class StoreWorkers:
    def __init__(self, store: Store | None, *, threads: int | None = None, name: str = "") -> None:
        """As many workers as ``store`` serves at once, or ``threads`` of them (a part with
        connections of its own, e.g. the shared event log, so its calls never queue behind
        the store's)."""
        count = threads if threads is not None else store.max_concurrency if store else 1
        self._executor = ThreadPoolExecutor(
            max_workers=count, thread_name_prefix=name or "clawline-store"
        )
        self.calls = 0
        """How many calls have been handed to the workers so far (``clawline.testing.drained``
        reads it to see whether work is still going on)."""

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on a worker and return its result."""
        loop = asyncio.get_running_loop()
        self.calls += 1
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """Wait for running calls to finish and stop the workers."""
        self._executor.shutdown(wait=True)
