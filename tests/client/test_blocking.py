"""The synchronous wrapper, used from a thread that has no event loop of its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from clawline.client import BlockingGatewayClient, ConnectError, GatewayRequestError
from clawline.gateway.options import GatewaySettings
from clawline.testing.gateway_thread import GatewayThread

TOKEN = "blocking-token"


def test_requests_block_until_answered(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    with (
        GatewayThread(tmp_path / "state", gateway_settings=settings) as gw,
        BlockingGatewayClient.connect(gw.url, token=TOKEN) as client,
    ):
        payload = client.request("health")
        assert isinstance(payload, dict)
        assert payload["status"] == "live"
        with pytest.raises(GatewayRequestError, match="unknown method: nope"):
            client.request("nope")
        loop_thread = [t for t in threading.enumerate() if t.name == "clawline-client-loop"]
        assert len(loop_thread) == 1
    assert not [t for t in threading.enumerate() if t.name == "clawline-client-loop"]


def test_a_refused_connect_leaves_no_thread_behind(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    with (
        GatewayThread(tmp_path / "state", gateway_settings=settings) as gw,
        pytest.raises(ConnectError, match="token mismatch"),
    ):
        BlockingGatewayClient.connect(gw.url, token="wrong")
    assert not [t for t in threading.enumerate() if t.name == "clawline-client-loop"]
