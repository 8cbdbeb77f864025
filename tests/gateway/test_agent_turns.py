"""Agent turns through a real gateway: a configured OpenAI-compatible model calling tools, and
the offline model's directives."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeToolCall
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.agents.support import wait_event
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

WRITER = "agent:writer:main"


@pytest.fixture
async def model() -> AsyncIterator[FakeModelServer]:
    write = FakeToolCall("write_file", {"path": "out/report.txt", "content": "all done"}, "call_w")
    script = [
        FakeReply(text="Writing it.", tool_calls=(write,), chunk_size=5),
        FakeReply(text="I wrote out/report.txt.", input_tokens=20, output_tokens=6),
    ]
    async with FakeModelServer(script) as server:
        yield server


@pytest.fixture
async def gateway(tmp_path: Path, model: FakeModelServer) -> AsyncIterator[RunningGateway]:
    raw = {
        "agents": {"list": [{"id": "writer", "model": "openai/test"}]},
        "models": {
            "providers": {
                "openai": {"baseUrl": model.openai_base_url, "apiKey": "sk-e2e", "maxRetries": 0}
            }
        },
    }
    state = tmp_path / "state"
    settings = Settings(state_dir=state, raw=raw)
    async with running_gateway(
        state,
        settings=settings,
        gateway_settings=GatewaySettings(port=0, auth="token", token=TOKEN),
    ) as running:
        yield running


@pytest.fixture
async def operator(gateway: RunningGateway) -> AsyncIterator[WireClient]:
    client = await WireClient.open(gateway.url)
    try:
        assert (await client.connect(token=TOKEN))["ok"] is True
        yield client
    finally:
        await client.close()


def final_of(run_id: str) -> Any:
    return lambda p: p.get("runId") == run_id and p.get("state") in ("final", "error")


async def test_a_configured_openai_model_writes_a_file_and_answers(
    gateway: RunningGateway, operator: WireClient, model: FakeModelServer
) -> None:
    params = {"sessionKey": WRITER, "message": "write the report", "idempotencyKey": "e2e"}
    assert (await operator.ok("chat.send", params))["status"] == "started"
    final = (await wait_event(operator, "chat", final_of("e2e"), timeout=15))["payload"]
    assert final["state"] == "final"
    assert final["message"]["content"] == [{"type": "text", "text": "I wrote out/report.txt."}]
    report = gateway.runtime.settings.state_dir / "workspace" / "writer" / "out" / "report.txt"
    assert report.read_text() == "all done"
    history = await operator.ok("chat.history", {"sessionKey": WRITER})
    roles = [(m["role"], m.get("runId")) for m in history["messages"]]
    assert roles == [("user", "e2e"), ("assistant", "e2e"), ("tool", "e2e"), ("assistant", "e2e")]
    call, result = history["messages"][1], history["messages"][2]
    assert call["toolCalls"] == [
        {
            "id": "call_w",
            "name": "write_file",
            "arguments": {"path": "out/report.txt", "content": "all done"},
        }
    ]
    assert result["details"] == {
        "status": "ok",
        "path": "out/report.txt",
        "bytes": 8,
        "appended": False,
    }
    tools = [
        e["payload"]["data"]
        for e in operator.events_named("agent")
        if e["payload"]["stream"] == "tool"
    ]
    assert [(t["phase"], t["name"], t["toolCallId"]) for t in tools] == [
        ("start", "write_file", "call_w"),
        ("result", "write_file", "call_w"),
    ]
    assert tools[1]["result"] == result["details"]
    first, second = model.requests
    assert first.headers["authorization"] == "Bearer sk-e2e"
    assert first.body["model"] == "test"
    assert "write_file" in [t["function"]["name"] for t in first.body["tools"]]
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_w"
    assert json.loads(tool_message["content"])["status"] == "ok"
    wait = await operator.ok("agent.wait", {"runId": "e2e"})
    assert wait["status"] == "ok"


async def test_the_offline_model_runs_directives_in_the_workspace(
    gateway: RunningGateway, operator: WireClient
) -> None:
    message = "write hello.txt: hi there\nread hello.txt"
    params = {"sessionKey": "main", "message": message, "idempotencyKey": "off"}
    await operator.ok("chat.send", params)
    final = (await wait_event(operator, "chat", final_of("off"), timeout=15))["payload"]
    assert final["message"]["content"][0]["text"] == (
        "results: write_file ok; read_file ok: hi there"
    )
    hello = gateway.runtime.settings.state_dir / "workspace" / "main" / "hello.txt"
    assert hello.read_text() == "hi there"
    plain = {"sessionKey": "main", "message": "just talk", "idempotencyKey": "plain"}
    await operator.ok("chat.send", plain)
    answer = (await wait_event(operator, "chat", final_of("plain"), timeout=15))["payload"]
    assert answer["message"]["content"][0]["text"] == "echo: just talk"
