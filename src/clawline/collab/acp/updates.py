"""One prompt's ``session/update`` notifications → the child run's output.

- ``agent_message_chunk`` (text) → assistant text deltas (``RunContext.emit_text``: ``agent``
  assistant events and ``chat`` deltas; the run manager appends the whole text as the run's
  assistant message when the turn ends);
- ``tool_call`` → an ``agent`` tool event ``start`` and a transcript message ``{role:
  "assistant", content: [], toolCalls: [{id, name: <title>, arguments: <rawInput>}], stopReason:
  "toolUse"}``;
- ``tool_call_update`` → ``update`` events while it runs; on ``completed``/``failed`` a ``result``
  event and a transcript message ``{role: "tool", content: [{type: "text", text}], toolCallId,
  name, isError, details: {status, kind?, rawOutput?}}``, where ``text`` is the call's text
  content (diffs and terminals by name), else its ``rawOutput`` as JSON;
- everything else (thoughts, plans, commands, modes, usage) is not part of the output.

The same text and tool steps go to the parent relay when the spawn streams to its parent.
Updates are applied one after another by a worker task, in the order the agent sent them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.agents.runner import RunContext
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.collab.acp.relay import ParentRelay

log = logging.getLogger("clawline.collab.acp")

_TERMINAL = ("completed", "failed")


@dataclass(slots=True)
class _Tool:
    title: str
    kind: str | None = None
    done: bool = False


def tool_text(update: Mapping[str, JSON]) -> str:
    """The readable content of a tool call (text blocks; diffs and terminals by name)."""
    parts: list[str] = []
    content = update.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        block = item.get("content")
        if kind == "content" and isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "diff":
            parts.append(f"[diff {item.get('path')}]")
        elif kind == "terminal":
            parts.append(f"[terminal {item.get('terminalId')}]")
    if parts:
        return "\n".join(parts)
    raw = update.get("rawOutput")
    return "" if raw is None else json.dumps(raw, ensure_ascii=False, default=str)


class TurnOutput:
    def __init__(self, ctx: RunContext, relay: ParentRelay | None = None) -> None:
        self._ctx = ctx
        self._relay = relay
        self._tools: dict[str, _Tool] = {}
        self._queue: asyncio.Queue[JSONObject | None] = asyncio.Queue()
        self._worker = asyncio.ensure_future(self._drain())

    def push(self, update: JSONObject) -> None:
        """Queue one update (synchronous: called from the SDK's notification handler)."""
        self._queue.put_nowait(update)

    async def finish(self) -> None:
        """Apply every update queued so far, then stop."""
        self._queue.put_nowait(None)
        await self._worker

    async def abandon(self) -> None:
        """Stop without applying what is still queued (the turn was cut short)."""
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker

    async def _drain(self) -> None:
        while (update := await self._queue.get()) is not None:
            try:
                await self._apply(update)
            except Exception:
                log.exception("ACP update not applied to run %s", self._ctx.run_id)

    async def _apply(self, update: JSONObject) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content")
            if isinstance(content, Mapping) and content.get("type") == "text":
                text = str(content.get("text", ""))
                await self._ctx.emit_text(text)
                if self._relay is not None:
                    await self._relay.text(text)
        elif kind in ("tool_call", "tool_call_update"):
            await self._tool(update)

    async def _tool(self, update: JSONObject) -> None:
        call_id = str(update.get("toolCallId", ""))
        title = update.get("title")
        tool = self._tools.get(call_id)
        if tool is None:
            tool = self._tools[call_id] = _Tool(str(title or "tool"))
            await self._start(call_id, tool, update)
        elif isinstance(title, str) and title:
            tool.title = title
        if isinstance(update.get("kind"), str):
            tool.kind = str(update["kind"])
        status = update.get("status")
        if status in _TERMINAL and not tool.done:
            tool.done = True
            await self._result(call_id, tool, update, failed=status == "failed")
        elif update.get("sessionUpdate") == "tool_call_update" and not tool.done:
            partial = tool_text(update) or None
            await self._ctx.emit_tool("update", tool.title, call_id, partial_result=partial)

    async def _start(self, call_id: str, tool: _Tool, update: JSONObject) -> None:
        raw = update.get("rawInput")
        arguments: JSONObject = {} if raw is None else {"input": raw}
        if isinstance(raw, Mapping):
            arguments = dict(raw)
        await self._ctx.emit_tool("start", tool.title, call_id, args=arguments)
        await self._append(
            {
                "role": "assistant",
                "content": [],
                "toolCalls": [{"id": call_id, "name": tool.title, "arguments": arguments}],
                "stopReason": "toolUse",
            }
        )
        if self._relay is not None:
            await self._relay.tool(tool.title, "started")

    async def _result(self, call_id: str, tool: _Tool, update: JSONObject, *, failed: bool) -> None:
        text = tool_text(update)
        status = "failed" if failed else "completed"
        details: JSONObject = {"status": status}
        if tool.kind is not None:
            details["kind"] = tool.kind
        if update.get("rawOutput") is not None:
            details["rawOutput"] = update["rawOutput"]
        await self._ctx.emit_tool("result", tool.title, call_id, result=text, is_error=failed)
        await self._append(
            {
                "role": "tool",
                "content": [{"type": "text", "text": text}],
                "toolCallId": call_id,
                "name": tool.title,
                "isError": failed,
                "details": details,
            }
        )
        if self._relay is not None:
            await self._relay.tool(tool.title, status)

    async def _append(self, message: JSONObject) -> None:
        try:
            await self._ctx.append_message(message)
        except Exception as error:  # the run ended meanwhile, or the store failed
            log.warning("ACP tool message of run %s not stored: %s", self._ctx.run_id, error)
