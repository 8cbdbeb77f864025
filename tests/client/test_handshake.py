"""Connecting: challenge, connect (token, device signature), hello-ok, and refusals."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawline.client import ConnectError, DeviceIdentity, GatewayClient, normalize_url
from clawline.client.handshake import ConnectOptions
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.pairing import pair_device
from clawline.types import JSONObject

from .conftest import TOKEN, Connect


async def test_token_connect_reports_what_the_gateway_granted(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    assert client.connected
    assert client.hello["type"] == "hello-ok"
    assert client.protocol == 4
    assert client.scopes == ("operator.admin", "operator.read", "operator.write")
    assert client.boot_id == gw.gateway.bus.boot_id
    assert {"health", "events.replay"} <= set(client.methods)
    assert "sessions.changed" in client.events_supported
    assert client.session_defaults["defaultAgentId"] == "main"
    (connection,) = gw.gateway.connections.values()
    assert connection.info is not None
    assert (connection.info.client_id, connection.info.client_mode) == ("cli", "cli")
    assert connection.info.auth_method == "token"
    assert connection.info.device_id is None


async def test_device_connect_is_signed_and_verified(gw: RunningGateway, connect: Connect) -> None:
    device = DeviceIdentity.generate()
    client = await connect(device=device, display_name="tests", scopes=("operator.read",))
    assert client.scopes == ("operator.read",)
    (connection,) = gw.gateway.connections.values()
    assert connection.info is not None
    assert connection.info.device_id == device.device_id
    assert connection.info.client["displayName"] == "tests"


async def test_protocol_range_is_negotiated(connect: Connect) -> None:
    assert (await connect(min_protocol=3, max_protocol=3)).protocol == 3
    with pytest.raises(ConnectError) as caught:
        await connect(min_protocol=5, max_protocol=6)
    assert caught.value.code == "INVALID_REQUEST"
    assert str(caught.value) == (
        "protocol mismatch: this gateway speaks protocol 3..4, the client asked for 5..6"
    )


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "unauthorized: a gateway token is required (auth.token)"),
        ("wrong", "unauthorized: gateway token mismatch"),
    ],
)
async def test_refused_token_is_a_connect_error_with_the_gateway_message(
    connect: Connect, token: str | None, message: str
) -> None:
    with pytest.raises(ConnectError) as caught:
        await connect(token=token)
    assert (caught.value.code, caught.value.message) == ("INVALID_REQUEST", message)
    assert TOKEN not in repr(caught.value)


async def test_a_forged_device_signature_is_refused(
    gw: RunningGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    impostor = DeviceIdentity.generate()
    honest = ConnectOptions.params

    def forged(options: ConnectOptions, nonce: str, ts: int | None) -> JSONObject:
        params = honest(options, nonce, ts)
        device = params["device"]
        assert isinstance(device, dict)
        device["signature"] = impostor.sign("v3|something else")
        return params

    monkeypatch.setattr(ConnectOptions, "params", forged)
    with pytest.raises(ConnectError) as caught:
        await GatewayClient.connect(gw.url, token=TOKEN, device=DeviceIdentity.generate())
    assert caught.value.message == "device authentication failed: device signature is invalid"


@pytest.mark.parametrize("path", ["", "/", "/ws"])
async def test_url_with_or_without_the_ws_path(
    gw: RunningGateway, connect: Connect, path: str
) -> None:
    client = await connect(url=gw.url + path)
    assert client.url == gw.url + (path or "/")
    assert client.protocol == 4


def test_urls_are_normalised() -> None:
    assert normalize_url("ws://127.0.0.1:1") == "ws://127.0.0.1:1/"
    assert normalize_url(" http://h:2/ws ") == "ws://h:2/ws"
    assert normalize_url("https://h/ws") == "wss://h/ws"
    for bad in ("ftp://h:1", "127.0.0.1:18790", "ws://"):
        with pytest.raises(ConnectError, match="invalid gateway URL"):
            normalize_url(bad)


async def test_unreachable_gateway_is_a_connect_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectError) as caught:
        await GatewayClient.connect(f"ws://127.0.0.1:{port}", connect_timeout=5)
    assert caught.value.code == "UNAVAILABLE"
    assert caught.value.message.startswith(f"cannot connect to ws://127.0.0.1:{port}/: ")


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A TCP server that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_silent_server_times_out_the_handshake() -> None:
    async with silent_server() as port:
        started = asyncio.get_running_loop().time()
        with pytest.raises(ConnectError) as caught:
            await GatewayClient.connect(f"ws://127.0.0.1:{port}", connect_timeout=0.3)
        elapsed = asyncio.get_running_loop().time() - started
    assert caught.value.message == (
        f"cannot connect to ws://127.0.0.1:{port}/: no handshake within 0.3s"
    )
    assert elapsed < 3


async def test_require_device_grants_scopes_to_paired_devices_only(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, require_device=True)
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
        identity = DeviceIdentity.generate()
        pair_device(gw.runtime.store, identity)
        bare = await GatewayClient.connect(gw.url, token=TOKEN)
        signed = await GatewayClient.connect(gw.url, token=TOKEN, device=identity)
        unpaired = await GatewayClient.connect(
            gw.url, token=TOKEN, device=DeviceIdentity.generate()
        )
        try:
            assert bare.scopes == ()
            assert signed.scopes == ("operator.admin", "operator.read", "operator.write")
            assert unpaired.scopes == ()
        finally:
            await bare.close()
            await signed.close()
            await unpaired.close()


async def test_no_auth_gateway_accepts_a_client_without_token(tmp_path: Path) -> None:
    async with (
        running_gateway(tmp_path / "state") as gw,
        await GatewayClient.connect(gw.url) as client,
    ):
        assert client.protocol == 4
        assert client.connected
    assert not client.connected


async def test_repr_never_shows_the_token(connect: Connect) -> None:
    client = await connect()
    assert TOKEN not in repr(client)
    assert TOKEN not in repr(vars(client))
