"""The agent turn loop: the default :class:`~clawline.agents.runner.Runner`.

One run = one turn:

1. resolve the session's agent (:meth:`AgentsConfig.resolve_agent`), its model provider, the
   tools its session may use (:meth:`ToolRegistry.tools_for`) and its workspace; every tool
   call of the turn gets a :class:`~clawline.agents.tools.base.ToolContext` with the runner's
   ``host`` (:class:`~clawline.agents.tools.base.ToolHost`);
2. read the history (``RunContext.model_history``: what followed the session's last read,
   :mod:`~clawline.agents.recent_history`), arrange it for the model
   (:func:`~clawline.agents.conversation.arrange`) and build the system prompt: the agent's
   base prompt, then the run's ``extraSystemPrompt``;
3. stream the model's answer (text → ``RunContext.emit_text``); when it asks for tools, give
   each call an id unique in the conversation (:class:`~clawline.agents.call_ids.CallIds`: a
   reused id is rewritten, the redo of a call cut off by a crash keeps its id), append the
   assistant tool-call message to the transcript, run each call (``agent`` tool events
   ``start`` → ``result``, the result appended as a ``tool`` message) and call the model again;
4. stop when the model answers without tool calls (that text is the run's reply, appended by
   the run manager), when a tool ends the turn (``sessions_yield``), or after
   :data:`MAX_TOOL_ROUNDS` rounds of tools (the reply then says so).

A tool that raises is reported to the model as ``{status:"error", error:"<tool> failed:
<message>"}`` (and logged); a provider error fails the run. Cancellation (abort, timeout,
shutdown) propagates; a tool interrupted by it gets an error result in the transcript, marked
``interrupted`` (a stand-in: the tool may have taken effect, so a redo keeps the call's id).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from clawline.agents.call_ids import CallIds
from clawline.agents.conversation import (
    arrange,
    result_text,
    tool_call_message,
    tool_result_message,
)
from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    Provider,
    TextDelta,
    ToolCall,
    ToolCallDone,
    Usage,
)
from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.tools.base import Tool, ToolContext, ToolHost, ToolResult, ToolSpec
from clawline.agents.tools.registry import ToolRegistry
from clawline.agents.workspace import EnsuredWorkspaces, workspace_for
from clawline.config import AgentConfig, AgentsConfig

if TYPE_CHECKING:
    from clawline.sessions.catalog import CatalogTransaction, SessionCatalog
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.agents")

MAX_TOOL_ROUNDS = 24
"""Rounds of tool calls one turn may run; the model asking for more ends the turn."""
TURN_HISTORY_LIMIT = 5000
"""Transcript messages a turn reads (the offline model counts spawns over them)."""
ROUND_SEPARATOR = "\n\n"


def system_prompt(agent: AgentConfig, workspace: Path, extra: str | None) -> str:
    base = (
        f'You are the agent "{agent.id}" of a clawline gateway. Your workspace is {workspace}; '
        "file tools take paths relative to it."
    )
    return f"{base}\n\n{extra}" if extra else base


@dataclass(slots=True)
class _Reply:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)


class AgentRunner:
    """Runs turns with model providers and tools (module docstring)."""

    def __init__(
        self,
        *,
        config: AgentsConfig,
        providers: ProviderRegistry,
        tools: ToolRegistry,
        host: ToolHost,
        catalog: SessionCatalog,
        workers: StoreWorkers,
    ) -> None:
        self.config = config
        self.providers = providers
        self.tools = tools
        self.host = host
        """What the turn's tools may ask of the gateway (``ToolContext.host``)."""
        self._catalog = catalog
        self._workers = workers
        self._workspaces = EnsuredWorkspaces()

    async def run(self, ctx: RunContext) -> RunOutput:
        agent = self.config.resolve_agent(ctx.agent_id)
        entry = ctx.entry
        if entry is None:
            entry = await self._workers.run(self._catalog.get, ctx.session_key)
        provider, model = self.providers.resolve(agent.model)
        tools = {tool.spec.name: tool for tool in self.tools.tools_for(agent, entry)}
        specs = [tool.spec for tool in tools.values()]
        workspace = await self._workspaces.ensure(workspace_for(agent, entry))
        history = await ctx.model_history(TURN_HISTORY_LIMIT)
        messages = arrange(history, current_seq=ctx.message_seq)
        call_ids = CallIds(history)
        system = system_prompt(agent, workspace, ctx.extra_system_prompt)
        tool_ctx = ToolContext(
            host=self.host,
            session_key=ctx.session_key,
            agent_id=agent.id,
            run_id=ctx.run_id,
            workspace=workspace,
            entry=entry,
            agent=agent,
            lane=ctx.lane,
        )
        usage = Usage()
        rounds = 0
        while True:
            reply = await self._model_round(ctx, provider, model, system, messages, specs)
            usage += reply.usage
            if not reply.calls:
                return RunOutput(reply.text, reply.stop_reason, usage.to_json())
            if rounds >= MAX_TOOL_ROUNDS:
                note = f"[turn stopped: the model still wanted tools after {rounds} tool rounds]"
                await ctx.emit_text(ROUND_SEPARATOR + note if ctx.text else note)
                text = f"{reply.text}{ROUND_SEPARATOR}{note}" if reply.text else note
                return RunOutput(text, "maxToolRounds", usage.to_json())
            rounds += 1
            calls = [call_ids.assign(call) for call in reply.calls]
            messages.append(ModelMessage("assistant", reply.text, tool_calls=calls))
            await ctx.append_message(tool_call_message(reply.text, calls))
            ends_turn = False
            for call in calls:
                result = await self._call_tool(ctx, tools, call, tool_ctx)
                messages.append(
                    ModelMessage(
                        "tool",
                        result_text(result.details),
                        tool_call_id=call.id,
                        name=call.name,
                        is_error=result.is_error,
                    )
                )
                ends_turn = ends_turn or result.ends_turn
            if ends_turn:
                return RunOutput(reply.text, "stop", usage.to_json())

    async def _model_round(
        self,
        ctx: RunContext,
        provider: Provider,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        specs: Sequence[ToolSpec],
    ) -> _Reply:
        reply = _Reply()
        parts: list[str] = []
        stream = provider.stream(model=model, system=system, messages=messages, tools=specs)
        try:
            async for item in stream:
                if isinstance(item, TextDelta) and item.text:
                    if not parts and ctx.text:
                        await ctx.emit_text(ROUND_SEPARATOR)
                    parts.append(item.text)
                    await ctx.emit_text(item.text)
                elif isinstance(item, ToolCallDone):
                    reply.calls.append(item.call)
                elif isinstance(item, Finish):
                    reply.stop_reason, reply.usage = item.stop_reason, item.usage
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()
        reply.text = "".join(parts)
        return reply

    async def _call_tool(
        self, ctx: RunContext, tools: dict[str, Tool], call: ToolCall, base: ToolContext
    ) -> ToolResult:
        args = dict(call.arguments)
        await ctx.emit_tool("start", call.name, call.id, args=args)
        tool = tools.get(call.name)
        recorded: list[ToolResult] = []  # written in the tool's own transaction
        if call.error is not None:
            result = ToolResult.error(f"{call.name}: {call.error}")
        elif tool is None and self.tools.get(call.name) is not None:
            result = ToolResult.error(
                f"{call.name} is not allowed in this session (tool policy)", status="forbidden"
            )
        elif tool is None:
            result = ToolResult.error(f"Tool {call.name} not found")
        else:

            def record_result(work: CatalogTransaction, result: ToolResult) -> None:
                ctx.append_in_transaction(work, tool_result_message(call, result))
                work.tx.after_commit(lambda: recorded.append(result))

            recorder = record_result if ctx.appends_in_transactions else None
            call_ctx = replace(base, tool_call_id=call.id, record_result=recorder)
            try:
                outcome: object = await tool.invoke(call_ctx, args)
            except asyncio.CancelledError:
                if not recorded:
                    interrupted = ToolResult.error(
                        f"{call.name} was interrupted: the run was stopped"
                    )
                    stand_in = tool_result_message(call, interrupted, interrupted=True)
                    await _best_effort(ctx.append_message(stand_in))
                raise
            except Exception as error:
                log.warning("run %s: tool %s failed", ctx.run_id, call.name, exc_info=True)
                reason = str(error) or type(error).__name__
                result = ToolResult.error(f"{call.name} failed: {reason}")
            else:
                result = (
                    outcome
                    if isinstance(outcome, ToolResult)
                    else ToolResult.error(f"{call.name} failed: it returned no result")
                )
            if recorded:  # committed with the tool's effect: that is the call's result
                result = recorded[0]
        await ctx.emit_tool(
            "result", call.name, call.id, result=result.details, is_error=result.is_error
        )
        if not recorded:
            await ctx.append_message(tool_result_message(call, result))
        return result


async def _best_effort(writing: Awaitable[object]) -> None:
    """Finish a transcript write even though the run is being cancelled."""
    try:
        await asyncio.shield(writing)
    except (Exception, asyncio.CancelledError) as error:
        log.debug("interrupted tool result not stored: %r", error)
