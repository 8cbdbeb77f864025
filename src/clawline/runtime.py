"""The composition root: one object that builds clawline's parts, in dependency order, from one
parsed configuration.

Nothing else constructs the parts. :meth:`Runtime.open` opens the store and builds everything
eagerly — nothing is created later as a side effect of reading an attribute — then
:meth:`Runtime.start` brings the process up (the store's instance lock, the plugins' ``startup``
hooks, crash recovery, the announce dispatcher and its sweepers) and :meth:`Runtime.stop` takes
it down again in reverse order. ``async with runtime:`` does both.

The attributes are the parts, for the adapters built on top (the gateway, the CLI) and for
tests; a part itself never receives the runtime, only what it uses.

Order of construction::

    store ─ workers ─ catalog ─ tasks ─ bus
       plugins ─ channels ─ runs (providers, tools, runner) ─ announcer ─ subagents ─ acp
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from types import TracebackType
from typing import ParamSpec, TypeVar

from clawline.acp.runtime import AcpRuntime
from clawline.acp.runtime_route import AcpSessionRouter
from clawline.agents.runs import RunManager
from clawline.channels.registry import ChannelRegistry
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.collab.announce import Announcer
from clawline.collab.bindings import run_thread_binding_sweeper
from clawline.collab.subagents import SubagentRegistry
from clawline.config import Settings
from clawline.events import DomainEvents
from clawline.keys import is_acp_key
from clawline.plugins.manager import PluginManager
from clawline.plugins.runs import observe_runs
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.rows import RowCache
from clawline.store import Store, open_store
from clawline.store.instance_lock import InstanceHolder, InstanceLock
from clawline.store.workers import StoreWorkers
from clawline.tasks.registry import TaskRegistry

__all__ = ["Runtime"]

log = logging.getLogger("clawline.runtime")

P = ParamSpec("P")
T = TypeVar("T")


class Runtime:
    """clawline's parts, built from ``settings`` over ``store`` (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        clock: Clock = SYSTEM_CLOCK,
        plugins: PluginManager | None = None,
        channels: ChannelRegistry | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.workers = StoreWorkers(store)
        """The threads that run blocking store work (``await workers.run(fn, ...)``)."""
        self.events = DomainEvents()
        """The domain event stream (:mod:`clawline.events`)."""
        self.catalog = SessionCatalog(
            store,
            clock=clock,
            default_agent_id=settings.default_agent_id,
            main_key=settings.main_key,
            events=self.events,
        )
        self.tasks = TaskRegistry(store, clock=clock)
        self.row_cache = RowCache()
        """Encoded listing rows of unchanged sessions (see :class:`RowCache`)."""
        self.instance_lock: InstanceLock = store.instance_lock()
        self.holder = InstanceHolder.this_process()
        self.plugins = plugins if plugins is not None else PluginManager.from_settings(settings)
        self.plugins.services = self
        if channels is None:
            channels = ChannelRegistry()
            self.plugins.register_channels(channels)
        self.channels = channels
        self.runs = RunManager(self)
        observe_runs(self, self.runs)
        self.announcer = Announcer(self)
        self.subagents = SubagentRegistry(self)
        self.acp = AcpRuntime(self)
        router = AcpSessionRouter(self)
        self.runs.route(is_acp_key, lambda: router)
        self._started = False
        self._stop_sweeps = asyncio.Event()
        self._binding_sweeper: asyncio.Task[None] | None = None

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        clock: Clock = SYSTEM_CLOCK,
        plugins: PluginManager | None = None,
        channels: ChannelRegistry | None = None,
    ) -> Runtime:
        """Open the configured store and build every part on it (nothing starts yet)."""
        store = open_store(
            settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
        )
        try:
            return cls(settings, store, clock=clock, plugins=plugins, channels=channels)
        except BaseException:
            store.close()
            raise

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Take the store's instance lock (another holder: :class:`~clawline.errors.StoreInUse`),
        start the plugins, end what a crash left running and start the announce dispatcher and
        the thread-binding sweeper."""
        await self.instance_lock.acquire(self.holder)
        try:
            await self.plugins.startup(self)
            await self.announcer.start()
        except BaseException:
            await self.instance_lock.release()
            raise
        self._stop_sweeps.clear()
        self._binding_sweeper = asyncio.create_task(
            run_thread_binding_sweeper(self, self._stop_sweeps), name="thread-binding-sweeper"
        )
        self._started = True

    async def stop(self) -> None:
        """End every run (status written), stop the dispatcher and the plugins, release the
        lock; the store stays open until :meth:`close`."""
        if not self._started:
            return
        self._started = False
        try:
            self._stop_sweeps.set()
            if self._binding_sweeper is not None:
                await self._binding_sweeper
                self._binding_sweeper = None
            await self.runs.shutdown()
            await self.announcer.stop()
            await self.plugins.shutdown(self)
        finally:
            await self.instance_lock.release()

    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store or catalog call on a store worker (``workers.run``)."""
        return await self.workers.run(fn, *args, **kwargs)

    def close(self) -> None:
        """Stop the store workers and close the store."""
        self.workers.close()
        self.store.close()
