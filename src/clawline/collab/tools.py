"""The built-in session tools, built with their parts: :class:`CollabTools`.

:meth:`CollabTools.build` makes every tool of :mod:`clawline.collab` from the parts the runtime
owns — ``sessions_send``, ``sessions_list``, ``sessions_history``, ``sessions_yield``,
``sessions_spawn`` (with the thread planner and the ACP spawner it uses), ``subagents`` and
``agents_list``. The collab plugin registers them (:mod:`clawline.collab.plugin`) and the tool
host answers plugin tools with four of them (:meth:`CollabTools.host`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.channels.thread_bindings.planner import ThreadPlanner
from clawline.collab.agents_list import AgentsListTool
from clawline.collab.send import SessionsSendTool
from clawline.collab.session_tools import SessionsHistoryTool, SessionsListTool, SessionsYieldTool
from clawline.collab.spawn import SessionsSpawnTool
from clawline.collab.spawn_acp import AcpSpawner, AcpSpawnRuntime
from clawline.collab.spawn_acp_plan import AcpChildren
from clawline.collab.subagents_tool import SubagentsTool
from clawline.collab.tool_host import CollabToolHost

if TYPE_CHECKING:
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.agents.run_manager import RunManager
    from clawline.agents.tools.base import Tool
    from clawline.channels.registry import ChannelRegistry
    from clawline.clock import Clock
    from clawline.collab.subagents import SubagentRegistry
    from clawline.config import AgentsConfig, AttachmentLimits
    from clawline.plugins.manager import PluginManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry


@dataclass(frozen=True, slots=True)
class CollabTools:
    send: SessionsSendTool
    list_sessions: SessionsListTool
    history: SessionsHistoryTool
    yield_turn: SessionsYieldTool
    spawn: SessionsSpawnTool
    subagents: SubagentsTool
    agents_list: AgentsListTool

    @classmethod
    def build(
        cls,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        tasks: TaskRegistry,
        runs: RunManager,
        subagents: SubagentRegistry,
        acp: AcpSpawnRuntime,
        channels: ChannelRegistry,
        plugins: PluginManager,
        config: AgentsConfig,
        providers: ProviderRegistry,
        attachments: AttachmentLimits,
        main_key: str,
    ) -> CollabTools:
        """Every session tool, with its parts. ``config`` is the parsed agent configuration
        (visibility, agent-to-agent policy, subagent limits, ``[acp]``, thread bindings),
        ``attachments`` the parsed ``tools.sessions_spawn.attachments`` and ``main_key`` the
        display form of main session keys."""
        threads = ThreadPlanner(
            catalog=catalog,
            store=store,
            workers=workers,
            channels=channels,
            config=config.thread_bindings,
        )
        children = AcpChildren(
            catalog=catalog,
            store=store,
            workers=workers,
            clock=clock,
            tasks=tasks,
            main_key=main_key,
        )
        acp_spawner = AcpSpawner(
            catalog=catalog,
            store=store,
            workers=workers,
            runs=runs,
            acp=acp,
            threads=threads,
            children=children,
            plugins=plugins,
            config=config,
        )
        return cls(
            send=SessionsSendTool(
                catalog=catalog, store=store, workers=workers, runs=runs, config=config
            ),
            list_sessions=SessionsListTool(
                catalog=catalog, store=store, workers=workers, clock=clock, runs=runs, config=config
            ),
            history=SessionsHistoryTool(
                catalog=catalog, store=store, workers=workers, config=config
            ),
            yield_turn=SessionsYieldTool(),
            spawn=SessionsSpawnTool(
                catalog=catalog,
                store=store,
                workers=workers,
                config=config,
                providers=providers,
                subagents=subagents,
                threads=threads,
                acp=acp_spawner,
                plugins=plugins,
                attachments=attachments,
            ),
            subagents=SubagentsTool(
                catalog=catalog, store=store, workers=workers, clock=clock, subagents=subagents
            ),
            agents_list=AgentsListTool(catalog=catalog, config=config),
        )

    def in_order(self) -> list[Tool]:
        """The tools in the order they are registered (and offered to a model)."""
        return [
            self.send,
            self.list_sessions,
            self.history,
            self.yield_turn,
            self.spawn,
            self.subagents,
            self.agents_list,
        ]

    def host(self) -> CollabToolHost:
        """The tool host answered by these tools."""
        return CollabToolHost(
            spawn=self.spawn,
            send=self.send,
            list_sessions=self.list_sessions,
            history=self.history,
        )
