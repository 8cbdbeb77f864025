"""Between transcript messages and model messages.

Transcript shapes written by the turn loop (``runId`` is added by ``RunContext``):

- assistant tool calls: ``{role:"assistant", content:[{type:"text", text}]?,
  toolCalls:[{id, name, arguments}], stopReason:"toolUse"}``;
- tool results: ``{role:"tool", content:[{type:"text", text:<JSON of details>}], toolCallId,
  name, isError, details}``.

:func:`model_messages` reads a history back for a model: the run's own user message goes last
(messages of earlier runs that were written after it — their tool rounds and replies — come
before it), later users' messages (queued runs) are left out, tool results are moved right
after the call that asked for them, and calls without a result (an interrupted turn) or results
without a call are dropped, so every provider accepts the sequence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from clawline.agents.messages import text_of
from clawline.agents.providers.base import ModelMessage, ToolCall
from clawline.agents.tools.base import ToolResult
from clawline.types import JSON, JSONObject

__all__ = ["model_messages", "result_text", "tool_call_message", "tool_result_message"]


def result_text(details: JSON) -> str:
    """What the model reads for a tool result: a string as is, anything else as JSON."""
    if isinstance(details, str):
        return details
    return json.dumps(details, ensure_ascii=False, default=str)


def tool_call_message(text: str, calls: Sequence[ToolCall]) -> JSONObject:
    content: list[JSON] = [{"type": "text", "text": text}] if text else []
    return {
        "role": "assistant",
        "content": content,
        "toolCalls": [call.to_json() for call in calls],
        "stopReason": "toolUse",
    }


def tool_result_message(call: ToolCall, result: ToolResult) -> JSONObject:
    return {
        "role": "tool",
        "content": [{"type": "text", "text": result_text(result.details)}],
        "toolCallId": call.id,
        "name": call.name,
        "isError": result.is_error,
        "details": result.details,
    }


def _text(message: Mapping[str, JSON]) -> str:
    text = text_of(message)
    content = message.get("content")
    notes: list[str] = []
    if isinstance(content, Sequence) and not isinstance(content, str):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") in ("image", "file"):
                name = block.get("fileName")
                notes.append(f"[{block.get('type')} attached{f': {name}' if name else ''}]")
    return "\n".join([text, *notes]) if notes and text else text or "\n".join(notes)


def _calls(raw: JSON) -> list[ToolCall]:
    calls: list[ToolCall] = []
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return calls
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        call_id, name, arguments = item.get("id"), item.get("name"), item.get("arguments")
        if isinstance(call_id, str) and isinstance(name, str):
            args = dict(arguments) if isinstance(arguments, Mapping) else {}
            calls.append(ToolCall(id=call_id, name=name, arguments=args))
    return calls


def _convert(message: Mapping[str, JSON]) -> ModelMessage | None:
    role = message.get("role")
    if role == "user":
        return ModelMessage("user", _text(message))
    if role == "assistant":
        calls = _calls(message.get("toolCalls"))
        return ModelMessage("assistant", _text(message), tool_calls=calls)
    if role == "tool":
        call_id, name = message.get("toolCallId"), message.get("name")
        return ModelMessage(
            "tool",
            _text(message),
            tool_call_id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
            is_error=message.get("isError") is True,
        )
    return None


def _pair(messages: list[ModelMessage]) -> list[ModelMessage]:
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    out: list[ModelMessage] = []
    for message in messages:
        if message.role == "tool":
            continue  # placed after its call below
        if message.role == "assistant" and message.tool_calls:
            kept = [call for call in message.tool_calls if call.id in results]
            if kept or message.content:
                out.append(replace(message, tool_calls=kept))
            out.extend(results.pop(call.id) for call in kept)
            continue
        out.append(message)
    return out


def model_messages(
    history: Sequence[Mapping[str, JSON]], *, current_seq: int | None = None
) -> list[ModelMessage]:
    """The model's view of a session history (see the module docstring); ``current_seq`` is
    the transcript seq of the run's own user message."""
    earlier: list[ModelMessage] = []
    current: ModelMessage | None = None
    for message in history:
        converted = _convert(message)
        if converted is None:
            continue
        seq = message.get("seq")
        if current_seq is not None and converted.role == "user" and isinstance(seq, int):
            if seq == current_seq:
                current = converted
                continue
            if seq > current_seq:
                continue
        earlier.append(converted)
    paired = _pair(earlier)
    return [*paired, current] if current is not None else paired
