"""The OpenAI-compatible provider against the fake model server, over real HTTP."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

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
from clawline.agents.providers.openai_compat import OpenAIProvider
from clawline.agents.tools.base import ToolSpec
from clawline.config import ProviderSettings, Settings
from clawline.runtime import Runtime
from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeToolCall

SPEC = ToolSpec("write_file", "Write a file.", {"type": "object", "properties": {}})


@pytest.fixture
async def server() -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer() as running:
        yield running


def provider(base_url: str | None, env: dict[str, str] | None = None) -> OpenAIProvider:
    settings = ProviderSettings(
        name="openai", api="openai", base_url=base_url, api_key_env="TEST_KEY", max_retries=0
    )
    return OpenAIProvider(settings, {"TEST_KEY": "sk-test-123"} if env is None else env)


async def collect(
    target: OpenAIProvider,
    messages: Sequence[ModelMessage] = (ModelMessage("user", "hi"),),
    tools: Sequence[ToolSpec] = (SPEC,),
) -> list[StreamItem]:
    try:
        stream = target.stream(model="test", system="Be kind.", messages=messages, tools=tools)
        return [item async for item in stream]
    finally:
        await target.aclose()


async def test_text_streams_in_deltas_with_usage(server: FakeModelServer) -> None:
    server.script = [FakeReply(text="hello big world", input_tokens=11, output_tokens=3)]
    items = await collect(provider(server.openai_base_url))
    assert items == [
        TextDelta("hello "),
        TextDelta("big "),
        TextDelta("world"),
        Finish("stop", Usage(11, 3)),
    ]
    body = server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "write_file",
                "description": "Write a file.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-123"


async def test_tool_calls_are_assembled_from_argument_fragments(server: FakeModelServer) -> None:
    first = FakeToolCall("write_file", {"path": "notes/a.txt", "content": "hello there"}, "call_a")
    second = FakeToolCall("read_file", {"path": "b.txt"}, "call_b")
    server.script = [FakeReply(text="ok", tool_calls=(first, second), chunk_size=3)]
    items = await collect(provider(server.openai_base_url))
    done = [item.call for item in items if isinstance(item, ToolCallDone)]
    assert done == [
        ToolCall("call_a", "write_file", {"path": "notes/a.txt", "content": "hello there"}),
        ToolCall("call_b", "read_file", {"path": "b.txt"}),
    ]
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["ok"]
    finish = items[-1]
    assert isinstance(finish, Finish)
    assert finish.stop_reason == "toolUse"


async def test_broken_arguments_are_flagged_on_the_call(server: FakeModelServer) -> None:
    server.script = [FakeReply(tool_calls=(FakeToolCall("write_file", '{"path": "a'),))]
    items = await collect(provider(server.openai_base_url))
    call = next(item.call for item in items if isinstance(item, ToolCallDone))
    assert call.arguments == {}
    assert call.error is not None
    assert call.error.startswith("arguments are not valid JSON")


async def test_history_with_tool_rounds_is_sent_in_openai_shape(server: FakeModelServer) -> None:
    server.script = [FakeReply(text="done")]
    history = [
        ModelMessage("user", "write it"),
        ModelMessage("assistant", "", tool_calls=[ToolCall("c1", "write_file", {"path": "a"})]),
        ModelMessage("tool", '{"status": "ok"}', tool_call_id="c1", name="write_file"),
    ]
    await collect(provider(server.openai_base_url), history)
    sent = server.requests[0].body["messages"][1:]
    assert sent == [
        {"role": "user", "content": "write it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": json.dumps({"path": "a"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'},
    ]


async def test_an_http_error_is_a_provider_error(server: FakeModelServer) -> None:
    server.script = [FakeReply(status=500, error="the model melted")]
    with pytest.raises(ProviderError) as caught:
        await collect(provider(server.openai_base_url))
    assert str(caught.value) == "model provider openai failed: HTTP 500: the model melted"
    assert caught.value.status == 500


async def test_an_unreachable_server_is_a_provider_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ProviderError, match=r"^model provider openai failed: "):
        await collect(provider(f"http://127.0.0.1:{port}/v1"))


async def test_a_missing_api_key_is_reported_clearly() -> None:
    with pytest.raises(ProviderError) as caught:
        await collect(provider(None, env={}))
    assert str(caught.value) == (
        "no API key for model provider openai: set TEST_KEY or models.providers.openai.apiKey"
    )


async def test_a_run_with_an_openai_model_fails_on_a_server_error(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.script = [FakeReply(status=503, error="overloaded")]
    raw = {
        "agents": {"defaults": {"model": "openai/test"}},
        "models": {"providers": {"openai": {"baseUrl": server.openai_base_url, "maxRetries": 0}}},
    }
    services = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
    try:
        ack = await services.runs.send(session_key="main", message="hi", idempotency_key="k")
        outcome = await ack.done
        assert outcome.status == "failed"
        assert outcome.error == "model provider openai failed: HTTP 503: overloaded"
        assert server.requests[0].body["model"] == "test"
    finally:
        await services.runs.shutdown()
        services.close()
