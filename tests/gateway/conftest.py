"""Fixtures: a real gateway on 127.0.0.1:0 per test, and raw protocol clients for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.wire import WireClient

TOKEN = "test-token-0123456789"


@pytest.fixture
def gateway_settings() -> GatewaySettings:
    """Override in a test module to change the gateway's settings."""
    return GatewaySettings(port=0, auth="token", token=TOKEN)


@pytest.fixture
async def gw(tmp_path: Path, gateway_settings: GatewaySettings) -> AsyncIterator[RunningGateway]:
    async with running_gateway(tmp_path / "state", gateway_settings=gateway_settings) as running:
        yield running


@pytest.fixture
async def wire(gw: RunningGateway) -> AsyncIterator[Callable[..., Awaitable[WireClient]]]:
    """``await wire()`` opens a raw connection (not yet connected); all are closed after."""
    opened: list[WireClient] = []

    async def open_client(path: str = "/ws") -> WireClient:
        client = await WireClient.open(gw.url, path)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()


@pytest.fixture
async def client(wire: Callable[..., Awaitable[WireClient]]) -> WireClient:
    """A connected operator client with every operator scope (via operator.admin)."""
    opened = await wire()
    frame = await opened.connect(token=TOKEN)
    assert frame["ok"] is True, frame
    return opened
