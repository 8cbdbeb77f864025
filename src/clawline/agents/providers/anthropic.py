"""Anthropic Messages API through the official SDK (streamed raw events).

Text arrives as ``text_delta``s; a ``tool_use`` block opens with its id and name and its input
arrives as ``input_json_delta`` fragments, complete at ``content_block_stop``. Tool results go
back as ``tool_result`` blocks in a user message (consecutive ones merged). The SDK is imported
on first use.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    ProviderError,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolCallDone,
    Usage,
)
from clawline.agents.providers.openai_compat import parse_arguments
from clawline.agents.providers.sdk_client import SdkClient
from clawline.agents.tools.base import ToolSpec
from clawline.config import ProviderSettings

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

DEFAULT_MAX_TOKENS = 8192
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "toolUse"}
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def _id(raw: str | None) -> str:
    """Tool-use ids must match ``^[A-Za-z0-9_-]+$`` (ids from other providers may not)."""
    return _UNSAFE_ID.sub("_", raw or "") or "call"


def anthropic_messages(messages: Sequence[ModelMessage]) -> tuple[str, list[dict[str, Any]]]:
    """System text found among ``messages``, and the rest as Messages-API turns (same-role
    neighbours merged, since the API wants user and assistant to alternate)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
            continue
        blocks: list[dict[str, Any]] = []
        role = "user" if message.role in ("user", "tool") else "assistant"
        if message.role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": _id(message.tool_call_id),
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
            blocks.append(block)
        elif message.content:
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": _id(call.id), "name": call.name, "input": call.arguments}
            )
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return "\n\n".join(system), out


def _make_client(api_key: str, base_url: str | None, max_retries: int) -> AsyncAnthropic:
    import anthropic

    return anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=max_retries)


class AnthropicProvider:
    def __init__(self, settings: ProviderSettings, env: Mapping[str, str]) -> None:
        self.settings = settings
        self._client = SdkClient(settings, env, _make_client)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def stream(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        tools: Sequence[ToolSpec],
    ) -> AsyncIterator[StreamItem]:
        import anthropic

        client = self._client.get()
        inline_system, turns = anthropic_messages(messages)
        prompt = "\n\n".join(part for part in (system, inline_system) if part)
        extra: dict[str, Any] = {"system": prompt} if prompt else {}
        if tools:
            extra["tools"] = [
                {"name": s.name, "description": s.description, "input_schema": s.parameters}
                for s in tools
            ]
        open_tools: dict[int, tuple[str, str, list[str]]] = {}
        done: list[ToolCall] = []
        stop = "stop"
        usage_in = usage_out = 0
        try:
            response: Any = await client.messages.create(
                model=model,
                max_tokens=DEFAULT_MAX_TOKENS,
                messages=cast(list[Any], turns),
                stream=True,
                **extra,
            )
            try:
                async for event in response:
                    kind = event.type
                    if kind == "message_start":
                        usage_in = event.message.usage.input_tokens or 0
                        usage_out = event.message.usage.output_tokens or 0
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            open_tools[event.index] = (block.id, block.name, [])
                        elif block.type == "text" and block.text:
                            yield TextDelta(block.text)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            yield TextDelta(delta.text)
                        elif delta.type == "input_json_delta" and event.index in open_tools:
                            open_tools[event.index][2].append(delta.partial_json)
                    elif kind == "content_block_stop" and event.index in open_tools:
                        call_id, name, parts = open_tools.pop(event.index)
                        arguments, error = parse_arguments("".join(parts))
                        call = ToolCall(id=call_id, name=name, arguments=arguments, error=error)
                        done.append(call)
                        yield ToolCallDone(call)
                    elif kind == "message_delta":
                        stop = event.delta.stop_reason or stop
                        usage_out = event.usage.output_tokens or usage_out
            finally:
                await response.close()
        except anthropic.APIStatusError as error:
            raise ProviderError(
                f"model provider {self.settings.name} failed: HTTP {error.status_code}: "
                f"{_error_text(error)}",
                provider=self.settings.name,
                status=error.status_code,
            ) from None
        except anthropic.AnthropicError as error:
            raise ProviderError(
                f"model provider {self.settings.name} failed: {error}",
                provider=self.settings.name,
            ) from None
        reason = "toolUse" if done else _STOP_REASONS.get(stop, stop)
        yield Finish("length" if reason == "max_tokens" else reason, Usage(usage_in, usage_out))


def _error_text(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return json.dumps(body) if body is not None else str(error)
