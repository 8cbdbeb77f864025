"""OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, …) through the official SDK.

Streaming ``chat.completions`` with ``stream_options.include_usage``; tool calls arrive as
deltas keyed by ``index`` (id and name first, then argument fragments) and are assembled here.
The SDK is imported on first use: it costs start-up time and memory a gateway that never calls
OpenAI should not pay.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
from clawline.agents.providers.sdk_client import SdkClient
from clawline.agents.tools.base import ToolSpec
from clawline.config import ProviderSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI

_STOP_REASONS = {"stop": "stop", "tool_calls": "toolUse", "function_call": "toolUse"}


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """A tool call's JSON arguments; an empty string is ``{}``."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as error:
        return {}, f"arguments are not valid JSON ({error})"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    return value, None


def _message(message: ModelMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for call in message.tool_calls
        ]
    return out


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def done(self, index: int) -> ToolCall:
        arguments, error = parse_arguments("".join(self.arguments))
        return ToolCall(
            id=self.id or f"call_{index}", name=self.name, arguments=arguments, error=error
        )


def _make_client(api_key: str, base_url: str | None, max_retries: int) -> AsyncOpenAI:
    import openai

    # local servers (Ollama, vLLM) accept any key
    return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries)


class OpenAIProvider:
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
        import openai

        client = self._client.get()
        payload: list[Any] = [{"role": "system", "content": system}] if system else []
        payload.extend(_message(message) for message in messages)
        extra: dict[str, Any] = {"tools": [_tool(spec) for spec in tools]} if tools else {}
        calls: dict[int, _PartialCall] = {}
        finish = "stop"
        usage = Usage()
        try:
            response: Any = await client.chat.completions.create(
                model=model,
                messages=payload,
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
            try:
                async for chunk in response:
                    if chunk.usage is not None:
                        usage = Usage(
                            chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0
                        )
                    for choice in chunk.choices:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            yield TextDelta(delta.content)
                        for part in (delta.tool_calls if delta is not None else None) or []:
                            partial = calls.setdefault(part.index, _PartialCall())
                            partial.id = part.id or partial.id
                            if part.function is not None:
                                partial.name = part.function.name or partial.name
                                if part.function.arguments:
                                    partial.arguments.append(part.function.arguments)
                        if choice.finish_reason:
                            finish = choice.finish_reason
            finally:
                await response.close()
        except openai.APIStatusError as error:
            raise ProviderError(
                f"model provider {self.settings.name} failed: HTTP {error.status_code}: "
                f"{_error_text(error)}",
                provider=self.settings.name,
                status=error.status_code,
            ) from None
        except openai.OpenAIError as error:
            raise ProviderError(
                f"model provider {self.settings.name} failed: {error}",
                provider=self.settings.name,
            ) from None
        for index in sorted(calls):
            yield ToolCallDone(calls[index].done(index))
        stop = "toolUse" if calls else _STOP_REASONS.get(finish, finish)
        yield Finish(stop, usage)


def _error_text(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(getattr(error, "message", "") or error)
