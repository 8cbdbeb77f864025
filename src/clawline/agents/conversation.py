"""Between transcript messages and model messages.

Transcript shapes written by the turn loop (``runId`` is added by ``RunContext``):

- assistant tool calls: ``{role:"assistant", content:[{type:"text", text}]?,
  toolCalls:[{id, name, arguments}], stopReason:"toolUse"}``;
- tool results: ``{role:"tool", content:[{type:"text", text:<JSON of details>}], toolCallId,
  name, isError, details}``, plus ``interrupted: true`` for the stand-in written when the call
  was cut off by an abort or a shutdown (the tool may have taken effect).

:func:`model_messages` reads a history back for a model: the run's own user message goes last
(messages of earlier runs that were written after it — their tool rounds and replies — come
before it), later users' messages (queued runs) are left out, and each tool result is moved
right after its call (the latest call with its id before it, so a reused id pairs with its own
call). Calls without a result are dropped: a turn cut off by a crash, or a call of another run
of the session still in progress (an agent-to-agent step runs while its requester waits on
``sessions_send``) — a stand-in "interrupted" result would be wrong for the latter. A call
whose result is an ``interrupted`` stand-in and that is made again later (the redo that
finds what the first attempt did) is dropped with it, so ids stay unique. Results without a
call are dropped too, so every provider accepts the sequence: each call is answered once,
right after it (OpenAI requires it; Anthropic also wants tool ids unique).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from clawline.agents.messages import text_of
from clawline.agents.providers.base import ModelMessage, ToolCall
from clawline.agents.tools.base import ToolResult
from clawline.types import JSON, JSONObject


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


def tool_result_message(
    call: ToolCall, result: ToolResult, *, interrupted: bool = False
) -> JSONObject:
    message: JSONObject = {
        "role": "tool",
        "content": [{"type": "text", "text": result_text(result.details)}],
        "toolCallId": call.id,
        "name": call.name,
        "isError": result.is_error,
        "details": result.details,
    }
    if interrupted:
        message["interrupted"] = True
    return message


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


def tool_calls_of(raw: JSON) -> list[ToolCall]:
    """The calls of a stored ``toolCalls`` list (malformed items are skipped)."""
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


def convert(message: Mapping[str, JSON]) -> ModelMessage | None:
    """A transcript message as a model message (``None``: not one a model reads)."""
    role = message.get("role")
    raw_seq = message.get("seq")
    seq = raw_seq if isinstance(raw_seq, int) else None
    if role == "user":
        return ModelMessage("user", _text(message), seq=seq)
    if role == "assistant":
        calls = tool_calls_of(message.get("toolCalls"))
        return ModelMessage("assistant", _text(message), tool_calls=calls, seq=seq)
    if role == "tool":
        call_id, name = message.get("toolCallId"), message.get("name")
        return ModelMessage(
            "tool",
            _text(message),
            tool_call_id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
            is_error=message.get("isError") is True,
            interrupted=message.get("interrupted") is True,
            seq=seq,
        )
    return None


_CallAt = tuple[int, int]
"""A call's place: (index of its assistant message, index among that message's calls)."""


def _answers(messages: list[ModelMessage]) -> dict[_CallAt, ModelMessage]:
    """Each result paired with the latest call of its id before it (the first such call of
    that message when one message repeats an id); results without a call are left out."""
    unanswered: dict[str, list[_CallAt]] = {}
    answers: dict[_CallAt, ModelMessage] = {}
    for index, message in enumerate(messages):
        for position, call in enumerate(message.tool_calls):
            unanswered.setdefault(call.id, []).append((index, position))
        if message.role != "tool" or not message.tool_call_id:
            continue
        places = unanswered.get(message.tool_call_id)
        if places:
            latest = max(places, key=lambda place: (place[0], -place[1]))
            places.remove(latest)
            answers[latest] = message
    return answers


def _pair(messages: list[ModelMessage]) -> list[ModelMessage]:
    answers = _answers(messages)
    last_call: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            last_call[call.id] = index
    out: list[ModelMessage] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            continue  # placed after its call below
        if message.role == "assistant" and message.tool_calls:
            kept: list[ToolCall] = []
            results: list[ModelMessage] = []
            for position, call in enumerate(message.tool_calls):
                answer = answers.get((index, position))
                if answer is None:
                    continue  # no result (yet)
                if answer.interrupted and last_call[call.id] > index:
                    continue  # made again later: the redo stands for it
                kept.append(call)
                results.append(answer)
            if len(kept) == len(message.tool_calls):
                out.append(message)  # the same object: the offline model's prefixes know it
            elif kept or message.content:
                out.append(replace(message, tool_calls=kept))
            out.extend(results)
            continue
        out.append(message)
    return out


def convert_all(history: Sequence[Mapping[str, JSON]]) -> list[ModelMessage]:
    """Every message of ``history`` a model reads, converted, in transcript order."""
    return [converted for message in history if (converted := convert(message)) is not None]


def model_messages(
    history: Sequence[Mapping[str, JSON]], *, current_seq: int | None = None
) -> list[ModelMessage]:
    """The model's view of a session history (see the module docstring); ``current_seq`` is
    the transcript seq of the run's own user message."""
    return arrange(convert_all(history), current_seq=current_seq)


def arrange(
    converted: Sequence[ModelMessage], *, current_seq: int | None = None
) -> list[ModelMessage]:
    """:func:`model_messages` of a history already converted (:func:`convert_all`)."""
    earlier: list[ModelMessage] = []
    current: ModelMessage | None = None
    for message in converted:
        seq = message.seq
        if current_seq is not None and message.role == "user" and seq is not None:
            if seq == current_seq:
                current = message
                continue
            if seq > current_seq:
                continue
        earlier.append(message)
    paired = _pair(earlier)
    return [*paired, current] if current is not None else paired
