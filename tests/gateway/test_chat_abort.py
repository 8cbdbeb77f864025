"""``chat.abort`` and ``chat.inject``."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.agents.support import BlockingRunner, run_end, wait_event
from tests.gateway.support import without_details
from tests.gateway.wire import WireClient

MAIN = "agent:main:main"


async def test_abort_ends_the_run_as_killed(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner(partial="so far")
    gw.runtime.runs.runner = runner
    await client.ok("sessions.subscribe", {})
    await client.ok("chat.send", {"sessionKey": "main", "message": "m", "idempotencyKey": "r1"})
    await runner.started.wait()
    assert await client.ok("chat.abort", {"sessionKey": "main"}) == {
        "ok": True,
        "aborted": True,
        "runIds": ["r1"],
    }
    aborted = await wait_event(client, "chat", lambda p: p["state"] == "aborted")
    assert aborted["payload"]["runId"] == "r1"
    assert aborted["payload"]["message"]["content"][0]["text"] == "so far"
    end = (await wait_event(client, "sessions.changed", run_end("r1")))["payload"]
    assert (end["phase"], end["status"], end["abortedLastRun"], end["hasActiveRun"]) == (
        "end",
        "killed",
        True,
        False,
    )
    lifecycle = await wait_event(client, "agent", lambda p: p["data"].get("phase") == "end")
    assert lifecycle["payload"]["data"]["stopReason"] == "aborted"
    entry = gw.runtime.store.get(MAIN)
    assert entry is not None
    assert (entry.status, entry.extra["abortedLastRun"]) == ("killed", True)
    waited = await client.ok("agent.wait", {"runId": "r1"})
    assert (waited["status"], waited["error"]) == ("error", "aborted")
    replay = await client.ok(
        "chat.send", {"sessionKey": "main", "message": "m", "idempotencyKey": "r1"}
    )
    assert (replay["status"], replay["summary"]) == ("aborted", "aborted")


async def test_abort_of_one_run_by_id(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": "main", "message": "1", "idempotencyKey": "r1"})
    await runner.started.wait()
    await client.ok("chat.send", {"sessionKey": "main", "message": "2", "idempotencyKey": "r2"})
    result = await client.ok("chat.abort", {"sessionKey": "main", "runId": "r2"})
    assert result == {"ok": True, "aborted": True, "runIds": ["r2"]}
    assert gw.runtime.runs.has_active_run(MAIN)
    runner.release.set()
    assert (await client.ok("agent.wait", {"runId": "r1"}))["status"] == "ok"


async def test_abort_without_a_run(client: WireClient) -> None:
    assert await client.ok("chat.abort", {"sessionKey": "main"}) == {
        "ok": True,
        "aborted": False,
        "runIds": [],
    }
    assert (await client.ok("chat.abort", {"sessionKey": "main", "runId": "nope"}))[
        "aborted"
    ] is False


async def test_inject_appends_without_running(gw: RunningGateway, client: WireClient) -> None:
    await gw.runtime.call(gw.runtime.catalog.patch, "main", {})
    result = await client.ok(
        "chat.inject", {"sessionKey": "main", "message": "a note", "label": "system"}
    )
    entry = gw.runtime.store.get(MAIN)
    assert entry is not None
    assert result == {"ok": True, "messageId": f"{entry.session_id}:1"}
    assert not gw.runtime.runs.has_active_run(MAIN)
    history = await client.ok("chat.history", {"sessionKey": "main"})
    [message] = history["messages"]
    assert (message["role"], message["content"][0]["text"]) == ("assistant", "a note")
    assert (message["label"], message["injected"], message["stopReason"]) == (
        "system",
        True,
        "injected",
    )
    final = await wait_event(client, "chat", lambda p: p["state"] == "final")
    assert final["payload"]["runId"].startswith("inject-")
    assert final["payload"]["message"]["id"] == result["messageId"]
    assert client.events_named("agent") == []


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "chat.inject",
            {"sessionKey": "agent:main:none", "message": "m"},
            "session not found: agent:main:none",
        ),
        (
            "chat.inject",
            {"sessionKey": "main", "message": "m", "label": "x" * 101},
            "invalid chat.inject params: label must have at most 100 characters",
        ),
        ("chat.inject", {"sessionKey": "main"}, "invalid chat.inject params: message is required"),
        ("chat.abort", {}, "invalid chat.abort params: sessionKey is required"),
        (
            "chat.abort",
            {"sessionKey": "main", "all": True},
            "invalid chat.abort params: unknown key 'all'",
        ),
    ],
)
async def test_refusals(
    gw: RunningGateway, client: WireClient, method: str, params: dict[str, Any], message: str
) -> None:
    frame = await client.call(method, params)
    assert frame["ok"] is False
    assert without_details(frame["error"]) == {"code": "INVALID_REQUEST", "message": message}
    assert gw.runtime.store.get("agent:main:none") is None
