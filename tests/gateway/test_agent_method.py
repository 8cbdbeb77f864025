"""The ``agent`` method: two answers with one id, the error path, dedupe, session choice."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.agents.echo import EchoRunner
from clawline.testing.live_gateway import RunningGateway
from tests.agents.support import BlockingRunner, FailingRunner, RecordingClient, request
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

MAIN = "agent:main:main"


async def test_agent_answers_twice_with_the_same_id(gw: RunningGateway) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    client = await RecordingClient.open_recording(gw.url)
    try:
        assert (await client.connect(token=TOKEN))["ok"] is True
        rid = await request(client, "agent", {"message": "hello", "idempotencyKey": "a1"})
        first = await client.response(rid)
        second = await client.response(rid)
        assert first["ok"] is True
        assert first["payload"]["runId"] == "a1"
        assert first["payload"]["status"] == "accepted"
        assert isinstance(first["payload"]["acceptedAt"], int)
        assert second["ok"] is True
        payload = second["payload"]
        assert (payload["runId"], payload["status"], payload["summary"]) == (
            "a1",
            "ok",
            "completed",
        )
        assert payload["result"]["text"] == "echo: hello"
        assert payload["result"]["payloads"] == [{"text": "echo: hello"}]
        assert payload["result"]["meta"]["sessionKey"] == MAIN
        order = [
            (f["type"], f.get("payload", {}).get("status") or f.get("event"))
            for f in client.frames
            if f.get("id") == rid or f.get("event") == "agent"
        ]
        assert order[0] == ("res", "accepted")
        assert order[-1] == ("res", "ok")
        assert ("event", "agent") in order[1:-1]
    finally:
        await client.close()


async def test_a_failing_run_answers_unavailable_with_a_payload(
    gw: RunningGateway, client: WireClient
) -> None:
    gw.runtime.runs.runner = FailingRunner("model exploded")
    rid = await request(client, "agent", {"message": "m", "idempotencyKey": "bad"})
    first = await client.response(rid)
    assert (first["ok"], first["payload"]["status"]) == (True, "accepted")
    second = await client.response(rid)
    assert second["ok"] is False
    assert second["error"] == {
        "code": "UNAVAILABLE",
        "message": "model exploded",
        "details": {"errorType": "Unavailable", "errorClass": "GatewayError"},
    }
    assert second["payload"] == {"runId": "bad", "status": "error", "summary": "model exploded"}
    entry = gw.runtime.store.get(MAIN)
    assert entry is not None
    assert entry.status == "failed"


async def test_an_aborted_run_answers_unavailable(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    rid = await request(client, "agent", {"message": "m", "idempotencyKey": "ab"})
    assert (await client.response(rid))["payload"]["status"] == "accepted"
    await runner.started.wait()
    await client.ok("chat.abort", {"sessionKey": "main"})
    second = await client.response(rid)
    assert second["ok"] is False
    assert second["error"]["code"] == "UNAVAILABLE"
    assert second["payload"] == {"runId": "ab", "status": "error", "summary": "aborted"}


async def test_a_repeat_gets_both_answers_again(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    params = {"message": "m", "idempotencyKey": "dup"}
    first = await request(client, "agent", params)
    accepted = (await client.response(first))["payload"]
    while_running = await request(client, "agent", params)
    assert (await client.response(while_running))["payload"] == accepted
    runner.release.set()
    done = (await client.response(first))["payload"]
    assert (await client.response(while_running))["payload"] == done
    after = await request(client, "agent", params)
    assert (await client.response(after))["payload"] == accepted
    assert (await client.response(after))["payload"] == done
    history = await client.ok("chat.history", {"sessionKey": "main"})
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    chat = await client.ok(
        "chat.send", {"sessionKey": "main", "message": "m", "idempotencyKey": "dup"}
    )
    assert chat["status"] == "started"


async def test_agent_picks_its_session(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)

    async def run(params: dict[str, Any]) -> str:
        rid = await request(client, "agent", {"message": "m", **params})
        await client.response(rid)
        second = await client.response(rid)
        assert second["ok"] is True, second
        return str(second["payload"]["result"]["meta"]["sessionKey"])

    assert await run({"idempotencyKey": "1"}) == MAIN
    assert await run({"idempotencyKey": "2", "agentId": "Ops"}) == "agent:ops:main"
    assert await run({"idempotencyKey": "3", "sessionKey": "Chat-7"}) == "agent:main:chat-7"
    entry = gw.runtime.store.get("agent:ops:main")
    assert entry is not None
    assert await run({"idempotencyKey": "4", "sessionId": entry.session_id}) == "agent:ops:main"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"idempotencyKey": "k"}, "invalid agent params: message is required"),
        ({"message": "m"}, "invalid agent params: idempotencyKey is required"),
        (
            {"message": "m", "idempotencyKey": "k", "wat": 1},
            "invalid agent params: unknown key 'wat'",
        ),
        (
            {"message": "m", "idempotencyKey": "k", "bootstrapContextMode": "huge"},
            "invalid agent params: bootstrapContextMode must be one of 'full', 'lightweight'",
        ),
        (
            {"message": "m", "idempotencyKey": "k", "timeout": -1},
            "invalid agent params: timeout must be >= 0",
        ),
        ({"message": "m", "idempotencyKey": "k", "agentId": "bad id"}, "invalid agentId: bad id"),
        (
            {"message": "m", "idempotencyKey": "k", "agentId": "ops", "sessionKey": "agent:dev:x"},
            "agent session key agent (dev) does not match agentId (ops)",
        ),
        ({"message": "m", "idempotencyKey": "k", "sessionId": "nope"}, "No session found: nope"),
    ],
)
async def test_agent_refusals(
    gw: RunningGateway, client: WireClient, params: dict[str, Any], message: str
) -> None:
    frame = await client.call("agent", params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"].startswith(message)
    assert gw.runtime.runs.active_runs() == []
    assert gw.runtime.store.get(MAIN) is None


async def test_every_listed_param_is_accepted(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    params: dict[str, Any] = {
        "message": "m",
        "idempotencyKey": "all",
        "agentId": "main",
        "provider": "p",
        "model": "x",
        "to": "t",
        "replyTo": "r",
        "sessionKey": "main",
        "thinking": "low",
        "deliver": False,
        "attachments": [],
        "channel": "c",
        "replyChannel": "c",
        "accountId": "a",
        "replyAccountId": "a",
        "threadId": "1",
        "groupId": "g",
        "groupChannel": "g",
        "groupSpace": "s",
        "timeout": 30,
        "bestEffortDeliver": True,
        "lane": "main",
        "extraSystemPrompt": "be brief",
        "bootstrapContextMode": "lightweight",
        "bootstrapContextRunKind": "default",
        "internalEvents": [],
        "inputProvenance": {"kind": "test"},
        "label": "l",
    }
    rid = await request(client, "agent", params)
    assert (await client.response(rid))["ok"] is True
    assert (await client.response(rid))["payload"]["status"] == "ok"
