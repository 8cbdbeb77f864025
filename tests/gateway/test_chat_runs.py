"""Runs through the gateway: timeouts, queueing, idempotency expiry, shutdown mid-run."""

from __future__ import annotations

from pathlib import Path

from clawline.agents.echo import EchoRunner
from clawline.agents.idempotency import IDEMPOTENCY_TTL_MS
from clawline.agents.messages import text_of
from clawline.gateway.options import GatewaySettings
from clawline.store import open_store
from clawline.testing import FakeClock
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.agents.support import BlockingRunner, run_end, wait_event
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

MAIN = "agent:main:main"
SETTINGS = GatewaySettings(port=0, auth="token", token=TOKEN)


async def test_a_run_past_timeout_ms_ends_as_timeout(
    gw: RunningGateway, client: WireClient
) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=60)
    await client.ok("sessions.subscribe", {})
    params = {"sessionKey": "main", "message": "a b c d e", "idempotencyKey": "t", "timeoutMs": 100}
    assert (await client.ok("chat.send", params))["status"] == "started"
    end = (await wait_event(client, "sessions.changed", run_end("t")))["payload"]
    assert (end["phase"], end["status"], end["hasActiveRun"]) == ("end", "timeout", False)
    error = await wait_event(client, "chat", lambda p: p["state"] == "error")
    assert error["payload"]["errorKind"] == "timeout"
    assert error["payload"]["errorMessage"] == "run timed out after 100 ms"
    assert (await client.ok("agent.wait", {"runId": "t"}))["status"] == "timeout"
    entry = gw.runtime.store.get(MAIN)
    assert entry is not None
    assert entry.status == "timeout"


async def test_a_second_send_is_queued_behind_the_running_one(
    gw: RunningGateway, client: WireClient
) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": "main", "message": "1", "idempotencyKey": "r1"})
    await runner.started.wait()
    second = await client.ok(
        "chat.send", {"sessionKey": "main", "message": "2", "idempotencyKey": "r2"}
    )
    assert second == {"runId": "r2", "status": "started"}
    runner.release.set()
    assert (await client.ok("agent.wait", {"runId": "r2"}))["status"] == "ok"
    lifecycle = [
        (e["payload"]["runId"], e["payload"]["data"]["phase"])
        for e in client.events_named("agent")
        if e["payload"]["stream"] == "lifecycle"
    ]
    assert lifecycle == [("r1", "start"), ("r1", "end"), ("r2", "start"), ("r2", "end")]
    history = await client.ok("chat.history", {"sessionKey": "main"})
    assert [m["role"] for m in history["messages"]] == ["user", "user", "assistant", "assistant"]


async def test_the_idempotency_cache_expires(tmp_path: Path) -> None:
    clock = FakeClock()
    async with running_gateway(tmp_path, gateway_settings=SETTINGS, clock=clock) as gw:
        client = await WireClient.open(gw.url)
        try:
            assert (await client.connect(token=TOKEN))["ok"] is True
            params = {"sessionKey": "main", "message": "m", "idempotencyKey": "k"}
            assert (await client.ok("chat.send", params))["status"] == "started"
            await client.ok("agent.wait", {"runId": "k"})
            clock.advance(IDEMPOTENCY_TTL_MS - 1)
            assert (await client.ok("chat.send", params))["status"] == "ok"
            clock.advance(1)
            assert (await client.ok("chat.send", params))["status"] == "started"
        finally:
            await client.close()


async def test_shutdown_mid_run_writes_the_run_end(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with running_gateway(state, gateway_settings=SETTINGS) as gw:
        gw.runtime.runs.runner = EchoRunner(delay_ms=300)
        client = await WireClient.open(gw.url)
        assert (await client.connect(token=TOKEN))["ok"] is True
        params = {"sessionKey": "main", "message": "w " * 20, "idempotencyKey": "slow"}
        assert (await client.ok("chat.send", params))["status"] == "started"
        await wait_event(client, "agent", lambda p: p["stream"] == "assistant")
        assert gw.runtime.runs.has_active_run(MAIN)
    await client.close()
    store = open_store(None, default_sqlite_path=state / "clawline.db")
    try:
        entry = store.get(MAIN)
        assert entry is not None
        assert (entry.status, entry.extra["abortedLastRun"]) == ("killed", True)
        assert entry.started_at is not None
        assert entry.ended_at is not None
        assert entry.extra["runtimeMs"] == entry.ended_at - entry.started_at
        events = store.events(entry.session_id)
        assert [event.data["role"] for event in events] == ["user", "assistant"]
        assert events[1].data["stopReason"] == "aborted"
        assert text_of(events[1].data).startswith("echo:")
    finally:
        store.close()
