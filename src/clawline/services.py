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
    from clawline.agents.runs import RunManager
    from clawline.channels.registry import ChannelRegistry
    from clawline.collab.announce import Announcer
    from clawline.collab.subagents import SubagentRegistry
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
    def channels(self) -> ChannelRegistry:
        """Channel adapters (built-in: ``webchat``); tests may assign another registry."""
        if self._channels is None:
            from clawline.channels.registry import default_channel_registry

            self._channels = default_channel_registry()
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
    def runs(self) -> RunManager:
        if self._runs is None:
            from clawline.agents.runs import RunManager

            self._runs = RunManager(self)
        return self._runs

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store or catalog call on the store thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.store.close()
