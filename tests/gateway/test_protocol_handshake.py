"""The connect handshake over a real socket: challenge, auth, protocol, role, scopes, policy."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.options import GatewaySettings
from clawline.gateway.registry import Call
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.types import JSON
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient, connect_params

Wire = Callable[..., Awaitable[WireClient]]


async def refused(client: WireClient, frame: dict[str, Any], code: int = 1008) -> str:
    """Assert ``frame`` is a typed INVALID_REQUEST failure followed by a close with ``code``;
    return the error message."""
    assert frame["type"] == "res"
    assert frame["ok"] is False, frame
    assert frame["error"]["code"] == "INVALID_REQUEST"
    await asyncio.wait_for(client.closed, 5)
    assert client.ws.close_code == code
    return str(frame["error"]["message"])


def add_scoped_methods(gw: RunningGateway) -> None:
    """Methods that need each scope, so scope checks are tested independently of the
    method families other modules add."""

    async def echo(call: Call) -> JSON:
        return {"method": call.method}

    for name, scope in (("test.read", READ), ("test.write", WRITE), ("test.admin", ADMIN)):
        gw.gateway.methods.add(name, echo, scope=scope, schema={})


# --- challenge and success -----------------------------------------------------------------


async def test_the_challenge_comes_first(wire: Wire) -> None:
    before = int(time.time() * 1000)
    client = await wire()
    challenge = client.challenge
    assert client.events[0] is challenge
    assert challenge["type"] == "event"
    assert challenge["event"] == "connect.challenge"
    payload = challenge["payload"]
    assert str(uuid.UUID(payload["nonce"])) == payload["nonce"]
    assert before - 1000 <= payload["ts"] <= int(time.time() * 1000) + 1000


async def test_each_connection_gets_its_own_nonce(wire: Wire) -> None:
    first, second = await wire(), await wire()
    assert first.challenge["payload"]["nonce"] != second.challenge["payload"]["nonce"]


async def test_good_token_gets_hello_ok(gw: RunningGateway, wire: Wire) -> None:
    client = await wire()
    frame = await client.connect(token=TOKEN)
    assert frame["ok"] is True, frame
    hello = frame["payload"]
    assert hello["type"] == "hello-ok"
    assert hello["protocol"] == 4
    assert hello["server"]["connId"] in gw.gateway.connections
    assert hello["server"]["bootId"] == gw.gateway.bus.boot_id
    assert "health" in hello["features"]["methods"]
    assert "connect" not in hello["features"]["methods"]
    assert "sessions.changed" in hello["features"]["events"]
    assert hello["auth"]["method"] == "token"
    assert hello["auth"]["role"] == "operator"
    assert hello["auth"]["scopes"] == [ADMIN]
    assert hello["policy"] == {
        "maxPayload": 26_214_400,
        "maxBufferedBytes": 52_428_800,
        "tickIntervalMs": 30_000,
    }
    snapshot = hello["snapshot"]
    assert {"sessionDefaults", "presence", "health", "stateVersion", "uptimeMs"} <= set(snapshot)
    assert {"modelProvider", "model", "contextTokens"} <= set(snapshot["sessionDefaults"])
    assert await client.ok("health")


@pytest.mark.parametrize("path", ["/", "/ws"])
async def test_both_upgrade_paths_serve_the_protocol(wire: Wire, path: str) -> None:
    client = await wire(path)
    assert client.challenge["event"] == "connect.challenge"
    assert (await client.connect(token=TOKEN))["ok"] is True
    assert (await client.ok("health"))["status"] == "live"


# --- auth ----------------------------------------------------------------------------------


async def test_missing_token_is_refused_and_closed(gw: RunningGateway, wire: Wire) -> None:
    client = await wire()
    message = await refused(client, await client.connect())
    assert message == "unauthorized: a gateway token is required (auth.token)"
    assert not gw.gateway.connections


async def test_empty_token_is_refused_and_closed(wire: Wire) -> None:
    client = await wire()
    message = await refused(client, await client.connect(token=""))
    assert message.startswith("unauthorized:")


async def test_wrong_token_is_refused_and_closed(gw: RunningGateway, wire: Wire) -> None:
    client = await wire()
    message = await refused(client, await client.connect(token=TOKEN + "x"))
    assert message == "unauthorized: gateway token mismatch"
    assert not gw.gateway.connections


async def test_token_of_another_type_is_refused(wire: Wire) -> None:
    client = await wire()
    params = connect_params()
    params["auth"] = {"token": 12345}
    message = await refused(client, await client.call("connect", params))
    assert message == "invalid connect params: token must be a string"


async def test_auth_none_mode_needs_no_token(tmp_path: Path) -> None:
    async with running_gateway(tmp_path, gateway_settings=GatewaySettings(port=0)) as gw:
        client = await WireClient.open(gw.url)
        try:
            frame = await client.connect()
            assert frame["ok"] is True, frame
            assert frame["payload"]["auth"]["method"] == "none"
            assert (await client.ok("health"))["ok"] is True
        finally:
            await client.close()


# --- protocol versions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "chosen"), [(3, 3, 3), (4, 4, 4), (3, 4, 4), (1, 3, 3), (4, 9, 4), (0, 99, 4)]
)
async def test_protocol_is_the_highest_common_version(
    wire: Wire, low: int, high: int, chosen: int
) -> None:
    client = await wire()
    frame = await client.connect(token=TOKEN, min_protocol=low, max_protocol=high)
    assert frame["ok"] is True, frame
    assert frame["payload"]["protocol"] == chosen


@pytest.mark.parametrize(("low", "high"), [(5, 6), (1, 2), (4, 3), (5, 5)])
async def test_protocol_mismatch_is_refused_and_closed(wire: Wire, low: int, high: int) -> None:
    client = await wire()
    frame = await client.connect(token=TOKEN, min_protocol=low, max_protocol=high)
    message = await refused(client, frame)
    assert message.startswith("protocol mismatch")
    assert f"{low}..{high}" in message


async def test_protocol_fields_are_required(wire: Wire) -> None:
    client = await wire()
    params = connect_params(token=TOKEN)
    del params["maxProtocol"]
    message = await refused(client, await client.call("connect", params))
    assert message == "invalid connect params: maxProtocol is required"


# --- role, first request, second connect ---------------------------------------------------


async def test_a_role_other_than_operator_is_refused(wire: Wire) -> None:
    client = await wire()
    params = connect_params(token=TOKEN)
    params["role"] = "node"
    message = await refused(client, await client.call("connect", params))
    assert message.startswith("unsupported role: node")


async def test_a_long_non_ascii_refusal_still_closes_cleanly(wire: Wire) -> None:
    """The close reason is bounded in bytes (a WebSocket close reason is at most 123)."""
    client = await wire()
    params = connect_params(token=TOKEN)
    params["role"] = "é" * 64
    message = await refused(client, await client.call("connect", params))
    assert message.startswith("unsupported role:")
    assert len(client.ws.close_reason.encode()) <= 123  # type: ignore[union-attr]


async def test_the_first_request_must_be_connect(wire: Wire) -> None:
    client = await wire()
    frame = await client.call("health", {})
    message = await refused(client, frame)
    assert message == "invalid handshake: the first request must be connect"
    assert frame["id"] is not None


async def test_a_malformed_first_frame_is_refused_and_closed(wire: Wire) -> None:
    client = await wire()
    await client.send("{not json")
    assert await refused(client, await client.response(None)) == "invalid frame: not valid JSON"


async def test_a_binary_first_frame_is_refused_and_closed(wire: Wire) -> None:
    client = await wire()
    await client.ws.send(b'{"type":"req"}')
    message = await refused(client, await client.response(None))
    assert "binary" in message


async def test_a_second_connect_is_refused_and_the_connection_survives(client: WireClient) -> None:
    frame = await client.call("connect", connect_params(token=TOKEN))
    assert frame["ok"] is False
    assert frame["error"] == {
        "code": "INVALID_REQUEST",
        "message": "already connected",
        "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
    }
    assert (await client.ok("health"))["ok"] is True


async def test_invalid_client_block_is_refused(wire: Wire) -> None:
    client = await wire()
    params = connect_params(token=TOKEN)
    params["client"]["mode"] = "robot"
    message = await refused(client, await client.call("connect", params))
    assert message.startswith("invalid connect params: mode must be one of")


async def test_unknown_connect_param_is_refused(wire: Wire) -> None:
    client = await wire()
    params = connect_params(token=TOKEN)
    params["bogus"] = True
    message = await refused(client, await client.call("connect", params))
    assert message == "invalid connect params: unknown key 'bogus'"


async def test_clawx_style_connect_is_accepted(wire: Wire) -> None:
    client = await wire()
    params = {
        "minProtocol": 4,
        "maxProtocol": 4,
        "client": {
            "id": "gateway-client",
            "displayName": "ClawX",
            "version": "0.1.0",
            "platform": "darwin",
            "mode": "ui",
        },
        "role": "operator",
        "scopes": ["operator.admin"],
        "caps": ["tool-events"],
        "auth": {"token": TOKEN},
        "locale": "en-US",
        "userAgent": "ClawX/0.1.0",
    }
    frame = await client.call("connect", params)
    assert frame["ok"] is True, frame
    assert frame["payload"]["protocol"] == 4


# --- scopes --------------------------------------------------------------------------------


async def test_unknown_scopes_are_dropped(wire: Wire) -> None:
    client = await wire()
    scopes = ("operator.read", "operator.bogus", "admin", "operator.pairing")
    frame = await client.connect(token=TOKEN, scopes=scopes)
    assert frame["payload"]["auth"]["scopes"] == ["operator.pairing", "operator.read"]


@pytest.mark.parametrize(
    ("granted", "allowed"),
    [
        ((READ,), {"test.read"}),
        ((WRITE,), {"test.read", "test.write"}),
        ((ADMIN,), {"test.read", "test.write", "test.admin"}),
        (("operator.approvals",), set()),
        ((), set()),
    ],
)
async def test_scopes_imply_downwards(
    gw: RunningGateway, wire: Wire, granted: tuple[str, ...], allowed: set[str]
) -> None:
    add_scoped_methods(gw)
    client = await wire()
    assert (await client.connect(token=TOKEN, scopes=granted))["ok"] is True
    scope_of = {"test.read": READ, "test.write": WRITE, "test.admin": ADMIN}
    for method, scope in scope_of.items():
        frame = await client.call(method, {})
        if method in allowed:
            assert frame["ok"] is True, (method, frame)
        else:
            assert frame["ok"] is False, (method, frame)
            assert frame["error"] == {
                "code": "INVALID_REQUEST",
                "message": f"missing scope: {scope}",
                "details": {"errorType": "InvalidInput", "errorClass": "AccessRefused"},
            }
    assert (await client.ok("health"))["ok"] is True


async def test_a_read_only_client_can_call_read_methods(wire: Wire) -> None:
    client = await wire()
    await client.connect(token=TOKEN, scopes=(READ,))
    assert (await client.ok("events.replay", {"afterSeq": 0}))["replayed"] == 0


async def test_a_client_without_scopes_gets_missing_scope(wire: Wire) -> None:
    client = await wire()
    await client.connect(token=TOKEN, scopes=())
    frame = await client.call("events.replay", {"afterSeq": 0})
    assert frame["error"] == {
        "code": "INVALID_REQUEST",
        "message": "missing scope: operator.read",
        "details": {"errorType": "InvalidInput", "errorClass": "AccessRefused"},
    }


async def test_require_device_clears_scopes_without_a_device(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, require_device=True)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        client = await WireClient.open(gw.url)
        try:
            frame = await client.connect(token=TOKEN, scopes=(ADMIN,))
            assert frame["ok"] is True, frame
            assert frame["payload"]["auth"]["scopes"] == []
            denied = await client.call("events.replay", {"afterSeq": 0})
            assert denied["error"]["message"] == "missing scope: operator.read"
            assert (await client.ok("health"))["ok"] is True
        finally:
            await client.close()


# --- connect timeout -----------------------------------------------------------------------


async def test_connect_timeout_refuses_and_closes(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, connect_timeout_s=0.2)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        client = await WireClient.open(gw.url)
        try:
            started = time.monotonic()
            frame = await client.response(None, timeout=5)
            assert await refused(client, frame) == "connect timeout"
            assert 0.15 <= time.monotonic() - started < 3
            assert not gw.gateway.connections
        finally:
            await client.close()


async def test_a_connect_in_time_is_not_timed_out(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, connect_timeout_s=0.3)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        client = await WireClient.open(gw.url)
        try:
            assert (await client.connect(token=TOKEN))["ok"] is True
            await asyncio.sleep(0.5)
            assert (await client.ok("health"))["ok"] is True
            assert not client.closed.done()
        finally:
            await client.close()


async def test_a_client_that_leaves_before_connect_is_forgotten(
    gw: RunningGateway, wire: Wire
) -> None:
    client = await wire()
    await client.close()
    await asyncio.sleep(0.1)
    assert not gw.gateway.connections
    other = await wire()
    assert (await other.connect(token=TOKEN))["ok"] is True
