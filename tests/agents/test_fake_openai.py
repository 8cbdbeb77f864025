"""The fake model server itself: whole answers, scripts, recording, and the subprocess mode."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeRequest, FakeToolCall


def client(server: FakeModelServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)


async def test_non_streaming_completions_carry_text_tool_calls_and_usage() -> None:
    reply = FakeReply(
        text="sure",
        tool_calls=(FakeToolCall("write_file", {"path": "a"}, "call_9"),),
        input_tokens=4,
        output_tokens=2,
    )
    async with FakeModelServer([reply]) as server:
        api = client(server)
        answer = await api.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        await api.close()
    choice = answer.choices[0]
    assert choice.message.content == "sure"
    assert choice.finish_reason == "tool_calls"
    tool_calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in tool_calls] == [  # type: ignore[union-attr]
        ("call_9", "write_file", {"path": "a"})
    ]
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (4, 2)


async def test_a_script_past_its_end_answers_500_and_requests_are_recorded() -> None:
    async with FakeModelServer([FakeReply(text="one")]) as server:
        api = client(server)
        await api.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        with pytest.raises(openai.InternalServerError, match="script exhausted"):
            await api.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "b"}]
            )
        await api.close()
    assert [r.body["messages"][0]["content"] for r in server.requests] == ["a", "b"]
    assert server.requests[0].headers["authorization"] == "Bearer k"


async def test_a_callable_script_decides_from_the_request() -> None:
    async def decide(request: FakeRequest) -> FakeReply:
        last = request.body["messages"][-1]["content"]
        return FakeReply(text=f"you said {last}")

    async with FakeModelServer(decide) as server:
        api = client(server)
        for word in ("x", "y"):
            answer = await api.chat.completions.create(
                model="m", messages=[{"role": "user", "content": word}]
            )
            assert answer.choices[0].message.content == f"you said {word}"
        await api.close()


async def test_anthropic_whole_messages() -> None:
    import anthropic

    reply = FakeReply(text="hi", tool_calls=(FakeToolCall("read_file", {"path": "b"}, "toolu_2"),))
    async with FakeModelServer([reply]) as server:
        api = anthropic.AsyncAnthropic(
            api_key="k", base_url=server.anthropic_base_url, max_retries=0
        )
        message = await api.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "q"}]
        )
        await api.close()
    assert message.stop_reason == "tool_use"
    blocks: list[Any] = list(message.content)
    assert (blocks[0].type, blocks[0].text) == ("text", "hi")
    assert (blocks[1].type, blocks[1].id, blocks[1].input) == ("tool_use", "toolu_2", {"path": "b"})


def test_the_server_runs_as_a_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "from a file", "tool_calls": [{"name": "t"}]}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "clawline.testing.fake_openai", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("fake model server listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        request = urllib.request.Request(
            f"{url}/v1/chat/completions",
            data=body.encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
        assert answer["choices"][0]["message"]["content"] == "from a file"
        assert answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "t"
        with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
            recorded = json.loads(response.read())
        assert recorded[0]["body"]["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
