"""A scripted model provider and test tools for turn-loop tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolCallDone,
    Usage,
)
from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.tools.base import Tool, ToolContext, ToolResult, ToolSpec
from clawline.agents.tools.registry import ToolRegistry
from clawline.agents.turn import AgentRunner
from clawline.config import AgentDefaults, AgentsConfig, SubagentLimits
from clawline.runtime import Runtime
from clawline.types import JSON, JSONObject

__all__ = [
    "BlockingTool",
    "EchoTool",
    "ErrorTool",
    "ModelCall",
    "RaisingTool",
    "ScriptedProvider",
    "TurnRig",
    "YieldTool",
    "calls",
    "install",
    "text",
]

Round = Sequence[StreamItem] | Callable[[Sequence[ModelMessage]], Sequence[StreamItem]]


def text(value: str, usage: Usage | None = None) -> list[StreamItem]:
    return [TextDelta(value), Finish("stop", usage or Usage(2, 3))]


def calls(*items: ToolCall, say: str = "", usage: Usage | None = None) -> list[StreamItem]:
    out: list[StreamItem] = [TextDelta(say)] if say else []
    out.extend(ToolCallDone(item) for item in items)
    out.append(Finish("toolUse", usage or Usage(1, 1)))
    return out


@dataclass(frozen=True, slots=True)
class ModelCall:
    model: str
    system: str
    messages: list[ModelMessage]
    tools: list[str]


class ScriptedProvider:
    """Answers round ``n`` with ``rounds[n]`` (the last one repeats); records every call."""

    def __init__(self, *rounds: Round) -> None:
        self.rounds = list(rounds)
        self.seen: list[ModelCall] = []

    async def stream(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        tools: Sequence[ToolSpec],
    ) -> AsyncIterator[StreamItem]:
        self.seen.append(ModelCall(model, system, list(messages), [t.name for t in tools]))
        planned = self.rounds[min(len(self.seen), len(self.rounds)) - 1]
        items = planned(messages) if callable(planned) else planned
        for item in items:
            await asyncio.sleep(0)
            yield item


class EchoTool:
    spec = ToolSpec("echo", "Echo the arguments.", {"type": "object", "properties": {}})

    def __init__(self) -> None:
        self.contexts: list[ToolContext] = []

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        self.contexts.append(ctx)
        return ToolResult({"status": "ok", "echo": dict(args)})


class ErrorTool:
    spec = ToolSpec("refuse", "Always refuses.")

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return ToolResult.error("not today", status="forbidden")


class RaisingTool:
    spec = ToolSpec("boom", "Always breaks.")

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        raise RuntimeError("kaput")


class BlockingTool:
    spec = ToolSpec("wait", "Waits until released.")

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult("never")


class YieldTool:
    spec = ToolSpec("sessions_yield", "End the turn.")

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return ToolResult({"status": "yielded", "message": "waiting"}, ends_turn=True)


class SpawnStub:
    """Stands in for the collaboration code's ``sessions_spawn`` in policy tests."""

    spec = ToolSpec("sessions_spawn", "Spawn a subagent.")

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return ToolResult({"status": "accepted", "childSessionKey": "agent:main:subagent:x"})


@dataclass
class TurnRig:
    services: Runtime
    provider: ScriptedProvider
    tools: ToolRegistry
    runner: AgentRunner
    workspace_root: Path
    extra: JSONObject = field(default_factory=dict)


def install(
    services: Runtime,
    provider: ScriptedProvider,
    *tools: object,
    subagents: SubagentLimits | None = None,
) -> TurnRig:
    """Make ``services.runs`` run turns with ``provider`` (model ``script/test``) and
    ``tools``; workspaces under ``<state dir>/workspace``."""
    state = services.settings.state_dir
    defaults = AgentDefaults(model="script/test", subagents=subagents or SubagentLimits())
    config = AgentsConfig(state_dir=state, defaults=defaults)
    providers = ProviderRegistry(config)
    providers.register("script", provider)
    registry = ToolRegistry(cast("list[Tool]", list(tools)))
    runner = AgentRunner(
        config=config,
        providers=providers,
        tools=registry,
        host=services.tool_host,
        catalog=services.catalog,
        workers=services.workers,
    )
    services.runs.runner = runner
    return TurnRig(services, provider, registry, runner, state / "workspace")
