"""The store's worker threads: where blocking store and catalog calls run.

The event loop does not wait on disk or on another process's lock: a coroutine hands the call
to a worker with ``await workers.run(fn, *args)``. There are as many workers as the store can
serve at once (:attr:`~clawline.store.base.Store.max_concurrency`): one for SQLite, whose one
connection is only ever used from one thread at a time, the pool size for PostgreSQL.

**Short calls.** ``await workers.run_short(fn, *args)`` is for a call known to be short: one
transaction of bounded size (a run's start or end, a transcript append, a completion delivery).
With ``short_calls_inline`` (the runtime sets it) and a store that lets the calling thread take
it without waiting (:meth:`~clawline.store.base.Store.claim_now`: SQLite, not PostgreSQL), it
runs at once where it is made, when no call is waiting for or running on the workers (so it
never overtakes one made before it). A SQLite transaction of a few statements takes 0.1 to 0.5 ms;
handing it to a thread and back costs more than that and, worse, makes the two threads trade
the GIL at every statement (each one releases it): 1,000 sub-agents took ~18 % longer through
the worker (bench/README.md). Anything else, and every call the store is busy for, goes to a
worker as with :meth:`run`.

What could make a commit long is moved off the loop: the store's checkpoints are deferred
(:meth:`~clawline.store.base.Store.defer_checkpoints`: not inside whichever commit fills the
WAL) and run on a worker once due, after a call. What can still hold a short call on the loop
is another *process* writing the same SQLite file (the write lock; ``busy_timeout``, 5 s at
most): a second gateway cannot (the instance lock), a ``clawline … --local`` command can, for
as long as its transaction.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from clawline.store.base import Store

P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger("clawline.store")


def _log_failure(done: Future[None]) -> None:
    error = done.exception()
    if error is not None:
        log.warning("store checkpoint failed: %s", error)


class StoreWorkers:
    def __init__(
        self,
        store: Store | None,
        *,
        threads: int | None = None,
        name: str = "",
        short_calls_inline: bool = False,
    ) -> None:
        """As many workers as ``store`` serves at once, or ``threads`` of them (a part with
        connections of its own, e.g. the shared event log, so its calls never queue behind
        the store's). ``short_calls_inline``: :meth:`run_short` may run calls at once (module
        docstring); the store's checkpoints are then deferred to the workers."""
        count = threads if threads is not None else store.max_concurrency if store else 1
        self._executor = ThreadPoolExecutor(
            max_workers=count, thread_name_prefix=name or "clawline-store"
        )
        self._store = store if short_calls_inline else None
        if self._store is not None:
            self._store.defer_checkpoints()
        self._pending = 0
        """Calls handed to the workers and not finished yet."""
        self._pending_lock = threading.Lock()
        self._checkpoint: Future[None] | None = None
        self.calls = 0
        """How many calls have been handed to the workers so far (``clawline.testing.drained``
        reads it to see whether work is still going on)."""
        self.inline_calls = 0
        """How many :meth:`run_short` calls ran at once, on the calling thread."""

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on a worker and return its result."""
        loop = asyncio.get_running_loop()
        self.calls += 1
        with self._pending_lock:
            self._pending += 1
        try:
            return await loop.run_in_executor(self._executor, self._counted, fn, args, kwargs)
        finally:
            self._checkpoint_if_due()

    async def run_short(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """:meth:`run` for a short call, which may run at once (module docstring)."""
        store = self._store
        if store is None or self._pending or not store.claim_now():
            return await self.run(fn, *args, **kwargs)
        try:
            self.calls += 1
            self.inline_calls += 1
            result = fn(*args, **kwargs)
        finally:
            store.release_claim()
        self._checkpoint_if_due()
        return result

    def _counted(
        self, fn: Callable[..., T], args: tuple[object, ...], kwargs: dict[str, object]
    ) -> T:
        try:
            return fn(*args, **kwargs)
        finally:
            with self._pending_lock:
                self._pending -= 1

    def _checkpoint_if_due(self) -> None:
        store = self._store
        if store is None or not store.checkpoint_due():
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        # Owned by the executor: close() waits for it.
        self._checkpoint = self._executor.submit(store.checkpoint)
        self._checkpoint.add_done_callback(_log_failure)

    def close(self) -> None:
        """Wait for running calls to finish and stop the workers."""
        self._executor.shutdown(wait=True)
