"""``chat.send`` over a real socket: the ack, the events of the run, idempotency, refusals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from clawline.agents.echo import EchoRunner
from clawline.testing.live_gateway import RunningGateway
from tests.agents.support import BlockingRunner, RecordingClient, run_end, wait_event
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

MAIN = "agent:main:main"


def describe(frame: dict[str, Any]) -> str:
    if frame["type"] == "res":
        return f"res:{frame['payload']['status']}"
    payload = frame["payload"]
    name = frame["event"]
    if name == "chat":
        return f"chat:{payload['state']}"
    if name == "agent":
        phase = payload["data"].get("phase")
        return f"agent:{payload['stream']}" + (f":{phase}" if phase else "")
    if name == "session.message":
        return f"message:{payload['message']['role']}:{payload['messageSeq']}"
    if name == "sessions.changed":
        return f"changed:{payload.get('phase') or payload.get('reason')}"
    if name == "session.update":
        return f"update:{payload['event']}"
    return str(name)


async def test_ack_then_the_events_of_the_run_in_order(gw: RunningGateway) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    client = await RecordingClient.open_recording(gw.url)
    try:
        assert (await client.connect(token=TOKEN))["ok"] is True
        await client.ok("sessions.subscribe", {})
        ack = await client.ok(
            "chat.send", {"sessionKey": "main", "message": "hi", "idempotencyKey": "run-1"}
        )
        assert ack == {"runId": "run-1", "status": "started"}
        await wait_event(client, "sessions.changed", run_end("run-1"))
        frames = client.frames[client.frames.index(client.events_named("sessions.changed")[0]) :]
        streamed = ("agent:assistant", "update:delta", "tick")
        order = [describe(f) for f in frames if describe(f) not in streamed]
        assert order == [
            "changed:create",
            "message:user:1",
            "changed:message",
            "res:started",
            "changed:start",
            "agent:lifecycle:start",
            "chat:delta",
            "message:assistant:2",
            "changed:message",
            "chat:final",
            "update:completed",
            "agent:lifecycle:end",
            "changed:end",
        ]
        changed = [e["payload"] for e in client.events_named("sessions.changed")]
        start = next(p for p in changed if p.get("phase") == "start")
        assert (start["reason"], start["phase"], start["runId"]) == ("send", "start", "run-1")
        assert (start["status"], start["hasActiveRun"]) == ("running", True)
        assert start["session"]["key"] == MAIN
        end = changed[-1]
        assert (end["phase"], end["status"], end["hasActiveRun"]) == ("end", "done", False)
        assert isinstance(end["runtimeMs"], int)
        assert isinstance(end["endedAt"], int)
        final = client.events_named("chat")[-1]["payload"]
        assert final["sessionKey"] == MAIN
        assert final["message"]["content"] == [{"type": "text", "text": "echo: hi"}]
        assert [e["payload"]["seq"] for e in client.events_named("chat")] == [1, 2]
        agent = [e["payload"] for e in client.events_named("agent")]
        assert [p["seq"] for p in agent] == list(range(1, len(agent) + 1))
        assert {p["stream"] for p in agent} == {"lifecycle", "assistant"}
        assistant = client.events_named("session.message")[-1]["payload"]
        assert (assistant["messageSeq"], assistant["message"]["seq"]) == (2, 2)
    finally:
        await client.close()


async def test_unsubscribed_operators_get_chat_and_agent_only(
    gw: RunningGateway, client: WireClient, wire: Callable[..., Awaitable[WireClient]]
) -> None:
    other = await wire()
    assert (await other.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
    await client.ok("chat.send", {"sessionKey": "s", "message": "x", "idempotencyKey": "k"})
    await wait_event(other, "agent", lambda p: p["data"].get("phase") == "end")
    names = {frame["event"] for frame in other.events}
    assert {"chat", "agent"} <= names
    assert not names & {"sessions.changed", "session.message"}


async def test_history_right_after_the_ack_shows_the_user_message(
    gw: RunningGateway, client: WireClient
) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": "main", "message": "hello", "idempotencyKey": "k"})
    history = await client.ok("chat.history", {"sessionKey": "main"})
    assert [(m["role"], m["content"][0]["text"]) for m in history["messages"]] == [
        ("user", "hello")
    ]
    runner.release.set()


async def test_idempotency_started_in_flight_then_replayed(
    gw: RunningGateway, client: WireClient
) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    params = {"sessionKey": "main", "message": "m", "idempotencyKey": "dup"}
    assert await client.ok("chat.send", params) == {"runId": "dup", "status": "started"}
    assert await client.ok("chat.send", params) == {"runId": "dup", "status": "in_flight"}
    runner.release.set()
    await client.ok("agent.wait", {"runId": "dup"})
    replay = await client.ok("chat.send", params)
    assert (replay["runId"], replay["status"], replay["summary"]) == ("dup", "ok", "completed")
    assert replay["result"]["text"] == "thinking done"
    history = await client.ok("chat.history", {"sessionKey": "main"})
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]


async def test_a_new_key_gets_an_entry_under_its_canonical_key(
    gw: RunningGateway, client: WireClient
) -> None:
    await client.ok("chat.send", {"sessionKey": "ACP:Abc", "message": "m", "idempotencyKey": "k"})
    await client.ok("agent.wait", {"runId": "k"})
    entry = gw.runtime.store.get("agent:main:acp:abc")
    assert entry is not None
    assert entry.status == "done"


async def test_provenance_fields_need_admin(
    gw: RunningGateway, client: WireClient, wire: Callable[..., Awaitable[WireClient]]
) -> None:
    writer = await wire()
    assert (await writer.connect(token=TOKEN, scopes=["operator.write"]))["ok"] is True
    for field in ("systemInputProvenance", "systemProvenanceReceipt"):
        params = {"sessionKey": "p", "message": "m", "idempotencyKey": field, field: {"a": 1}}
        frame = await writer.call("chat.send", params)
        assert frame["ok"] is False
        assert frame["error"] == {
            "code": "INVALID_REQUEST",
            "message": "system provenance fields require admin scope",
            "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
        }
    assert gw.runtime.store.get("agent:main:p") is None
    admin = {
        "sessionKey": "p",
        "message": "m",
        "idempotencyKey": "adm",
        "systemInputProvenance": {},
    }
    assert (await client.ok("chat.send", admin))["status"] == "started"


async def test_read_only_clients_cannot_send(wire: Callable[..., Awaitable[WireClient]]) -> None:
    reader = await wire()
    assert (await reader.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
    frame = await reader.call(
        "chat.send", {"sessionKey": "m", "message": "m", "idempotencyKey": "k"}
    )
    assert frame["ok"] is False
    assert frame["error"]["message"] == "missing scope: operator.write"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"message": "m", "idempotencyKey": "k"},
            "invalid chat.send params: sessionKey is required",
        ),
        (
            {"sessionKey": "m", "idempotencyKey": "k"},
            "invalid chat.send params: message is required",
        ),
        (
            {"sessionKey": "m", "message": "m"},
            "invalid chat.send params: idempotencyKey is required",
        ),
        (
            {"sessionKey": "m", "message": "m", "idempotencyKey": "k", "bogus": 1},
            "invalid chat.send params: unknown key 'bogus'",
        ),
        (
            {"sessionKey": "m", "message": "m", "idempotencyKey": "k", "timeoutMs": -5},
            "invalid chat.send params: timeoutMs must be >= 0",
        ),
        (
            {"sessionKey": "m", "message": "m", "idempotencyKey": "k", "deliver": "yes"},
            "invalid chat.send params: deliver must be a boolean",
        ),
        (
            {"sessionKey": "m", "message": "m", "idempotencyKey": "k", "attachments": ["x"]},
            "invalid chat.send params: attachments[0] must be an object",
        ),
        (
            {"sessionKey": "agent:x", "message": "m", "idempotencyKey": "k"},
            "invalid session key: 'agent:x' needs the form agent:<agentId>:<rest>",
        ),
        ({"sessionKey": "m", "message": " ", "idempotencyKey": "k"}, "invalid message: empty"),
    ],
)
async def test_schema_and_input_refusals(
    gw: RunningGateway, client: WireClient, params: dict[str, Any], message: str
) -> None:
    frame = await client.call("chat.send", params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"].startswith(message)
    assert gw.runtime.store.get("agent:main:m") is None


async def test_attachments_over_the_limit_are_refused(
    gw: RunningGateway, client: WireClient
) -> None:
    content = "QUFB" * 1_666_668  # 3 bytes per 4 characters: 5 000 004 bytes decoded
    params = {
        "sessionKey": "m",
        "message": "see",
        "idempotencyKey": "k",
        "attachments": [{"type": "image", "mimeType": "image/png", "content": content}],
    }
    frame = await client.call("chat.send", params, timeout=20)
    assert frame["ok"] is False
    assert frame["error"]["message"] == (
        "attachments too large: 5000004 bytes (max 5000000 bytes in all)"
    )
    assert gw.runtime.store.get("agent:main:m") is None
    params["attachments"] = [{"type": "image", "mimeType": "image/png", "content": "QUFB"}]
    assert (await client.ok("chat.send", params))["status"] == "started"
