"""The gateway events of one run → ``session/update`` notifications and a ``stopReason``.

- assistant text: the ``chat`` delta snapshots and the ``agent`` assistant events (both carry
  the whole text so far) are diffed against what was already sent, so a dropped event loses
  nothing; each new suffix is one ``agent_message_chunk``;
- ``agent`` tool events: ``start`` → ``tool_call`` (title = tool name, ``rawInput`` = its
  arguments, ``in_progress``); ``update`` → ``tool_call_update`` with the partial result;
  ``result`` → ``tool_call_update`` ``completed``/``failed`` with ``rawOutput
  {details, isError}``;
- the terminal ``chat`` event: ``final`` → ``end_turn`` (``max_tokens`` for a length stop),
  ``aborted`` → ``cancelled``, ``error`` → ``refusal`` when its ``errorKind`` is ``refusal``,
  else ``end_turn`` after a chunk ``Error: <message>``.

A turn's final message can be shorter than the text streamed (a turn with tool rounds keeps
only the last round's text): only the part not yet sent is sent (:func:`unsent_tail`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from clawline.client import GatewayEvent

Notify = Callable[[dict[str, Any]], Awaitable[None]]

TOOL_KINDS = {
    "read_file": "read",
    "write_file": "edit",
    "list_files": "search",
    "sessions_list": "search",
    "sessions_history": "read",
}
_MAX_TOKENS = frozenset({"length", "max_tokens", "maxTokens"})


def message_text(message: object) -> str:
    """The text blocks of a gateway message, joined."""
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def text_chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def unsent_tail(sent: str, final: str) -> str:
    """The end of ``final`` that ``sent`` does not already end with: ``final`` minus its
    longest prefix that is a suffix of ``sent`` (KMP over ``final`` + sentinel + tail)."""
    if final.startswith(sent):
        return final[len(sent) :]
    if not final:
        return ""
    probe = final + "\x00" + sent[-len(final) :]
    border = [0] * len(probe)
    for i in range(1, len(probe)):
        k = border[i - 1]
        while k and probe[i] != probe[k]:
            k = border[k - 1]
        if probe[i] == probe[k]:
            k += 1
        border[i] = k
    return final[border[-1] :]


class TurnStream:
    """Follows one run; :meth:`push` is called on the gateway client's reader task."""

    def __init__(self, notify: Notify) -> None:
        self._notify = notify
        self._queue: asyncio.Queue[GatewayEvent | None] = asyncio.Queue()
        self._sent = ""
        self._tools: set[str] = set()

    def push(self, event: GatewayEvent | None) -> None:
        self._queue.put_nowait(event)

    async def follow(self) -> str:
        """Send the run's updates until its terminal ``chat`` event; return the stop reason.
        Raises :class:`ConnectionError` when the gateway connection is lost meanwhile."""
        while True:
            event = await self._queue.get()
            if event is None:
                raise ConnectionError("the gateway connection was lost during the turn")
            payload = event.payload
            assert isinstance(payload, dict)
            if event.name == "agent":
                await self._agent(payload)
                continue
            state = payload.get("state")
            if state == "delta":
                await self._snapshot(message_text(payload.get("message")))
            elif state in ("final", "aborted", "error"):
                return await self._end(state, payload)

    async def _snapshot(self, text: str) -> None:
        if len(text) > len(self._sent) and text.startswith(self._sent):
            tail, self._sent = text[len(self._sent) :], text
            await self._notify(text_chunk("agent_message_chunk", tail))

    async def _agent(self, payload: dict[str, Any]) -> None:
        data = payload.get("data")
        if not isinstance(data, dict):
            return
        stream = payload.get("stream")
        if stream == "assistant" and isinstance(data.get("text"), str):
            await self._snapshot(data["text"])
        elif stream == "tool" and isinstance(data.get("toolCallId"), str):
            await self._tool(data)

    async def _tool(self, data: dict[str, Any]) -> None:
        call_id, phase = data["toolCallId"], data.get("phase")
        raw_name = data.get("name")
        name = raw_name if isinstance(raw_name, str) else "tool"
        if call_id not in self._tools:
            self._tools.add(call_id)
            start: dict[str, Any] = {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": name,
                "kind": TOOL_KINDS.get(name, "other"),
                "status": "in_progress",
                "rawInput": data.get("args") if isinstance(data.get("args"), dict) else {},
            }
            await self._notify(start)
        if phase == "update":
            update = {"details": data.get("partialResult")}
            await self._notify(tool_update(call_id, "in_progress", update))
        elif phase == "result":
            failed = data.get("isError") is True
            output = {"details": data.get("result"), "isError": failed}
            await self._notify(tool_update(call_id, "failed" if failed else "completed", output))

    async def _end(self, state: str, payload: dict[str, Any]) -> str:
        text = message_text(payload.get("message"))
        if state == "final":
            tail = unsent_tail(self._sent, text)
        else:
            tail = text[len(self._sent) :] if text.startswith(self._sent) else ""
        if tail:
            self._sent += tail
            await self._notify(text_chunk("agent_message_chunk", tail))
        if state == "aborted":
            return "cancelled"
        if state == "error":
            if payload.get("errorKind") == "refusal":
                return "refusal"
            reason = payload.get("errorMessage") or "the run failed"
            note = f"\n\nError: {reason}" if self._sent else f"Error: {reason}"
            await self._notify(text_chunk("agent_message_chunk", note))
            return "end_turn"
        return "max_tokens" if payload.get("stopReason") in _MAX_TOKENS else "end_turn"


def tool_update(call_id: str, status: str, output: object) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
        "rawOutput": output,
    }
