"""Token handling: constant-time comparison, and the token never reaches the logs."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import websockets

from clawline.gateway.device import DeviceIdentity
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

Wire = Callable[..., Awaitable[WireClient]]


async def test_the_token_is_compared_with_compare_digest(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = hmac.compare_digest
    calls: list[tuple[object, object]] = []

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    good = await wire()
    assert (await good.connect(token=TOKEN))["ok"] is True
    assert calls == [(TOKEN.encode(), TOKEN.encode())]
    bad = await wire()
    assert (await bad.connect(token="nope"))["ok"] is False
    assert calls[1] == (b"nope", TOKEN.encode())
    assert len(calls) == 2


async def test_a_compare_digest_refusal_refuses_the_connect(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision really comes from compare_digest (not from another comparison)."""
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: False)
    client = await wire()
    frame = await client.connect(token=TOKEN)
    assert frame["error"]["message"] == "unauthorized: gateway token mismatch"


SECRET = "s3cr3t-tok-42"  # short: a frame dump showing the tail of a frame would hold it all


async def connect_three_ways(gw: RunningGateway) -> None:
    good = await WireClient.open(gw.url)
    assert (await good.connect(token=SECRET, device=DeviceIdentity.generate()))["ok"] is True
    assert (await good.ok("health"))["ok"] is True
    # without a device block, auth (the token) is the frame's last field
    plain = await WireClient.open(gw.url)
    assert (await plain.connect(token=SECRET))["ok"] is True
    wrong = await WireClient.open(gw.url)
    assert (await wrong.connect(token=SECRET[:-1] + "Q"))["ok"] is False
    missing = await WireClient.open(gw.url)
    assert (await missing.connect())["ok"] is False
    for client in (good, plain, wrong, missing):
        await client.close()


async def test_the_token_never_appears_in_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = GatewaySettings(port=0, auth="token", token=SECRET)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        # uvicorn sets its loggers' levels when it starts, and its "uvicorn" logger does not
        # propagate to the root: open them up and listen to them directly.
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            caplog.set_level(logging.DEBUG, logger=name)
        uvicorn_logger = logging.getLogger("uvicorn")
        uvicorn_logger.addHandler(caplog.handler)
        try:
            await connect_three_ways(gw)
        finally:
            uvicorn_logger.removeHandler(caplog.handler)
    gateway_records = [
        record for record in caplog.records if not record.name.startswith("websockets.client")
    ]
    assert any(record.name.startswith("uvicorn") for record in gateway_records)
    messages = [record.getMessage() for record in gateway_records]
    assert any("connected: client test" in message for message in messages)
    assert any("refused: unauthorized: gateway token mismatch" in message for message in messages)
    assert any("refused: unauthorized: a gateway token is required" in m for m in messages)
    for record in gateway_records:
        text = record.getMessage() + repr(record.args) + str(record.exc_text or "")
        assert SECRET not in text, (record.name, text)
        assert SECRET[:-1] not in text, (record.name, text)


async def test_a_token_in_upgrade_headers_never_appears_in_debug_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """websockets dumps request lines and headers at DEBUG; a client that sends the token as a
    header (``Authorization``, ``Cookie``) must not have it logged."""
    caplog.set_level(logging.DEBUG)
    settings = GatewaySettings(port=0, auth="token", token=SECRET)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        for name in ("uvicorn", "uvicorn.error"):
            caplog.set_level(logging.DEBUG, logger=name)
        uvicorn_logger = logging.getLogger("uvicorn")
        uvicorn_logger.addHandler(caplog.handler)
        headers = {"Authorization": f"Bearer {SECRET}", "Cookie": f"token={SECRET}"}
        try:
            async with websockets.connect(gw.url, additional_headers=headers) as ws:
                challenge = json.loads(await ws.recv())
        finally:
            uvicorn_logger.removeHandler(caplog.handler)
    assert challenge["event"] == "connect.challenge"
    records = [r for r in caplog.records if not r.name.startswith("websockets.client")]
    assert any(record.name.startswith("uvicorn") for record in records)
    for record in records:
        text = record.getMessage() + repr(record.args)
        assert SECRET not in text, (record.name, text)


async def test_refusals_do_not_echo_the_token(gw: RunningGateway, wire: Wire) -> None:
    client = await wire()
    offered = "offered-" + "z" * 30
    frame = await client.connect(token=offered)
    assert offered not in str(frame)
    await asyncio.wait_for(client.closed, 5)
    assert offered not in (client.ws.close_reason or "")
    assert TOKEN not in (client.ws.close_reason or "")


async def test_the_hello_does_not_echo_the_token(client: WireClient, wire: Wire) -> None:
    other = await wire()
    frame = await other.connect(token=TOKEN)
    assert TOKEN not in str(frame)
