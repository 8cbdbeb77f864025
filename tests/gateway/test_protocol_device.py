"""Device identity (Ed25519, v3 payload) in the connect handshake, over a real socket."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.device import DeviceIdentity, b64url, device_id_for
from clawline.gateway.options import GatewaySettings
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.pairing import pair_device
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient, connect_params

Wire = Callable[..., Awaitable[WireClient]]


def signed_params(client: WireClient, identity: DeviceIdentity, **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("token", TOKEN)
    kwargs.setdefault("scopes", (READ, WRITE))
    kwargs.setdefault("nonce", client.challenge["payload"]["nonce"])
    return connect_params(device=identity, **kwargs)


async def device_refusal(client: WireClient, params: dict[str, Any]) -> str:
    frame = await client.call("connect", params)
    assert frame["ok"] is False, frame
    assert frame["error"]["code"] == "INVALID_REQUEST"
    message = str(frame["error"]["message"])
    assert message.startswith("device authentication failed: "), message
    await asyncio.wait_for(client.closed, 5)
    assert client.ws.close_code == 1008
    return message.removeprefix("device authentication failed: ")


async def test_a_valid_v3_signature_is_accepted(gw: RunningGateway, wire: Wire) -> None:
    identity = DeviceIdentity.generate()
    client = await wire()
    frame = await client.call("connect", signed_params(client, identity))
    assert frame["ok"] is True, frame
    auth = frame["payload"]["auth"]
    assert auth["deviceId"] == identity.device_id
    assert auth["scopes"] == [READ, WRITE]
    assert auth["method"] == "token"
    assert (await client.ok("health"))["ok"] is True


async def test_a_device_family_and_platform_case_are_signed_lower_cased(wire: Wire) -> None:
    identity = DeviceIdentity.generate()
    client = await wire()
    params = signed_params(client, identity, platform="Darwin", device_family="MacBookPro")
    frame = await client.call("connect", params)
    assert frame["ok"] is True, frame


async def test_token_only_connect_has_no_device_in_hello(wire: Wire) -> None:
    client = await wire()
    frame = await client.connect(token=TOKEN)
    assert frame["ok"] is True
    assert "deviceId" not in frame["payload"]["auth"]


async def test_device_connect_in_auth_none_mode(tmp_path: Path) -> None:
    async with running_gateway(tmp_path, gateway_settings=GatewaySettings(port=0)) as gw:
        client = await WireClient.open(gw.url)
        try:
            identity = DeviceIdentity.generate()
            params = signed_params(client, identity, token=None)
            frame = await client.call("connect", params)
            assert frame["ok"] is True, frame
            assert frame["payload"]["auth"]["deviceId"] == identity.device_id
        finally:
            await client.close()


async def test_require_device_grants_scopes_to_a_paired_device(tmp_path: Path) -> None:
    # (an unpaired device gets none: tests/gateway/test_security_pairing.py)
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, require_device=True)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        identity = DeviceIdentity.generate()
        pair_device(gw.runtime.store, identity, (ADMIN,))
        client = await WireClient.open(gw.url)
        try:
            params = signed_params(client, identity, scopes=(ADMIN,))
            frame = await client.call("connect", params)
            assert frame["payload"]["auth"]["scopes"] == [ADMIN]
            assert (await client.ok("events.replay", {"afterSeq": 0}))["replayed"] >= 0
        finally:
            await client.close()


async def test_wrong_device_id_is_refused(wire: Wire) -> None:
    client = await wire()
    params = signed_params(client, DeviceIdentity.generate())
    params["device"]["id"] = DeviceIdentity.generate().device_id
    assert await device_refusal(client, params) == "device id does not match its publicKey"


async def test_a_nonce_other_than_the_challenge_is_refused(wire: Wire) -> None:
    client = await wire()
    params = signed_params(client, DeviceIdentity.generate(), nonce=str(uuid.uuid4()))
    message = await device_refusal(client, params)
    assert message == "device nonce does not match the connect challenge"


async def test_the_nonce_of_another_connection_is_refused(wire: Wire) -> None:
    first, second = await wire(), await wire()
    stolen = first.challenge["payload"]["nonce"]
    params = signed_params(second, DeviceIdentity.generate(), nonce=stolen)
    assert "nonce" in await device_refusal(second, params)


async def test_a_tampered_signature_is_refused(wire: Wire) -> None:
    client = await wire()
    params = signed_params(client, DeviceIdentity.generate())
    signature = params["device"]["signature"]
    middle = len(signature) // 2
    swapped = "A" if signature[middle] != "A" else "B"
    params["device"]["signature"] = signature[:middle] + swapped + signature[middle + 1 :]
    assert await device_refusal(client, params) == "device signature is invalid"


async def test_a_signature_by_another_key_is_refused(wire: Wire) -> None:
    client = await wire()
    identity, impostor = DeviceIdentity.generate(), DeviceIdentity.generate()
    params = signed_params(client, impostor)
    params["device"]["id"] = identity.device_id
    params["device"]["publicKey"] = identity.public_key
    assert await device_refusal(client, params) == "device signature is invalid"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("scopes", [ADMIN]),
        ("caps", None),
        ("token", TOKEN),
        ("signedAt", 1),
        ("mode", "ui"),
    ],
)
async def test_a_field_changed_after_signing_breaks_the_signature(
    tmp_path: Path, field: str, value: Any
) -> None:
    settings = GatewaySettings(port=0)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        client = await WireClient.open(gw.url)
        try:
            params = signed_params(client, DeviceIdentity.generate(), token="signed-token")
            if field == "scopes":
                params["scopes"] = value
            elif field == "caps":
                # caps are not part of the v3 payload: changing them keeps the signature valid
                params["caps"] = ["tool-events"]
                assert (await client.call("connect", params))["ok"] is True
                return
            elif field == "token":
                params["auth"]["token"] = value
            elif field == "signedAt":
                params["device"]["signedAt"] = value
            else:
                params["client"]["mode"] = value
            assert await device_refusal(client, params) == "device signature is invalid"
        finally:
            await client.close()


async def test_a_padded_public_key_is_refused(wire: Wire) -> None:
    client = await wire()
    params = signed_params(client, DeviceIdentity.generate())
    params["device"]["publicKey"] += "="
    assert await device_refusal(client, params) == "device publicKey is not unpadded base64url"


@pytest.mark.parametrize("size", [16, 31, 33, 64])
async def test_a_public_key_of_the_wrong_length_is_refused(wire: Wire, size: int) -> None:
    client = await wire()
    raw = bytes(range(size))
    params = signed_params(client, DeviceIdentity.generate())
    params["device"]["publicKey"] = b64url(raw)
    params["device"]["id"] = device_id_for(raw)
    message = await device_refusal(client, params)
    assert message == "device publicKey must be a raw 32-byte Ed25519 key"


async def test_an_incomplete_device_block_is_refused(wire: Wire) -> None:
    client = await wire()
    params = signed_params(client, DeviceIdentity.generate())
    del params["device"]["signature"]
    frame = await client.call("connect", params)
    assert frame["error"]["message"] == "invalid connect params: signature is required"
    await asyncio.wait_for(client.closed, 5)
    assert client.ws.close_code == 1008
