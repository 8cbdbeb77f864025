"""Fixtures: a real gateway on 127.0.0.1:0 in the test's event loop, and connected clients
that are closed after the test."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from clawline.client import GatewayClient
from clawline.config import Settings
from clawline.gateway.assembly import build_gateway
from clawline.gateway.options import GatewaySettings
from clawline.gateway.registry import MethodRegistry
from clawline.gateway.server import bind_socket, serve
from clawline.runtime import Runtime
from clawline.testing.live_gateway import RunningGateway, running_gateway

TOKEN = "client-test-token-42"

Connect = Callable[..., Awaitable[GatewayClient]]


@pytest.fixture
def gateway_settings() -> GatewaySettings:
    """Override in a test module to change the gateway's settings."""
    return GatewaySettings(port=0, auth="token", token=TOKEN)


@pytest.fixture
async def gw(tmp_path: Path, gateway_settings: GatewaySettings) -> AsyncIterator[RunningGateway]:
    async with running_gateway(tmp_path / "state", gateway_settings=gateway_settings) as running:
        yield running


@pytest.fixture
async def connect(gw: RunningGateway) -> AsyncIterator[Connect]:
    """``await connect(**options)``: a client of ``gw`` (token given unless overridden)."""
    opened: list[GatewayClient] = []

    async def open_client(**options: Any) -> GatewayClient:
        options.setdefault("token", TOKEN)
        client = await GatewayClient.connect(options.pop("url", gw.url), **options)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()


def drop_connections(gw: RunningGateway) -> int:
    """Close every client connection from the gateway's side; how many there were."""
    connections = list(gw.gateway.connections.values())
    for connection in connections:
        connection._close_soon(1001, "dropped by the test")
    return len(connections)


@contextlib.asynccontextmanager
async def serving(
    state_dir: Path,
    methods: MethodRegistry,
    settings: GatewaySettings | None = None,
    *,
    port: int = 0,
) -> AsyncIterator[str]:
    """A gateway with its own method registry (test-only methods); yields its URL."""
    runtime = Runtime.open(Settings(state_dir=state_dir))
    gateway = build_gateway(runtime, settings or GatewaySettings(port=0), methods=methods)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    def on_ready(url: str) -> None:
        if not ready.done():
            ready.set_result(url)

    server = asyncio.create_task(
        serve(
            gateway,
            sock=bind_socket("127.0.0.1", port),
            on_ready=on_ready,
            stop=stop,
            install_signal_handlers=False,
        )
    )
    try:
        waiting: set[asyncio.Future[Any]] = {server, ready}
        done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if server in done:
            server.result()
            raise RuntimeError("the gateway stopped before it was ready")
        yield ready.result()
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await server
        runtime.close()
