"""``sessions_spawn`` with ``runtime: "acp"``: an external ACP agent as a child session
(docs/collaboration.md, "ACP children").

Checks, first failure wins, each ``{status, error, errorCode}``:

1. ``forbidden`` ``acp_disabled``: ``ACP is disabled by policy (`acp.enabled=false`).``, then
   ``ACP dispatch is disabled by policy (`acp.dispatch.enabled=false`).``;
2. ``error`` ``requester_session_required``: ``sessions_spawn streamTo="parent" requires an
   active requester session context.`` (``streamTo: "parent"`` from a session that does not
   exist);
3. ``forbidden`` ``runtime_policy``: ``sessions_spawn sandbox="require" is unsupported for
   runtime="acp" because ACP sessions run outside the sandbox. …`` (clawline has no sandboxed
   sessions, so OpenClaw's sandboxed-requester text never applies);
4. ``error`` ``thread_required``: ``mode="session" requires thread=true so the ACP session can
   stay bound to a thread.``;
5. ``error`` ``spawn_failed``: ``ACP runtime backend is not configured. Install and enable the
   acpx runtime plugin.`` — no ``[acp.agents.<id>]`` at all (checked before the target, so that
   a gateway without ACP agents answers this whatever the arguments);
6. target = ``agentId``, else ``acp.defaultAgent`` (lower-cased): ``error``
   ``target_agent_required`` ``ACP target agent is not configured. Pass `agentId` in
   `sessions_spawn` or set `acp.defaultAgent` in config.``; ``forbidden`` ``agent_forbidden``
   ``ACP agent "<id>" is not allowed by policy.`` (``acp.allowedAgents``); ``error``
   ``spawn_failed`` ``ACP agent "<id>" is not configured. Add [acp.agents.<id>] with its
   command.`` (clawline's text);
7. ``thread: true``: the binding
   (:meth:`~clawline.channels.thread_bindings.planner.ThreadPlanner.prepare_acp_thread`,
   ``thread_binding_invalid``);
8. ``error`` ``cwd_resolution_failed``: ``ACP cwd "<cwd>" is not a directory.`` (the spawn's
   ``cwd``, relative to the requester's workspace; else the agent's ``cwd``; else the
   requester's workspace);
9. ``error`` ``spawn_failed``: ``Failed to register ACP run: <msg>`` (the spawn transaction;
   a label in use answers its own text); the agent's start, ``initialize``, ``session/new`` or
   ``session/load`` failing answers its text (e.g. ``ACP agent does not support
   session/load``, ``ACP process exited with code 1``) and deletes what step 9 wrote;
10. ``error`` ``dispatch_failed``: the first run could not be queued.

Accepted: ``{status: "accepted", childSessionKey, runId, mode, note?, streamLogPath?}``; notes:
run mode → the push-based announce note (not for a cron requester, nor with ``streamTo``), with
a thread → ``initial ACP task queued in isolated session; follow-ups continue in the bound
thread.``; session mode → ``thread-bound ACP session stays active after this task; continue
in-thread for follow-ups.``.

A call whose spawn key is already recorded (:mod:`clawline.collab.spawn_key`) gets that
child's accepted result again (:func:`acp_accepted_again`); no agent is started.

:class:`AcpSpawner` does it, built with the ``[acp]`` settings (in the agent configuration),
the thread planner, the ACP runtime (its agent processes and relays), the run manager and the
plugin manager (the spawn hooks).

What the spawn needs of the ACP runtime is :class:`AcpSpawnRuntime`, defined here: collab does
not import :mod:`clawline.acp`, whose runtime (``clawline.collab.acp``) sits above collab and
satisfies it (``AcpRuntime``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from clawline import keys
from clawline.agents.lifecycle_hooks import fire_spawned, spawning_refusal
from clawline.agents.tools.base import ToolContext, ToolResult
from clawline.agents.workspace import ensure_workspace
from clawline.channels.thread_bindings.planner import (
    ThreadPlan,
    ThreadPlanner,
    ThreadRefusal,
    session_mode_error,
)
from clawline.collab.spawn_acp_plan import AcpChildPlan, AcpChildren, ChildRefused
from clawline.collab.spawn_args import SpawnRequest
from clawline.collab.spawn_key import AlreadySpawned, spawn_key
from clawline.config import ACP_DISABLED, ACP_DISPATCH_DISABLED, AcpAgentConfig
from clawline.errors import AcpAgentError, ClawlineError
from clawline.records.collab import SubagentRun
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.config import AgentsConfig
    from clawline.plugins.manager import PluginManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

ACP_STREAM_NEEDS_REQUESTER = (
    'sessions_spawn streamTo="parent" requires an active requester session context.'
)
ACP_SANDBOX_REQUIRE = (
    'sessions_spawn sandbox="require" is unsupported for runtime="acp" because ACP sessions '
    'run outside the sandbox. Use runtime="subagent" or sandbox="inherit".'
)
ACP_BACKEND_MISSING = (
    "ACP runtime backend is not configured. Install and enable the acpx runtime plugin."
)
ACP_TARGET_REQUIRED = (
    "ACP target agent is not configured. Pass `agentId` in `sessions_spawn` or set "
    "`acp.defaultAgent` in config."
)
ACP_RUN_THREAD_NOTE = (
    "initial ACP task queued in isolated session; follow-ups continue in the bound thread."
)
ACP_SESSION_NOTE = (
    "thread-bound ACP session stays active after this task; continue in-thread for follow-ups."
)


class OpenedAcpChild(Protocol):
    """A child whose agent has opened (or loaded) its ACP session."""

    @property
    def acp_session_id(self) -> str | None:
        """The agent's id of the child's ACP session."""
        ...


@dataclass(frozen=True, slots=True)
class ParentRelayTarget:
    """Where a ``streamTo: "parent"`` spawn run is relayed: the requester's session, with the
    child (key, ACP agent, clawline session id: the stream log's name) the relay speaks for."""

    parent_key: str
    child_key: str
    agent_id: str
    child_session_id: str


class ParentRelayHandle(Protocol):
    """The relay of a ``streamTo: "parent"`` spawn run, as the spawn sees it."""

    @property
    def log_path(self) -> Path:
        """The run's stream log (the accepted result's ``streamLogPath``)."""
        ...

    async def start(self) -> None:
        """Post the relay's first message to the parent."""
        ...


class AcpSpawnRuntime(Protocol):
    """What an ACP spawn needs of the acp spawn runtime: start a child's agent, watch the spawn
    run's end (with its relay to the parent), and stop the child again."""

    async def open(
        self,
        *,
        session_key: str,
        session_id: str,
        agent: AcpAgentConfig,
        cwd: str,
        mode: str,
        resume_session_id: str | None = None,
    ) -> OpenedAcpChild:
        """Start the agent for the child ``session_key`` and open (or load) its ACP session;
        raises :class:`~clawline.errors.AcpAgentError` with the reason."""
        ...

    def watch(
        self,
        run_id: str,
        task_id: str,
        *,
        tracked: bool,
        relay_to: ParentRelayTarget | None = None,
    ) -> ParentRelayHandle | None:
        """Write the end of the spawn run when it ends (its sub-agent run record when
        ``tracked``, else its task); with ``relay_to``, relay the run to the parent and return
        the relay, not started."""
        ...

    def unwatch(self, run_id: str) -> None:
        """Forget a watched run (the spawn was undone)."""
        ...

    def close(self, session_key: str) -> Awaitable[None] | None:
        """Stop the child's agent, if started; the awaitable ends when it is gone."""
        ...


def _refused(message: str, code: str, status: str = "error", **extra: JSON) -> ToolResult:
    return ToolResult.error(message, status=status, errorCode=code, **extra)


def acp_accepted(
    requester: str,
    child_key: str,
    run_id: str,
    mode: str,
    *,
    thread: bool,
    log_path: str | None,
    run_note: str,
) -> JSONObject:
    """The accepted result of an ACP spawn (module docstring)."""
    details: JSONObject = {
        "status": "accepted",
        "childSessionKey": child_key,
        "runId": run_id,
        "mode": mode,
    }
    if mode == "session":
        details["note"] = ACP_SESSION_NOTE
    elif thread:
        details["note"] = ACP_RUN_THREAD_NOTE
    elif log_path is None and not keys.is_cron_key(requester):
        details["note"] = run_note
    if log_path is not None:
        details["streamLogPath"] = log_path
    return details


async def acp_accepted_again(
    record: SubagentRun, run_note: str, *, store: Store, workers: StoreWorkers
) -> JSONObject:
    """The accepted result of the ACP spawn that wrote ``record`` (only children without
    ``streamTo: "parent"`` have one, so there is no stream log to name)."""
    child = record.child_session_key
    bound = await workers.run(store.bindings.for_session, child, active_only=False)
    return acp_accepted(
        record.requester_session_key,
        child,
        record.run_id,
        record.spawn_mode or "run",
        thread=bool(bound),
        log_path=None,
        run_note=run_note,
    )


class AcpSpawner:
    """ACP spawns (module docstring). ``config`` gives ``[acp]`` and the requester's agent's
    default run timeout; ``children`` writes the children."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        runs: RunManager,
        acp: AcpSpawnRuntime,
        threads: ThreadPlanner,
        children: AcpChildren,
        plugins: PluginManager,
        config: AgentsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._runs = runs
        self._acp = acp
        self._threads = threads
        self._children = children
        self._plugins = plugins
        self._config = config

    async def accepted_again(self, record: SubagentRun, run_note: str) -> JSONObject:
        """:func:`acp_accepted_again` on this gateway's store."""
        return await acp_accepted_again(record, run_note, store=self._store, workers=self._workers)

    async def spawn(self, ctx: ToolContext, request: SpawnRequest, run_note: str) -> ToolResult:
        """Spawn an ACP child for ``ctx``'s session; ``run_note`` is the run-mode note."""
        config = self._config.acp
        if not config.enabled:
            return _refused(ACP_DISABLED, "acp_disabled", "forbidden")
        if not config.dispatch_enabled:
            return _refused(ACP_DISPATCH_DISABLED, "acp_disabled", "forbidden")
        requester = self._catalog.canonical(ctx.session_key)
        entry = await self._workers.run(self._store.get, requester)
        if request.stream_to == "parent" and entry is None:
            return _refused(ACP_STREAM_NEEDS_REQUESTER, "requester_session_required")
        if request.sandbox == "require":
            return _refused(ACP_SANDBOX_REQUIRE, "runtime_policy", "forbidden")
        if request.mode == "session" and not request.thread:
            return _refused(session_mode_error("acp"), "thread_required")
        if not config.configured:
            return _refused(ACP_BACKEND_MISSING, "spawn_failed")
        target = (request.agent_id or config.default_agent or "").strip().lower()
        if not target:
            return _refused(ACP_TARGET_REQUIRED, "target_agent_required")
        if not config.allows(target):
            return _refused(
                f'ACP agent "{target}" is not allowed by policy.', "agent_forbidden", "forbidden"
            )
        agent = config.agents.get(target)
        if agent is None:
            return _refused(
                f'ACP agent "{target}" is not configured. Add [acp.agents.{target}] with its '
                "command.",
                "spawn_failed",
            )
        child_key = keys.acp_session_key(target, str(uuid.uuid4()))
        thread: ThreadPlan | None = None
        if request.thread:
            prepared = await self._threads.prepare_acp_thread(
                requester_session_key=requester,
                child_session_key=child_key,
                agent_id=target,
                label=request.label,
                requester_entry=entry,
            )
            if isinstance(prepared, ThreadRefusal):
                return _refused(prepared.error, prepared.error_code or "thread_binding_invalid")
            thread = prepared
        workspace = await asyncio.to_thread(ensure_workspace, ctx.workspace)
        cwd = await asyncio.to_thread(_resolve_cwd, request.cwd, agent, workspace)
        if isinstance(cwd, str):
            return _refused(cwd, "cwd_resolution_failed")
        limits = self._config.resolve_agent(keys.agent_id_of(requester)).subagents
        plan = AcpChildPlan.build(
            request,
            requester=requester,
            requester_depth=(entry.spawn_depth if entry is not None else None) or 0,
            child_key=child_key,
            agent_id=target,
            cwd=str(cwd),
            workspace_dir=str(workspace),
            default_timeout_s=limits.run_timeout_seconds,
            spawn_key=spawn_key(ctx),
        )
        start = _Start(
            plan,
            agent,
            thread,
            run_note,
            requester_run_id=ctx.run_id,
            spawner=self,
            children=self._children,
            acp=self._acp,
            runs=self._runs,
            plugins=self._plugins,
        )
        return await start.run()


def _resolve_cwd(raw: str | None, agent: AcpAgentConfig, workspace: Path) -> Path | str:
    """The agent's absolute working directory, or the refusal text."""
    if raw is None:
        chosen = agent.cwd or workspace
    else:
        given = Path(raw).expanduser()
        chosen = given if given.is_absolute() else workspace / given
    if not chosen.is_dir():
        return f'ACP cwd "{raw if raw is not None else chosen}" is not a directory.'
    return chosen.resolve()


class _Start:
    """Steps 9-10 and the accepted result."""

    def __init__(
        self,
        plan: AcpChildPlan,
        agent: AcpAgentConfig,
        thread: ThreadPlan | None,
        run_note: str,
        *,
        requester_run_id: str,
        spawner: AcpSpawner,
        children: AcpChildren,
        acp: AcpSpawnRuntime,
        runs: RunManager,
        plugins: PluginManager,
    ) -> None:
        self.plan = plan
        self.agent = agent
        self.thread = thread
        self.run_note = run_note
        self.requester_run_id = requester_run_id
        self.spawner = spawner
        self.children = children
        self.acp = acp
        self.runs = runs
        self.plugins = plugins
        self.dispatched = False

    async def run(self) -> ToolResult:
        plan = self.plan
        refusal = await spawning_refusal(
            plugins=self.plugins,
            requester=plan.requester,
            requester_run_id=self.requester_run_id,
            child_key=plan.child_key,
            agent_id=plan.agent_id,
            label=plan.label,
            mode=plan.mode,
            runtime="acp",
            task=plan.task,
        )
        if refusal is not None:
            return _refused(refusal, "spawn_failed")
        try:
            child = await self.children.create(plan, self.thread)
        except AlreadySpawned as error:
            return ToolResult(await self.spawner.accepted_again(error.record, self.run_note))
        except ChildRefused as error:
            return _refused(error.message, error.code)
        try:
            return await self._launch(child.session_id)
        except BaseException:
            # cancelled (the requester's run was aborted) or broken before the run was queued:
            # nothing may stay behind
            if not self.dispatched:
                await asyncio.shield(self._undo())
            raise

    async def _launch(self, session_id: str) -> ToolResult:
        plan, acp = self.plan, self.acp
        try:
            opened = await acp.open(
                session_key=plan.child_key,
                session_id=session_id,
                agent=self.agent,
                cwd=plan.cwd,
                mode=plan.runtime_mode,
                resume_session_id=plan.resume_session_id,
            )
        except AcpAgentError as error:
            await self._undo()
            return _refused(error.message, "spawn_failed")
        await self.children.record_session(plan, opened.acp_session_id)
        relay_to = None
        if plan.stream_to_parent:
            relay_to = ParentRelayTarget(
                parent_key=plan.requester,
                child_key=plan.child_key,
                agent_id=plan.agent_id,
                child_session_id=session_id,
            )
        relay = acp.watch(
            plan.run_id, plan.task_id, tracked=not plan.stream_to_parent, relay_to=relay_to
        )
        if relay is not None:
            await relay.start()
        # From here a cancelled caller leaves the run to finish: send() has no await before it
        # reserves the run, and it shields the rest.
        self.dispatched = True
        try:
            await self.runs.send(
                session_key=plan.child_key,
                message=plan.task,
                idempotency_key=plan.run_id,
                origin="agent",
                lane="subagent",
                timeout_ms=plan.run_timeout_seconds * 1000,
            )
        except ClawlineError as error:
            await self._undo()
            return _refused(error.message, "dispatch_failed")
        await fire_spawned(
            plugins=self.plugins,
            requester=plan.requester,
            child_key=plan.child_key,
            run_id=plan.run_id,
            agent_id=plan.agent_id,
            label=plan.label,
            mode=plan.mode,
            runtime="acp",
        )
        return ToolResult(self._accepted(None if relay is None else str(relay.log_path)))

    async def _undo(self) -> None:
        """Stop the agent (if started) and delete what the spawn wrote."""
        plan, acp = self.plan, self.acp
        acp.unwatch(plan.run_id)
        closing = acp.close(plan.child_key)
        await self.children.discard(plan)
        if closing is not None:
            await closing

    def _accepted(self, log_path: str | None) -> JSONObject:
        plan = self.plan
        return acp_accepted(
            plan.requester,
            plan.child_key,
            plan.run_id,
            plan.mode,
            thread=self.thread is not None,
            log_path=log_path,
            run_note=self.run_note,
        )
