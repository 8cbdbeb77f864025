"""``agent.wait``: running, finished and unknown runs."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from clawline.agents.echo import EchoRunner
from clawline.testing.live_gateway import RunningGateway
from tests.agents.support import BlockingRunner, request
from tests.gateway.wire import WireClient


async def test_wait_for_a_running_run(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": "main", "message": "m", "idempotencyKey": "w"})
    rid = await request(client, "agent.wait", {"runId": "w", "timeoutMs": 5000})
    await runner.started.wait()
    await asyncio.sleep(0.05)
    with pytest.raises(TimeoutError):
        await client.response(rid, timeout=0.05)
    runner.release.set()
    result = (await client.response(rid))["payload"]
    assert (result["runId"], result["status"]) == ("w", "ok")
    assert result["startedAt"] <= result["endedAt"]


async def test_wait_for_a_finished_run(gw: RunningGateway, client: WireClient) -> None:
    gw.runtime.runs.runner = EchoRunner(delay_ms=0)
    rid = await request(client, "agent", {"message": "m", "idempotencyKey": "done"})
    await client.response(rid)
    final = (await client.response(rid))["payload"]
    result = await client.ok("agent.wait", {"runId": "done", "timeoutMs": 0})
    assert result == {
        "runId": "done",
        "status": "ok",
        "startedAt": final["startedAt"],
        "endedAt": final["endedAt"],
    }


async def test_wait_for_an_unknown_run_times_out(client: WireClient) -> None:
    started = time.monotonic()
    result = await client.ok("agent.wait", {"runId": "ghost", "timeoutMs": 100})
    assert result == {"runId": "ghost", "status": "timeout"}
    assert time.monotonic() - started >= 0.09


async def test_wait_that_runs_out_while_the_run_goes_on(
    gw: RunningGateway, client: WireClient
) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": "main", "message": "m", "idempotencyKey": "w"})
    assert await client.ok("agent.wait", {"runId": "w", "timeoutMs": 30}) == {
        "runId": "w",
        "status": "timeout",
    }
    assert gw.runtime.runs.has_active_run("agent:main:main")
    runner.release.set()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "invalid agent.wait params: runId is required"),
        ({"runId": ""}, "invalid agent.wait params: runId must have at least 1 characters"),
        ({"runId": "r", "timeoutMs": -1}, "invalid agent.wait params: timeoutMs must be >= 0"),
        ({"runId": "r", "timeout": 1}, "invalid agent.wait params: unknown key 'timeout'"),
    ],
)
async def test_wait_refusals(client: WireClient, params: dict[str, Any], message: str) -> None:
    frame = await client.call("agent.wait", params)
    assert frame["ok"] is False
    assert frame["error"] == {
        "code": "INVALID_REQUEST",
        "message": message,
        "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
    }
