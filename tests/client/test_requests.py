"""Requests: payloads, typed errors, timeouts, lost connections and two-frame answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawline.client import (
    ClientError,
    ConnectionLost,
    GatewayClient,
    GatewayRequestError,
    Timeout,
)
from clawline.errors import ClawlineError
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.methods import system
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.testing.live_gateway import RunningGateway
from clawline.types import JSON

from .conftest import Connect, drop_connections, serving

test_methods = MethodRegistry()
test_methods.include(system.methods)


@test_methods.method("test.sleep", scope=None, schema={"seconds": P.number(required=True)})
async def sleep(call: Call) -> JSON:
    await asyncio.sleep(call.params["seconds"])
    return {"slept": call.params["seconds"]}


@test_methods.method("test.twice", scope=None, schema={"fail": P.boolean()})
async def twice(call: Call) -> JSON:
    """Answers like ``agent``: an ack, then the final answer under the same id."""
    await call.ack({"runId": "r-1", "status": "accepted", "acceptedAt": 1})
    await asyncio.sleep(0.05)
    if call.params.get("fail"):
        failure = GatewayError("run failed: boom", ErrorCode.UNAVAILABLE)
        call.connection.send_error(
            call.request_id, failure, {"runId": "r-1", "status": "error", "summary": "boom"}
        )
        return {"ignored": "a third frame the client must not mistake for anything"}
    return {"runId": "r-1", "status": "ok", "summary": "completed", "result": {"text": "hi"}}


@test_methods.method("test.once", scope=None, schema={})
async def once(call: Call) -> JSON:
    return {"runId": "r-2", "status": "ok", "summary": "completed"}


@test_methods.method("test.refuse", scope=None, schema={})
async def refuse(call: Call) -> JSON:
    raise GatewayError("refused on purpose", details={"why": "test"}, retryable=True)


@pytest.fixture
async def custom(tmp_path: Path) -> AsyncIterator[GatewayClient]:
    async with serving(tmp_path / "state", test_methods) as url:
        client = await GatewayClient.connect(url)
        yield client
        await client.close()


async def test_request_returns_the_payload(gw: RunningGateway, connect: Connect) -> None:
    client = await connect()
    payload = await client.request("health")
    assert isinstance(payload, dict)
    assert (payload["ok"], payload["bootId"]) == (True, gw.gateway.bus.boot_id)


async def test_refusals_are_typed_with_code_message_and_details(connect: Connect) -> None:
    client = await connect()
    with pytest.raises(GatewayRequestError) as caught:
        await client.request("no.such.method")
    error = caught.value
    assert (error.code, error.message, error.method) == (
        "INVALID_REQUEST",
        "unknown method: no.such.method",
        "no.such.method",
    )
    assert isinstance(error, ClientError)
    assert isinstance(error, ClawlineError)
    with pytest.raises(GatewayRequestError, match="unknown key 'bogus'") as caught:
        await client.request("health", {"bogus": 1})
    assert caught.value.code == "INVALID_REQUEST"


async def test_details_and_retryable_are_kept(custom: GatewayClient) -> None:
    with pytest.raises(GatewayRequestError) as caught:
        await custom.request("test.refuse")
    assert caught.value.details == {
        "why": "test",
        "errorType": "InvalidInput",  # the gateway adds the category and class
        "errorClass": "GatewayError",
    }
    assert caught.value.retryable is True
    assert caught.value.payload is None


async def test_a_slow_answer_times_out_and_the_client_stays_usable(custom: GatewayClient) -> None:
    with pytest.raises(Timeout) as caught:
        await custom.request("test.sleep", {"seconds": 0.5}, timeout=0.05)
    assert isinstance(caught.value, TimeoutError)
    assert (caught.value.code, caught.value.message) == (
        "TIMEOUT",
        "test.sleep: no answer within 0.05s",
    )
    await asyncio.sleep(0.6)  # the late answer arrives and is ignored
    assert await custom.request("test.sleep", {"seconds": 0}) == {"slept": 0}


async def test_concurrent_requests_are_matched_by_id(custom: GatewayClient) -> None:
    answers = await asyncio.gather(
        custom.request("test.sleep", {"seconds": 0.2}),
        custom.request("test.sleep", {"seconds": 0.1}),
        custom.request("test.sleep", {"seconds": 0}),
    )
    assert list(answers) == [{"slept": 0.2}, {"slept": 0.1}, {"slept": 0}]


async def test_request_final_returns_ack_and_final(custom: GatewayClient) -> None:
    ack, final = await custom.request_final("test.twice", {}, timeout=5)
    assert ack == {"runId": "r-1", "status": "accepted", "acceptedAt": 1}
    assert final == {
        "runId": "r-1",
        "status": "ok",
        "summary": "completed",
        "result": {"text": "hi"},
    }


async def test_request_final_raises_the_failed_final_with_its_payload(
    custom: GatewayClient,
) -> None:
    with pytest.raises(GatewayRequestError) as caught:
        await custom.request_final("test.twice", {"fail": True}, timeout=5)
    assert (caught.value.code, caught.value.message) == ("UNAVAILABLE", "run failed: boom")
    assert caught.value.payload == {"runId": "r-1", "status": "error", "summary": "boom"}
    assert await custom.request("health") is not None  # the stray third frame did no harm


async def test_request_final_of_a_single_answer(custom: GatewayClient) -> None:
    assert await custom.request_final("test.once") == (
        None,
        {"runId": "r-2", "status": "ok", "summary": "completed"},
    )


async def test_plain_request_resolves_on_the_ack_and_ignores_the_final(
    custom: GatewayClient,
) -> None:
    ack = await custom.request("test.twice", {})
    assert ack == {"runId": "r-1", "status": "accepted", "acceptedAt": 1}
    await asyncio.sleep(0.1)
    assert await custom.request("test.once") == {
        "runId": "r-2",
        "status": "ok",
        "summary": "completed",
    }


async def test_request_final_times_out_waiting_for_the_final(custom: GatewayClient) -> None:
    with pytest.raises(Timeout) as caught:
        await custom.request_final("test.twice", {}, timeout=0.01)
    assert caught.value.message == "test.twice: no final answer within 0.01s"


async def test_a_dropped_connection_is_reported_and_refuses_requests(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    assert drop_connections(gw) == 1
    lost = await asyncio.wait_for(client.wait_disconnected(), 5)
    assert isinstance(lost, ConnectionLost)
    assert lost.message == (
        f"connection to {client.url} lost: closed with code 1001 (dropped by the test)"
    )
    assert not client.connected
    with pytest.raises(ConnectionLost, match="health: not connected"):
        await client.request("health")


async def test_a_pending_request_gets_connection_lost(tmp_path: Path) -> None:
    async with serving(tmp_path / "state", test_methods) as url:
        client = await GatewayClient.connect(url)
        pending = asyncio.create_task(client.request("test.sleep", {"seconds": 30}, timeout=20))
        await asyncio.sleep(0.1)
    # the gateway stopped while the request waited
    with pytest.raises(ConnectionLost, match="lost"):
        await asyncio.wait_for(pending, 10)
    await client.close()


async def test_requests_after_close_are_refused(connect: Connect) -> None:
    client = await connect()
    await client.close()
    await client.close()  # idempotent
    with pytest.raises(ConnectionLost, match="health: the client is closed"):
        await client.request("health")


async def test_request_final_against_the_agent_method(connect: Connect) -> None:
    client = await connect()
    params = {"message": "hello", "idempotencyKey": "k-1", "sessionKey": "main"}
    ack, final = await client.request_final("agent", params, timeout=20)
    assert isinstance(ack, dict)
    assert isinstance(final, dict)
    assert (ack["runId"], ack["status"]) == ("k-1", "accepted")
    assert (final["runId"], final["status"], final["summary"]) == ("k-1", "ok", "completed")
    # a repeat of the same idempotency key answers from the cached outcome, both frames again
    assert await client.request_final("agent", params, timeout=20) == (ack, final)
