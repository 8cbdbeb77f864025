"""``sessions_spawn``: start a sub-agent session that works on a task and announces its result
to the requester (docs/design-agents.md).

Before the policy checks: a channel-delivery key is refused (``sessions_spawn does not support
"<key>". …`` — OpenClaw throws it; here it is an error result with exactly that text), then the
argument types (:mod:`clawline.collab.spawn_args`), then options of the other runtime.

``runtime: "acp"`` spawns an external ACP agent (:mod:`clawline.collab.spawn_acp`, its own
checks and texts). Without ``[acp.agents]`` it answers ``ACP runtime backend is not
configured. Install and enable the acpx runtime plugin.``; OpenClaw's code for that refusal is
``ACP_BACKEND_MISSING``, which is not a spawn result code, so clawline reports it as
``errorCode: spawn_failed`` (the runtime could not be initialised).

Sub-agent checks, first failure wins (OpenClaw's order), each ``{status, error}``:

1. ``error``: ``Invalid agentId "<id>". Agent IDs must match [a-z0-9][a-z0-9_-]{0,63}. Use
   agents_list to discover valid targets.``
2. ``error``: ``mode="session" requires thread=true so the subagent can stay bound to a
   thread.``
3. ``forbidden``: ``sessions_spawn is not allowed at this depth (current depth: <d>, max:
   <m>)`` — ``maxSpawnDepth`` of the requester's agent;
4. ``forbidden``: ``sessions_spawn has reached max active children for this session
   (<n>/<max>)`` — checked again inside the spawn transaction;
5. ``forbidden``: ``sessions_spawn requires explicit agentId when requireAgentId is
   configured. Use agents_list to see allowed agent ids.``
6. ``forbidden``: ``agentId is not allowed for sessions_spawn (allowed: <list|none>)``;
   then a target the allowlist admits but no agent defines (not the requester's own agent,
   the default agent or an ``[[agents.list]]`` id; ``"*"`` admits defined agents only):
   ``agentId "<id>" is not in the configured agent registry (allowed: <targets|none>)``
   (:mod:`clawline.collab.agents_list`);
7. ``forbidden``: ``sessions_spawn sandbox="require" needs a sandboxed target runtime. …``
   (clawline has no sandboxed runtime, so ``require`` is always refused);
8. ``error``: an unknown thinking level (``Invalid thinking level "<x>". Use one of: off,
   minimal, low, medium, high, xhigh.``); a model that does not resolve is skipped with a
   warning (``modelApplied: false``, ``warning``);
9. ``thread: true``: the thread binding
   (:meth:`clawline.channels.thread_bindings.planner.ThreadPlanner.prepare_subagent_thread` texts);
   then attachments (:mod:`clawline.collab.attachments`: disabled by default);
   then the plugins' ``subagent_spawning`` hooks (``error``: the first refusal's text);
10. ``error``: ``Failed to register subagent run: <msg>`` when the spawn transaction fails.

Accepted: ``{status:"accepted", childSessionKey, runId, mode, note?, modelApplied?, warning?,
attachments?}``; the run-mode note is omitted for a cron requester.

Exactly once: a call whose spawn key (:mod:`clawline.collab.spawn_key`) is already recorded —
the same call redone after a crash cut its turn off — creates and starts nothing and answers
the original ``{status:"accepted", childSessionKey, runId, mode, note?}`` again, before any
of the checks above (for either runtime).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.lifecycle_hooks import fire_spawned, spawning_refusal
from clawline.agents.providers.base import ProviderError
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.agents.workspace import inside_workspace, workspace_for
from clawline.channels.thread_bindings.planner import (
    ThreadPlan,
    ThreadPlanner,
    ThreadRefusal,
    session_mode_error,
)
from clawline.channels.thread_bindings.planning import bind_failed_text
from clawline.collab.agents_list import not_in_registry, spawn_targets
from clawline.collab.attachments import (
    AttachmentRefused,
    PreparedAttachments,
    attachments_rel_dir,
    prepare_attachments,
    remove_attachments,
    write_attachments,
)
from clawline.collab.spawn_acp import AcpSpawner, acp_accepted_again
from clawline.collab.spawn_args import (
    THINKING_LEVELS,
    SpawnRequest,
    channel_key_refusal,
    parse_spawn_args,
    runtime_refusal,
    tool_schema,
)
from clawline.collab.spawn_key import AlreadySpawned, FirstLook, first_look, spawn_key
from clawline.collab.spawn_plan import ChildPlan, plan_child
from clawline.collab.spawn_write import ChildLimitReached, max_children_text
from clawline.collab.subagents import StartFailed, SubagentRegistry
from clawline.collab.tool_args import ArgumentError
from clawline.config import AttachmentLimits, SubagentLimits
from clawline.errors import ClawlineError, Conflict, LabelInUse
from clawline.records.collab import SubagentRun
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.config import AgentsConfig
    from clawline.plugins.manager import PluginManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.collab")

RUN_MODE_NOTE = (
    "Auto-announce is push-based. After spawning children, do NOT call sessions_list, "
    "sessions_history, exec sleep, or any polling tool. Wait for completion events to arrive as "
    "user messages, track expected child session keys, and only send your final answer after "
    "ALL expected completions arrive. If a child completion event arrives AFTER your final "
    "answer, reply ONLY with NO_REPLY."
)
SESSION_MODE_NOTE = (
    "thread-bound session stays active after this task; continue in-thread for follow-ups."
)
SANDBOX_REQUIRE = (
    'sessions_spawn sandbox="require" needs a sandboxed target runtime. Pick a sandboxed '
    'agentId or use sandbox="inherit".'
)
REQUIRE_AGENT_ID = (
    "sessions_spawn requires explicit agentId when requireAgentId is configured. Use "
    "agents_list to see allowed agent ids."
)


def _refused(message: str, status: str = "error", **extra: JSON) -> ToolResult:
    return ToolResult.error(message, status=status, **extra)


def invalid_agent_id(value: str) -> str:
    return (
        f'Invalid agentId "{value}". Agent IDs must match [a-z0-9][a-z0-9_-]{{0,63}}. '
        "Use agents_list to discover valid targets."
    )


def accepted_details(requester: str, child_key: str, run_id: str, mode: str) -> JSONObject:
    """The accepted result's ``{status, childSessionKey, runId, mode, note?}``."""
    details: JSONObject = {
        "status": "accepted",
        "childSessionKey": child_key,
        "runId": run_id,
        "mode": mode,
    }
    if mode == "session":
        details["note"] = SESSION_MODE_NOTE
    elif not keys.is_cron_key(requester):
        details["note"] = RUN_MODE_NOTE
    return details


async def _accepted_again(
    record: SubagentRun, *, store: Store, workers: StoreWorkers
) -> ToolResult:
    """The result a spawn already recorded under this call's key answered."""
    if record.runtime == "acp":
        again = await acp_accepted_again(record, RUN_MODE_NOTE, store=store, workers=workers)
        return ToolResult(again)
    mode = record.spawn_mode or "run"
    requester = record.requester_session_key
    return ToolResult(accepted_details(requester, record.child_session_key, record.run_id, mode))


def _allowed_text(allow: tuple[str, ...]) -> str:
    """OpenClaw's list: lower-cased, each once, without ``*``; ``none`` when empty."""
    listed = dict.fromkeys(item.strip().lower() for item in allow if item.strip() != "*")
    return ", ".join(listed) or "none"


class SessionsSpawnTool:
    """``sessions_spawn`` (module docstring): sub-agent children through ``subagents``, ACP
    children through ``acp``. ``config`` gives the requester's subagent limits and the agent
    registry, ``providers`` resolve a model override, ``threads`` plan ``thread: true``,
    ``attachments`` are ``tools.sessions_spawn.attachments`` and ``plugins`` run the spawn
    hooks."""

    spec = ToolSpec(
        name="sessions_spawn",
        description=(
            "Spawn a subagent session that works on a task in the background. Its result "
            "arrives later as a completion event (push-based; do not poll)."
        ),
        parameters=tool_schema(),
    )

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        config: AgentsConfig,
        providers: ProviderRegistry,
        subagents: SubagentRegistry,
        threads: ThreadPlanner,
        acp: AcpSpawner,
        plugins: PluginManager,
        attachments: AttachmentLimits,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._config = config
        self._providers = providers
        self._subagents = subagents
        self._threads = threads
        self._acp = acp
        self._plugins = plugins
        self._attachments = attachments

    @property
    def acp_spawner(self) -> AcpSpawner:
        """What spawns ``runtime: "acp"`` children."""
        return self._acp

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        refusal = channel_key_refusal(args)
        if refusal is not None:
            return _refused(refusal)
        try:
            request = parse_spawn_args(args)
        except ArgumentError as error:
            return _refused(str(error))
        refusal = runtime_refusal(request)
        if refusal is not None:
            return _refused(refusal)
        requester = self._catalog.canonical(ctx.session_key)
        store, workers = self._store, self._workers
        acp = request.runtime == "acp"  # the ACP spawner reads the requester itself
        look = await first_look(
            ctx,
            requester,
            store=store,
            workers=workers,
            requester_too=not acp,
            turn_entry=not request.thread,
            ahead=acp
            or request.thread
            or bool(request.attachments)
            or self._plugins.implements("subagent_spawning"),
        )
        if look.earlier is not None:
            return await _accepted_again(look.earlier, store=store, workers=workers)
        if acp:
            return await self._acp.spawn(ctx, request, RUN_MODE_NOTE)
        return await _Spawn(self, ctx, request, look).run()


class _Spawn:
    """One sub-agent spawn (the checks above, then OpenClaw's spawn sequence)."""

    def __init__(
        self, tool: SessionsSpawnTool, ctx: ToolContext, request: SpawnRequest, look: FirstLook
    ) -> None:
        self.tool = tool
        self.ctx = ctx
        self.request = request
        self.requester = tool._catalog.canonical(ctx.session_key)
        self.look = look

    async def run(self) -> ToolResult:
        tool, request, requester = self.tool, self.request, self.requester
        entry = self.look.requester_entry
        config = tool._config
        requester_agent = keys.agent_id_of(requester)
        limits = config.resolve_agent(requester_agent).subagents
        target = requester_agent
        if request.agent_id is not None:
            if not keys.is_valid_agent_id(request.agent_id):
                return _refused(invalid_agent_id(request.agent_id))
            target = request.agent_id.lower()
        if request.mode == "session" and not request.thread:
            return _refused(session_mode_error("subagent"))
        depth = (entry.spawn_depth if entry is not None else None) or 0
        if depth >= limits.max_spawn_depth:
            return _refused(
                f"sessions_spawn is not allowed at this depth (current depth: {depth}, max: "
                f"{limits.max_spawn_depth})",
                "forbidden",
            )
        refusal = self._after_the_limit(limits, requester_agent, target)
        active = self.look.active
        if active is None and refusal is not None:
            # The limit comes first: a spawn refused for something else is refused for it
            # when the limit refuses it too (the transaction would check it otherwise).
            tool_store = tool._store
            active = await tool._workers.run(tool_store.runs.count_active, requester)
        if active is not None and active >= limits.max_children_per_agent:
            return _refused(max_children_text(active, limits.max_children_per_agent), "forbidden")
        if refusal is not None:
            return refusal
        thinking = request.thinking.lower() if request.thinking is not None else None
        model, model_applied, warning = self._model()
        target_agent = config.resolve_agent(target)
        workspace = self.ctx.workspace
        if not inside_workspace(target_agent, workspace):
            workspace = workspace_for(target_agent, None)  # another agent's own files (real path)
        timeout = request.run_timeout_seconds
        plan = plan_child(
            requester=requester,
            requester_depth=depth,
            max_depth=limits.max_spawn_depth,
            target_agent_id=target,
            task=request.task,
            label=request.label,
            mode=request.mode,
            cleanup=request.cleanup,
            workspace_dir=str(workspace),
            run_timeout_seconds=limits.run_timeout_seconds if timeout is None else timeout,
            expects_completion_message=request.expects_completion_message,
            model=model,
            thinking=thinking,
            spawn_key=spawn_key(self.ctx),
        )
        thread: ThreadPlan | None = None
        if request.thread:
            prepared = await tool._threads.prepare_subagent_thread(
                requester_session_key=requester,
                child_session_key=plan.child_key,
                agent_id=target,
                label=request.label,
                mode=request.mode,
                requester_entry=entry,
            )
            if isinstance(prepared, ThreadRefusal):
                return _refused(prepared.error)
            thread = prepared
        attachments: PreparedAttachments | None = None
        if request.attachments:
            try:
                attachments = prepare_attachments(request.attachments, tool._attachments)
            except AttachmentRefused as error:
                return _refused(str(error))
        plugin_refusal = await spawning_refusal(
            plugins=tool._plugins,
            requester=requester,
            requester_run_id=self.ctx.run_id,
            child_key=plan.child_key,
            agent_id=target,
            label=plan.label,
            mode=plan.mode,
            runtime="subagent",
            task=plan.task,
        )
        if plugin_refusal is not None:
            return _refused(plugin_refusal)
        return await self._start(
            plan,
            Path(workspace),
            attachments,
            model_applied,
            warning,
            max_children=limits.max_children_per_agent,
            thread=thread,
        )

    def _after_the_limit(
        self, limits: SubagentLimits, requester_agent: str, target: str
    ) -> ToolResult | None:
        """The first refusal of the checks after the active-children limit, if any."""
        request, config = self.request, self.tool._config
        if limits.require_agent_id and request.agent_id is None:
            return _refused(REQUIRE_AGENT_ID, "forbidden")
        if not limits.allows_target(requester_agent, target):
            allowed = _allowed_text(limits.allow_agents)
            return _refused(
                f"agentId is not allowed for sessions_spawn (allowed: {allowed})", "forbidden"
            )
        targets = spawn_targets(config, requester_agent, self.tool._catalog.default_agent_id)
        if target not in targets.defined:
            return _refused(not_in_registry(target, targets), "forbidden")
        if request.sandbox == "require":
            return _refused(SANDBOX_REQUIRE, "forbidden")
        thinking = request.thinking.lower() if request.thinking is not None else None
        if thinking is not None and thinking not in THINKING_LEVELS:
            return _refused(
                f'Invalid thinking level "{request.thinking}". Use one of: '
                f"{', '.join(THINKING_LEVELS)}."
            )
        return None

    def _model(self) -> tuple[str | None, bool | None, str | None]:
        """The model override: ``(model, modelApplied, warning)``."""
        model = self.request.model
        if model is None:
            return None, None, None
        try:
            self.tool._providers.resolve(model)
        except ProviderError as error:
            log.warning("sessions_spawn: model %r skipped: %s", model, error)
            return None, False, f"model not applied: {error}"
        return model, True, None

    async def _start(
        self,
        plan: ChildPlan,
        workspace: Path,
        attachments: PreparedAttachments | None,
        model_applied: bool | None,
        warning: str | None,
        *,
        max_children: int,
        thread: ThreadPlan | None,
    ) -> ToolResult:
        """Write the attachments, then the child with its first run in one transaction
        (:meth:`SubagentRegistry.spawn`), the accepted result too when the turn lets the tool
        record it (``ToolContext.record_result``); a refusal removes the attachments again."""
        tool = self.tool
        store, workers = tool._store, tool._workers
        prompt = plan.system_prompt()
        report: JSONObject | None = None
        rel_dir = attachments_rel_dir(plan.child_key)
        if attachments is not None:
            try:
                await asyncio.to_thread(write_attachments, workspace, rel_dir, attachments)
            except OSError as error:
                await asyncio.to_thread(remove_attachments, workspace, rel_dir)
                return _refused(f"attachments could not be written: {error.strerror or error}")
            report = attachments.report(rel_dir)
            names = ", ".join(item.name for item in attachments.files)
            prompt += f"\nAttachments: {report['count']} file(s) in {rel_dir}: {names}."
            if self.request.mount_path:
                prompt += f" (mount hint: {self.request.mount_path})"
        details = accepted_details(self.requester, plan.child_key, plan.run_id, plan.mode)
        if model_applied is not None:
            details["modelApplied"] = model_applied
        if warning is not None:
            details["warning"] = warning
        if report is not None:
            details["attachments"] = report
        accepted = ToolResult(details)
        record = self.ctx.record_result
        try:
            await tool._subagents.spawn(
                plan,
                max_children=max_children,
                thread=thread,
                extra_system_prompt=prompt,
                also=None if record is None else lambda work: record(work, accepted),
            )
        except ClawlineError as error:
            if attachments is not None:
                await asyncio.to_thread(remove_attachments, workspace, rel_dir)
            if isinstance(error, AlreadySpawned):
                return await _accepted_again(error.record, store=store, workers=workers)
            if isinstance(error, ChildLimitReached):
                return _refused(error.message, "forbidden")
            if isinstance(error, StartFailed):
                return _refused(error.message, childSessionKey=plan.child_key, runId=plan.run_id)
            if isinstance(error, LabelInUse):
                return _refused(error.message)
            if isinstance(error, Conflict) and thread is not None:
                return _refused(bind_failed_text(error.message))
            return _refused(f"Failed to register subagent run: {error.message}")
        await fire_spawned(
            plugins=self.tool._plugins,
            requester=self.requester,
            child_key=plan.child_key,
            run_id=plan.run_id,
            agent_id=plan.target_agent_id,
            label=plan.label,
            mode=plan.mode,
            runtime="subagent",
        )
        return accepted
