"""Wire formats of the fake model server: OpenAI chat completions and Anthropic messages,
streamed (SSE) and whole. See :mod:`clawline.testing.fake_openai`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class FakeToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    """An object (sent as JSON) or a raw string (sent as is, e.g. broken JSON)."""
    id: str | None = None

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class FakeReply:
    """One canned model answer."""

    text: str = ""
    tool_calls: tuple[FakeToolCall, ...] = ()
    status: int = 200
    """An HTTP error status (>= 400) answers with an error body carrying ``error``."""
    error: str = "fake model error"
    chunk_size: int | None = None
    """Split text and tool arguments into pieces of this many characters (default: text by
    word, arguments in two halves)."""
    delay_ms: int = 0
    """Pause before each streamed piece."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FakeReply:
        calls = tuple(
            FakeToolCall(c["name"], c.get("arguments", {}), c.get("id"))
            for c in data.get("tool_calls", ())
        )
        plain = {k: v for k, v in data.items() if k != "tool_calls"}
        return cls(tool_calls=calls, **plain)

    def text_pieces(self) -> list[str]:
        if self.chunk_size:
            return _split(self.text, self.chunk_size)
        words = self.text.split(" ")
        pieces = [word + " " for word in words[:-1]] + [words[-1]]
        return [piece for piece in pieces if piece]

    def argument_pieces(self, call: FakeToolCall) -> list[str]:
        raw = call.arguments_text
        if self.chunk_size:
            return _split(raw, self.chunk_size)
        middle = len(raw) // 2
        return [piece for piece in (raw[:middle], raw[middle:]) if piece]

    def usage(self, request: dict[str, Any]) -> tuple[int, int]:
        prompt = self.input_tokens
        if prompt is None:
            prompt = len(json.dumps(request.get("messages", [])).split())
        completion = self.output_tokens
        if completion is None:
            completion = len(self.text.split()) + len(self.tool_calls)
        return prompt, completion


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _call_id(call: FakeToolCall, index: int, prefix: str) -> str:
    return call.id or f"{prefix}{index}"


# --- OpenAI ---------------------------------------------------------------------------------


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def openai_chunks(reply: FakeReply, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``data:`` payloads of a streamed chat completion (``[DONE]`` not included)."""
    model = str(request.get("model", "fake"))
    yield _chunk(model, {"role": "assistant", "content": ""})
    for piece in reply.text_pieces():
        yield _chunk(model, {"content": piece})
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": _call_id(call, index, "call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield _chunk(model, {"tool_calls": [head]})
        for piece in reply.argument_pieces(call):
            part = {"index": index, "function": {"arguments": piece}}
            yield _chunk(model, {"tool_calls": [part]})
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    yield _chunk(model, {}, finish)
    if (request.get("stream_options") or {}).get("include_usage"):
        prompt, completion = reply.usage(request)
        yield {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def openai_completion(reply: FakeReply, request: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(call, index, "call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    prompt, completion = reply.usage(request)
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": str(request.get("model", "fake")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


# --- Anthropic ------------------------------------------------------------------------------


def anthropic_events(reply: FakeReply, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events of a streamed Messages API answer (``type`` is also the SSE event name)."""
    prompt, completion = reply.usage(request)
    yield {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": str(request.get("model", "fake")),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": 0},
        },
    }
    index = 0
    if reply.text:
        text_block = {"type": "text", "text": ""}
        yield {"type": "content_block_start", "index": 0, "content_block": text_block}
        for piece in reply.text_pieces():
            delta = {"type": "text_delta", "text": piece}
            yield {"type": "content_block_delta", "index": 0, "delta": delta}
        yield {"type": "content_block_stop", "index": 0}
        index = 1
    for offset, call in enumerate(reply.tool_calls):
        block = {
            "type": "tool_use",
            "id": _call_id(call, offset, "toolu_"),
            "name": call.name,
            "input": {},
        }
        yield {"type": "content_block_start", "index": index, "content_block": block}
        for piece in reply.argument_pieces(call):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    stop = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": completion},
    }
    yield {"type": "message_stop"}


def anthropic_message(reply: FakeReply, request: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content.extend(
        {
            "type": "tool_use",
            "id": _call_id(call, n, "toolu_"),
            "name": call.name,
            "input": json.loads(call.arguments_text),
        }
        for n, call in enumerate(reply.tool_calls)
    )
    prompt, completion = reply.usage(request)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": str(request.get("model", "fake")),
        "content": content,
        "stop_reason": reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }
