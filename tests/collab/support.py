"""A scripted runner and helpers for the collaboration tests.

:class:`ScriptedRunner` answers each run from a per-session script (a queue of replies); a reply
is a string or an async function of the run's context (to block, fail, or call a tool from
inside a running turn). Every run it sees is recorded in :attr:`ScriptedRunner.calls`.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from clawline import keys
from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.tools.base import Tool, ToolContext, ToolResult
from clawline.runtime import Runtime
from clawline.types import JSON

__all__ = [
    "MAIN",
    "Call",
    "Reply",
    "ScriptedRunner",
    "assistant_texts",
    "config",
    "invoke",
    "runner_of",
    "settle",
    "tool_ctx",
    "tool_of",
    "transcript",
]

MAIN = "agent:main:main"

Reply: TypeAlias = str | Callable[[RunContext], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Call:
    session_key: str
    message: str
    extra: str | None
    lane: str | None
    origin: str
    run_id: str
    deliver: bool


class ScriptedRunner:
    def __init__(self, default: str = "ok") -> None:
        self.default = default
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.calls: list[Call] = []

    def script(self, session_key: str, *replies: Reply) -> None:
        self.scripts[session_key].extend(replies)

    def calls_on(self, session_key: str) -> list[Call]:
        return [call for call in self.calls if call.session_key == session_key]

    async def run(self, ctx: RunContext) -> RunOutput:
        self.calls.append(
            Call(
                session_key=ctx.session_key,
                message=ctx.message,
                extra=ctx.extra_system_prompt,
                lane=ctx.lane,
                origin=ctx.origin,
                run_id=ctx.run_id,
                deliver=ctx.deliver,
            )
        )
        queue = self.scripts.get(ctx.session_key)
        reply = queue.popleft() if queue else self.default
        text = reply if isinstance(reply, str) else await reply(ctx)
        await ctx.emit_text(text)
        return RunOutput(text=text)


def runner_of(services: Runtime) -> ScriptedRunner:
    runner = services.runs.runner
    assert isinstance(runner, ScriptedRunner)
    return runner


def config(
    *,
    visibility: str | None = None,
    a2a: bool | None = None,
    allow: list[str] | None = None,
    turns: int | None = None,
) -> dict[str, Any]:
    """A config.toml mapping with the collaboration keys that are given."""
    raw: dict[str, Any] = {}
    if visibility is not None:
        raw.setdefault("tools", {})["sessions"] = {"visibility": visibility}
    if a2a is not None or allow is not None:
        section: dict[str, Any] = {}
        if a2a is not None:
            section["enabled"] = a2a
        if allow is not None:
            section["allow"] = allow
        raw.setdefault("tools", {})["agentToAgent"] = section
    if turns is not None:
        raw["session"] = {"agentToAgent": {"maxPingPongTurns": turns}}
    return raw


def tool_ctx(services: Runtime, session_key: str, run_id: str = "run-of-requester") -> ToolContext:
    key = services.catalog.canonical(session_key)
    return ToolContext(
        host=services.tool_host,
        session_key=key,
        agent_id=keys.agent_id_of(key),
        run_id=run_id,
        workspace=Path(services.settings.state_dir),
        entry=services.store.get(key),
    )


def tool_of(services: Runtime, name: str) -> Tool:
    """The runtime's tool ``name`` (built with the runtime's parts)."""
    tool = services.runs.tools.get(name)
    assert tool is not None, f"no tool {name}"
    return tool


async def invoke(tool: Tool, ctx: ToolContext, **args: Any) -> dict[str, Any]:
    """The tool's result details (``args`` are passed as the model would send them)."""
    result: ToolResult = await tool.invoke(ctx, args)
    details = result.details
    assert isinstance(details, dict)
    return details


async def settle(services: Runtime, timeout: float = 10.0) -> None:
    """Wait until the run manager's background tasks (agent-to-agent exchanges) are done."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while tasks := services.runs.background_tasks():
        remaining = deadline - loop.time()
        assert remaining > 0, "background tasks did not finish"
        await asyncio.wait(tasks, timeout=remaining)


def transcript(services: Runtime, session_key: str) -> list[Mapping[str, JSON]]:
    entry = services.store.get(services.catalog.canonical(session_key))
    assert entry is not None
    return [event.data for event in services.store.events(entry.session_id)]


def _text(message: Mapping[str, JSON]) -> str:
    content = message.get("content")
    assert isinstance(content, list)
    return "".join(str(block.get("text", "")) for block in content if isinstance(block, Mapping))


def assistant_texts(services: Runtime, session_key: str) -> list[str]:
    return [
        _text(message)
        for message in transcript(services, session_key)
        if message.get("role") == "assistant"
    ]
