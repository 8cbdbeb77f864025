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
       plugins ─ channels ─ providers ─ agents config ─ runs ─ plugin host
       recovery, sweepers ─ announcer ─ subagents ─ thread bindings ─ acp
       session tools, file tools (registered) ─ tool host ─ the agent runner (runs.runner)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import TracebackType
from typing import ParamSpec, TypeVar

from clawline.agents.handoff import HANDOFF_POLL_S, RunPlacement
from clawline.agents.lifecycle_hooks import PluginRunObserver
from clawline.agents.plugin import (
    FILE_TOOLS_PLUGIN,
    PROVIDERS_PLUGIN,
    FileToolsPlugin,
    ProvidersPlugin,
)
from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.run_manager import RunManager
from clawline.agents.tools.registry import ToolRegistry
from clawline.agents.turn import AgentRunner
from clawline.background import Background
from clawline.channels.commands import ChannelCommands
from clawline.channels.connections import ChannelConnections
from clawline.channels.inbox import ChannelInbox
from clawline.channels.outbox_delivery import OutboxDelivery
from clawline.channels.plugin import ChannelsPlugin
from clawline.channels.registry import ChannelRegistry
from clawline.channels.thread_bindings.living import SWEEP_INTERVAL_MS as BINDING_SWEEP_INTERVAL_MS
from clawline.channels.thread_bindings.living import ThreadBindings
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.collab.acp.acp_runner import AcpRunner
from clawline.collab.acp.children import AcpRuntime
from clawline.collab.acp.router import AcpSessionRouter
from clawline.collab.announce import ANNOUNCE_TICK_MS, Announcer
from clawline.collab.completion import STOPPED_ERROR
from clawline.collab.plugin import COLLAB_PLUGIN, CollabPlugin
from clawline.collab.recovery import StartupRecovery
from clawline.collab.subagents import SubagentRegistry
from clawline.collab.sweepers import ARCHIVE_SWEEP_INTERVAL_MS, Sweepers
from clawline.collab.tools import CollabTools
from clawline.config import Settings, agents_config
from clawline.events import DomainEvent, DomainEvents, OutboxQueued
from clawline.instances import InstanceRegistration
from clawline.keys import is_acp_key
from clawline.plugins.host import PluginHost
from clawline.plugins.manager import PluginManager
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.listing_rows import RowCache
from clawline.store import Store, open_store
from clawline.store.instance_lock import InstanceHolder
from clawline.store.workers import StoreWorkers
from clawline.tasks.registry import TaskRegistry
from clawline.tasks.sweeper import SWEEP_INTERVAL_MS as TASK_SWEEP_INTERVAL_MS

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
        self.workers = StoreWorkers(store, short_calls_inline=True)
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
        self.tasks = TaskRegistry(store, clock=clock, events=self.events)
        self.row_cache = RowCache()
        """Encoded listing rows of unchanged sessions (see :class:`RowCache`)."""
        self.instance = InstanceRegistration(
            store=store,
            workers=self.workers,
            clock=clock,
            lock=store.instance_lock(),
            holder=InstanceHolder.this_process(),
            lease_ms=settings.config.gateway.instance_lease_ms,
        )
        """This process among its store's gateway instances (:mod:`clawline.instances`)."""
        self.plugins = plugins if plugins is not None else PluginManager.from_settings(settings)
        # --- channels: the built-in adapter (webchat), then the plugins'
        self.plugins.add(
            ChannelsPlugin(settings.config.channels),
            ChannelsPlugin.PLUGIN_ID,
            source="builtin",
            origin="clawline.channels",
        )
        if channels is None:
            channels = ChannelRegistry()
            self.plugins.register_channels(channels)
        self.channels = channels
        # --- agents: the model providers (the built-ins', then the plugins'), the agent
        # configuration (a model may name a plugin's provider), the run manager
        agent_settings = settings.config.agents
        providers = ProviderRegistry(offline_delay_ms=agent_settings.echo_delay_ms)
        self.plugins.add(
            ProvidersPlugin(offline_delay_ms=agent_settings.echo_delay_ms),
            PROVIDERS_PLUGIN,
            source="builtin",
            origin="clawline.agents",
        )
        self.plugins.register_providers(providers)
        self.agents_config = agents_config(
            settings.config, settings.state_dir, plugin_providers=providers.plugin_provider_names()
        )
        """The parsed agent configuration (``[agents]``, ``[tools]``, ``[acp]``, …)."""
        providers.configure(self.agents_config)
        tools = ToolRegistry()
        self.runs = RunManager(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            events=self.events,
            settings=agent_settings,
            config=self.agents_config,
            providers=providers,
            tools=tools,
            placement=None
            if self.instance.exclusive
            else RunPlacement(store=store, instance_id=self.instance.instance_id),
        )
        # --- plugins: the host they work through, and what they hear of runs
        self.plugin_host = PluginHost(
            catalog=self.catalog,
            tasks=self.tasks,
            workers=self.workers,
            clock=clock,
            workspace_of=lambda agent_id: self.agents_config.resolve_agent(agent_id).workspace,
            allow_hardlinks=self.agents_config.fs.allow_hardlinks,
            config=settings.raw,
            settings=settings.config,
            state_dir=settings.state_dir,
        )
        self.plugins.bind(self.plugin_host)
        plugin_runs = PluginRunObserver(plugins=self.plugins, store=store, workers=self.workers)
        self.runs.on_first_run(plugin_runs.first_run)
        self.runs.on_run_end(plugin_runs.run_ended)
        # --- collaboration: start-up recovery and the sweeps, the announce inbox, the sub-agent
        # records (both hear of every run's end), the thread bindings
        self.recovery = StartupRecovery(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            tasks=self.tasks,
            clock=clock,
            config=self.agents_config,
        )
        self.sweepers = Sweepers(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            tasks=self.tasks,
            clock=clock,
            runs=self.runs,
        )
        self.announcer = Announcer(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            tasks=self.tasks,
            runs=self.runs,
            config=self.agents_config,
            recovery=self.recovery,
        )
        self.subagents = SubagentRegistry(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            tasks=self.tasks,
            runs=self.runs,
            announcer=self.announcer,
            plugins=self.plugins,
            config=self.agents_config,
            main_key=settings.main_key,
        )
        self.runs.on_run_end(self.announcer.run_ended)
        self.runs.on_run_end(self.subagents.run_ended)
        self.runs.on_end_write(self.subagents.end_write)
        self.announcer.on_delivery_done(self.subagents.delivery_done)
        self.announcer.on_recovered(self.subagents.adopt_deferred)
        self.thread_bindings = ThreadBindings(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            channels=self.channels,
            config=self.agents_config.thread_bindings,
        )
        # --- channels: inbound messages (and the channel commands), which connections this
        # instance runs (one instance per channel on a shared store), and the outbox's delivery
        # loop, woken by every commit that queued messages
        self.inbox = ChannelInbox(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            runs=self.runs,
            bindings=self.thread_bindings,
            config=settings.config,
            commands=ChannelCommands(
                catalog=self.catalog,
                store=store,
                workers=self.workers,
                clock=clock,
                bindings=self.thread_bindings,
                binding_config=self.agents_config.thread_bindings,
                config=settings.config,
            ),
        )
        self.connections = ChannelConnections(
            store=store,
            workers=self.workers,
            clock=clock,
            channels=self.channels,
            shared=not self.instance.exclusive,
        )
        """Which channel connections this instance runs (:mod:`clawline.channels.connections`)."""
        self.outbox = OutboxDelivery(
            store=store,
            workers=self.workers,
            clock=clock,
            channels=self.channels,
            connections=self.connections,
        )
        self.events.subscribe(self._wake_outbox)
        # --- acp: external agents serving ACP children
        self.acp = AcpRuntime(
            config=self.agents_config.acp,
            runs=self.runs,
            subagents=self.subagents,
            catalog=self.catalog,
            tasks=self.tasks,
            store=store,
            workers=self.workers,
            clock=clock,
            state_dir=settings.state_dir,
            shared_store=not self.instance.exclusive,
        )
        self.runs.on_run_end(self.acp.run_ended)
        self.runs.on_shutdown(self.acp.shutdown)
        self.events.subscribe(self.acp.session_event)
        router = AcpSessionRouter(
            catalog=self.catalog, workers=self.workers, runs=self.runs, acp=AcpRunner(acp=self.acp)
        )
        self.runs.route(is_acp_key, lambda: router)
        # --- tools: the session tools (built on the parts above), the file tools, and the agent
        # runner that offers them to its models. Of the built-ins, pluggy calls the last added
        # first: the file tools register before the session tools.
        collab_tools = CollabTools.build(
            catalog=self.catalog,
            store=store,
            workers=self.workers,
            clock=clock,
            tasks=self.tasks,
            runs=self.runs,
            subagents=self.subagents,
            acp=self.acp,
            channels=self.channels,
            plugins=self.plugins,
            config=self.agents_config,
            providers=providers,
            attachments=settings.config.tools.sessions_spawn.attachments,
            main_key=settings.main_key,
        )
        self.plugins.add(
            CollabPlugin(tools=collab_tools),
            COLLAB_PLUGIN,
            source="builtin",
            origin="clawline.collab",
        )
        self.plugins.add(
            FileToolsPlugin(fs=self.agents_config.fs),
            FILE_TOOLS_PLUGIN,
            source="builtin",
            origin="clawline.agents",
        )
        self.plugins.register_tools(tools)
        self.tool_host = collab_tools.host()
        """What plugin tools may ask of the gateway (``ToolContext.host``)."""
        self.runs.runner = AgentRunner(
            config=self.agents_config,
            providers=providers,
            tools=tools,
            host=self.tool_host,
            catalog=self.catalog,
            workers=self.workers,
        )
        self.background = Background(clock)
        """The task group of the background work: the periodic passes (:meth:`start`)."""
        self._started = False

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
        """Register the instance (taking the store's instance lock first; another holder:
        :class:`~clawline.store.instance_lock.StoreInUse`), start the plugins, take over the
        instances whose lease lapsed, end what no running instance answers for (recovery),
        deliver the pending completions, then start the periodic passes in the background task
        group: the announce tick, the sweeps, binding expiry, the take-over of lapsed instances
        (shared stores), and the outbox's delivery loop; last, the channel adapters whose
        connection this instance holds (:meth:`ChannelAdapter.start
        <clawline.channels.base.ChannelAdapter.start>`: a Matrix sync loop, in the same group;
        every adapter on an exclusive store) and, on a shared store, the heartbeat's attempt to
        take over the connections of the channels it does not hold."""
        instance = self.instance
        await instance.acquire()
        try:
            await self.plugins.startup()
            await instance.take_over_lapsed()
            await self.announcer.start()
        except BaseException:
            await instance.release()
            raise
        background = self.background
        background.spawn(instance.keep_lease(), name="instance heartbeat")
        if not instance.exclusive:
            background.every(
                instance.heartbeat_s, self._take_over_lapsed, name="lapsed-instance take-over"
            )
            background.every(HANDOFF_POLL_S, self.runs.take_handoffs, name="run handoffs")
        background.every(ANNOUNCE_TICK_MS / 1000, self.announcer.tick, name="announce tick")
        background.every(
            TASK_SWEEP_INTERVAL_MS / 1000,
            self.sweepers.sweep_tasks,
            name="task sweep",
            first_after=0,
        )
        background.every(
            ARCHIVE_SWEEP_INTERVAL_MS / 1000,
            self.sweepers.sweep_once,
            name="archive sweep",
            first_after=0,
        )
        background.every(
            BINDING_SWEEP_INTERVAL_MS / 1000,
            self.thread_bindings.sweep,
            name="thread-binding expiry",
            first_after=0,
        )
        background.spawn(self.outbox.run(), name="outbox delivery")
        await self.connections.start(self.inbox, background)
        if not instance.exclusive:
            self.outbox.wake()  # the channels just taken may have rows waiting
        self._started = True

    async def _take_over_lapsed(self) -> None:
        """Every heartbeat on a shared store: take over the instances whose lease lapsed and
        end what they left, then adopt what lives on of the stopped or lapsed ones — their
        deferred orchestrators, persistent ACP children and channel connections."""
        took_over = await self.instance.take_over_lapsed()
        if took_over:
            await self.recovery.recover()
        adopted = await self.subagents.adopt_deferred()
        await self.acp.adopt_children()
        if await self.connections.take_free():
            self.outbox.wake()
        if took_over or adopted:
            await self.announcer.tick()

    def _wake_outbox(self, event: DomainEvent) -> None:
        if isinstance(event, OutboxQueued):
            self.outbox.wake()

    async def stop(self) -> None:
        """Stop in order: the periodic passes, every run (status written, end hooks awaited), the
        deliveries under way, then mark the instance stopped and end what the stopped runs left
        active — their sub-agent records and tasks end ``lost: gateway stopped``, their
        completions queued for the next start (or another instance), so no task stays
        ``running`` — close the channel adapters (giving up their connections' claims), stop
        the plugins and release the lock. The store stays open until :meth:`close`."""
        if not self._started:
            return
        self._started = False
        try:
            await self.background.close()
            await self.runs.shutdown()
            await self.announcer.stop()
            await self.instance.mark_stopped()
            await self.recovery.recover(error=STOPPED_ERROR)
            await self.connections.aclose()
            await self.plugins.shutdown()
        finally:
            await self.instance.release()

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

    @property
    def busy(self) -> bool:
        """Whether any work is under way: a run (or its end hooks, or an agent-to-agent exchange
        it started), a completion delivery, a deferred orchestrator being settled. The periodic
        passes do not count (:func:`clawline.testing.settled` waits for this to turn false)."""
        return self.runs.busy or self.announcer.busy or self.subagents.busy

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store or catalog call on a store worker (``workers.run``)."""
        return await self.workers.run(fn, *args, **kwargs)

    def close(self) -> None:
        """Stop the store workers and close the store."""
        self.workers.close()
        self.store.close()
