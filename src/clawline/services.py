"""The services a running clawline process shares: store, catalog, event bus, runs.

Store calls are blocking; :meth:`Services.call` runs them on one dedicated thread so the event
loop never waits on disk or on another process's lock, and so one SQLite connection is only
ever used from one thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.config import Settings
from clawline.events import EventBus
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.rows import RowCache
from clawline.store import Store, open_store

if TYPE_CHECKING:
    from clawline.acp.runtime import AcpRuntime
    from clawline.agents.runs import RunManager
    from clawline.channels.registry import ChannelRegistry
    from clawline.collab.announce import Announcer
    from clawline.collab.subagents import SubagentRegistry
    from clawline.plugins.manager import PluginManager
    from clawline.tasks.registry import TaskRegistry

__all__ = ["Services"]

P = ParamSpec("P")
T = TypeVar("T")


class Services:
    def __init__(self, settings: Settings, store: Store, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.catalog = SessionCatalog(
            store,
            clock=clock,
            default_agent_id=settings.default_agent_id,
            main_key=settings.main_key,
        )
        self.bus = EventBus(clock=clock)
        self.row_cache = RowCache()
        """Encoded listing rows of unchanged sessions (see :class:`RowCache`)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawline-store")
        self._runs: RunManager | None = None
        self._tasks: TaskRegistry | None = None
        self._channels: ChannelRegistry | None = None
        self._subagents: SubagentRegistry | None = None
        self._announcer: Announcer | None = None
        self._acp: AcpRuntime | None = None
        self._plugins: PluginManager | None = None

    @classmethod
    def open(cls, settings: Settings, *, clock: Clock = SYSTEM_CLOCK) -> Services:
        store = open_store(settings.store_url, default_sqlite_path=settings.sqlite_path)
        return cls(settings, store, clock=clock)

    @property
    def tasks(self) -> TaskRegistry:
        if self._tasks is None:
            from clawline.tasks.registry import TaskRegistry

            self._tasks = TaskRegistry(self.store, clock=self.clock)
        return self._tasks

    @property
    def plugins(self) -> PluginManager:
        """The plugins (built-ins, entry points, ``[plugins]``), loaded on first use; tests
        may assign a manager of their own before anything else is made."""
        if self._plugins is None:
            from clawline.plugins.manager import PluginManager

            self.plugins = PluginManager.from_settings(self.settings)
        assert self._plugins is not None
        return self._plugins

    @plugins.setter
    def plugins(self, manager: PluginManager) -> None:
        manager.services = self
        self._plugins = manager

    @property
    def channels(self) -> ChannelRegistry:
        """Channel adapters registered by the plugins (built-in: ``webchat``); tests may assign
        another registry."""
        if self._channels is None:
            from clawline.channels.registry import ChannelRegistry

            channels = ChannelRegistry()
            self.plugins.register_channels(channels)
            self._channels = channels
        return self._channels

    @channels.setter
    def channels(self, registry: ChannelRegistry) -> None:
        self._channels = registry

    @property
    def subagents(self) -> SubagentRegistry:
        """Spawned children's run records: creation, completion, kill, steer."""
        if self._subagents is None:
            from clawline.collab.subagents import SubagentRegistry

            self._subagents = SubagentRegistry(self)
        return self._subagents

    @property
    def announcer(self) -> Announcer:
        """The announce dispatcher (durable completion inbox), recovery and sweepers."""
        if self._announcer is None:
            from clawline.collab.announce import Announcer

            self._announcer = Announcer(self)
        return self._announcer

    @property
    def acp(self) -> AcpRuntime:
        """The acp spawn runtime: external ACP agent processes serving ``agent:<id>:acp:…``
        children (created on first use; it loads the ACP SDK)."""
        if self._acp is None:
            from clawline.acp.runtime import AcpRuntime

            self._acp = AcpRuntime(self)
        return self._acp

    @property
    def runs(self) -> RunManager:
        if self._runs is None:
            from clawline.acp.runtime_route import AcpSessionRouter
            from clawline.agents.runs import RunManager
            from clawline.keys import is_acp_key
            from clawline.plugins.runs import observe_runs

            self._runs = RunManager(self)
            observe_runs(self, self._runs)
            router = AcpSessionRouter(self)
            self._runs.route(is_acp_key, lambda: router)
        return self._runs

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store or catalog call on the store thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.store.close()
