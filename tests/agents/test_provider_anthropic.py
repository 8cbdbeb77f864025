"""The Anthropic provider against the fake server's Messages endpoint, over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from pydantic import SecretStr

from clawline.agents.providers.anthropic import AnthropicProvider, anthropic_messages
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
from clawline.agents.tools.base import ToolSpec
from clawline.config import ProviderSettings
from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeToolCall

SPEC = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})


@pytest.fixture
async def server() -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer() as running:
        yield running


async def collect(
    server: FakeModelServer,
    messages: Sequence[ModelMessage] = (ModelMessage("user", "hi"),),
) -> list[StreamItem]:
    settings = ProviderSettings(
        name="anthropic",
        api="anthropic",
        base_url=server.anthropic_base_url,
        secret_api_key=SecretStr("sk-ant-test"),
        max_retries=0,
    )
    target = AnthropicProvider(settings, {})
    try:
        stream = target.stream(
            model="claude-test", system="Be kind.", messages=messages, tools=[SPEC]
        )
        return [item async for item in stream]
    finally:
        await target.aclose()


async def test_text_and_tool_use_stream_with_usage(server: FakeModelServer) -> None:
    call = FakeToolCall("read_file", {"path": "notes/today.txt"}, "toolu_1")
    server.script = [
        FakeReply(
            text="let me look", tool_calls=(call,), chunk_size=4, input_tokens=9, output_tokens=5
        )
    ]
    items = await collect(server)
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["let ", "me l", "ook"]
    assert [i.call for i in items if isinstance(i, ToolCallDone)] == [
        ToolCall("toolu_1", "read_file", {"path": "notes/today.txt"})
    ]
    assert items[-1] == Finish("toolUse", Usage(9, 5))
    request = server.requests[0]
    assert request.api == "anthropic"
    assert request.body["system"] == "Be kind."
    assert request.body["stream"] is True
    assert request.body["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {}},
        }
    ]
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    assert "sk-ant-test" in (
        request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    )


async def test_a_plain_answer_stops_with_end_turn(server: FakeModelServer) -> None:
    server.script = [FakeReply(text="fine", input_tokens=3, output_tokens=1)]
    assert await collect(server) == [TextDelta("fine"), Finish("stop", Usage(3, 1))]


async def test_tool_results_go_back_as_tool_result_blocks(server: FakeModelServer) -> None:
    server.script = [FakeReply(text="ok")]
    history = [
        ModelMessage("user", "read both"),
        ModelMessage(
            "assistant",
            "reading",
            tool_calls=[
                ToolCall("call.1", "read_file", {"path": "a"}),
                ToolCall("c2", "read_file"),
            ],
        ),
        ModelMessage("tool", "A", tool_call_id="call.1", name="read_file"),
        ModelMessage("tool", "no such file", tool_call_id="c2", name="read_file", is_error=True),
    ]
    await collect(server, history)
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read both"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "c2", "name": "read_file", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "A"},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "no such file",
                    "is_error": True,
                },
            ],
        },
    ]


def test_neighbouring_messages_of_one_role_are_merged_and_system_lifted() -> None:
    system, turns = anthropic_messages(
        [
            ModelMessage("system", "rules"),
            ModelMessage("user", "a"),
            ModelMessage("user", "b"),
            ModelMessage("assistant", ""),
        ]
    )
    assert system == "rules"
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


async def test_an_http_error_is_a_provider_error(server: FakeModelServer) -> None:
    server.script = [FakeReply(status=529, error="overloaded")]
    with pytest.raises(ProviderError) as caught:
        await collect(server)
    assert str(caught.value) == "model provider anthropic failed: HTTP 529: overloaded"
    assert caught.value.status == 529
