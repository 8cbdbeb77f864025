"""The gateway answers the handshake and a method over a real socket."""

from __future__ import annotations

import asyncio
import urllib.request

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.wire import WireClient


async def test_hello_ok_lists_the_methods_served(client: WireClient) -> None:
    payload = await client.ok("health")
    assert payload["ok"] is True
    assert payload["status"] == "live"


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


async def test_http_health_endpoints(gw: RunningGateway) -> None:
    for path in ("/health", "/healthz", "/readyz"):
        status, body = await asyncio.to_thread(_get, gw.http_url + path)
        assert status == 200
        assert body == b'{"ok":true,"status":"live"}'
