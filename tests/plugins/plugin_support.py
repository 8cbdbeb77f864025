"""Helpers of the plugin API tests: a real gateway on 127.0.0.1:0 with plugins from config, a
connected client, and waiting for conditions."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.wire import WireClient

TOKEN = "plugin-tests-token-0123456789"
SAMPLES = "tests.plugins.sample_plugins"


def plugin_settings(
    state_dir: Path, *enabled: str, raw: Mapping[str, Any] | None = None, **plugins: Any
) -> Settings:
    """Settings whose ``[plugins]`` enables ``enabled`` (plus ``plugins`` keys) over ``raw``."""
    data: dict[str, Any] = dict(raw or {})
    data["plugins"] = {"enabled": list(enabled), "entry_points": False, **plugins}
    return Settings(state_dir=state_dir, raw=data)


@contextlib.asynccontextmanager
async def plugin_gateway(settings: Settings) -> AsyncIterator[RunningGateway]:
    gateway_settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(
        settings.state_dir, settings=settings, gateway_settings=gateway_settings
    ) as running:
        yield running


@contextlib.asynccontextmanager
async def connected(gw: RunningGateway) -> AsyncIterator[WireClient]:
    client = await WireClient.open(gw.url)
    frame = await client.connect(token=TOKEN)
    assert frame["ok"] is True, frame
    try:
        yield client
    finally:
        await client.close()


async def wait_for(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Poll ``condition`` until it is true; fail after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await asyncio.sleep(0.02)


async def run_to_end(client: WireClient, session_key: str, message: str, key: str) -> Any:
    """``chat.send`` and ``agent.wait``; the wait result."""
    sent = await client.ok(
        "chat.send", {"sessionKey": session_key, "message": message, "idempotencyKey": key}
    )
    assert sent["status"] == "started", sent
    return await client.ok("agent.wait", {"runId": key, "timeoutMs": 10_000}, timeout=15)


def plugin_errors(records: list[logging.LogRecord], plugin: str) -> set[str]:
    """The hooks a plugin's failures were logged for (``plugin <name>: <hook> …``)."""
    prefix = f"plugin {plugin}: "
    hooks: set[str] = set()
    for record in records:
        message = record.getMessage()
        if record.name == "clawline.plugins" and message.startswith(prefix):
            hooks.add(message[len(prefix) :].split(" ", 1)[0])
    return hooks
