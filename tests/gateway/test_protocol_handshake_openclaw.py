"""The connect of OpenClaw 2026.9.6's own clients (its Control UI first) over a real socket:
its full parameter set, the v2 device signature, and the extra operator scopes it asks for."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.device import DeviceIdentity, auth_metadata, v3_payload
from clawline.gateway.handshake import ConnectionInfo
from clawline.gateway.options import GatewaySettings
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.pairing import pair_device
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

Wire = Callable[..., Awaitable[WireClient]]

# What the Control UI of openclaw@2026.9.6 asks for by default, in its order.
UI_SCOPES = [
    "operator.admin",
    "operator.read",
    "operator.write",
    "operator.approvals",
    "operator.questions",
    "operator.pairing",
]
UI_CAPS = [
    "agent-kind",
    "approvals",
    "task-suggestions",
    "terminal-offset-seq",
    "terminal-session-metadata",
    "terminal-upload-path-style",
    "tool-events",
    "inline-widgets",
    "model-selection-policy",
    "ui-commands",
    "usage-refreshing",
]


def v2_text(
    identity: DeviceIdentity,
    *,
    client_id: str,
    mode: str,
    scopes: list[str],
    signed_at: int,
    token: str,
    nonce: str,
) -> str:
    # Written out here rather than with clawline's v2_payload, so the wire format is pinned.
    fields = [identity.device_id, client_id, mode, "operator", ",".join(scopes)]
    return "|".join(["v2", *fields, str(signed_at), token, nonce])


def control_ui_params(client: WireClient, identity: DeviceIdentity | None) -> dict[str, Any]:
    """A connect as the Control UI builds it (in a browser on Linux, signing v2)."""
    challenge = client.challenge["payload"]
    ui_client = {
        "id": "openclaw-control-ui",
        "version": "2026.9.6",
        "buildId": "a1b2c3d4e5f6",
        "platform": "Linux x86_64",
        "mode": "webchat",
        "instanceId": "3f9c1e0a-ui",
        "timeZone": "Europe/Berlin",
    }
    params: dict[str, Any] = {
        "minProtocol": 4,
        "maxProtocol": 4,
        "client": ui_client,
        "role": "operator",
        "scopes": list(UI_SCOPES),
        "caps": list(UI_CAPS),
        "auth": {"token": TOKEN, "password": TOKEN},
        "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0",
        "locale": "de-DE",
    }
    if identity is not None:
        text = v2_text(
            identity,
            client_id=ui_client["id"],
            mode=ui_client["mode"],
            scopes=UI_SCOPES,
            signed_at=challenge["ts"],
            token=TOKEN,
            nonce=challenge["nonce"],
        )
        params["device"] = {
            "id": identity.device_id,
            "publicKey": identity.public_key,
            "signature": identity.sign(text),
            "signedAt": challenge["ts"],
            "nonce": challenge["nonce"],
        }
    return params


def every_key_params(client: WireClient) -> dict[str, Any]:
    """Every key OpenClaw 2026.9.6's ConnectParamsSchema defines, each with a valid value."""
    params = control_ui_params(client, None)
    params["client"].update(
        displayName="Anna's browser", deviceFamily="Mac", modelIdentifier="MacBookPro18,3"
    )
    params["auth"].update(
        bootstrapToken="b",
        deviceToken="d",
        approvalRuntimeToken="a",
        agentRuntimeIdentityToken="i",
    )
    params.update(
        commands=["canvas.present"],
        computerUse={"version": 1, "anything": ["goes", None]},
        workerRuns={
            "bundleHash": "0123456789abcdef" * 4,
            "openclawVersion": "2026.9.6",
            "protocolFeatures": ["worker-heartbeat-v1", "worker-portal-v1"],
            "bundlePrewarm": 1,
        },
        permissions={"camera": False, "screen": True},
        pathEnv="/usr/local/bin:/usr/bin",
        modelCatalog={"agentId": "main", "sessionKey": "agent:main:main"},
    )
    return params


async def refusal(client: WireClient, params: dict[str, Any]) -> str:
    frame = await client.call("connect", params)
    assert frame["ok"] is False, frame
    assert frame["error"]["code"] == "INVALID_REQUEST"
    await asyncio.wait_for(client.closed, 5)
    assert client.ws.close_code == 1008
    return str(frame["error"]["message"])


def info_of(gw: RunningGateway, hello: dict[str, Any]) -> ConnectionInfo:
    info = gw.gateway.connections[hello["server"]["connId"]].info
    assert info is not None
    return info


def signed_with(gw: RunningGateway, hello: dict[str, Any]) -> str | None:
    return info_of(gw, hello).device_auth


# --- the full parameter set ------------------------------------------------------------------


async def test_the_control_ui_connect_succeeds(gw: RunningGateway, wire: Wire) -> None:
    identity = DeviceIdentity.generate()
    client = await wire()
    frame = await client.call("connect", control_ui_params(client, identity))
    assert frame["ok"] is True, frame
    hello = frame["payload"]
    assert hello["protocol"] == 4
    assert hello["auth"]["deviceId"] == identity.device_id
    assert signed_with(gw, hello) == "v2"
    info = info_of(gw, hello)
    assert info.client["buildId"] == "a1b2c3d4e5f6"
    assert info.client["timeZone"] == "Europe/Berlin"
    assert (await client.ok("health"))["ok"] is True


async def test_every_key_of_openclaws_schema_is_accepted(wire: Wire) -> None:
    client = await wire()
    frame = await client.call("connect", every_key_params(client))
    assert frame["ok"] is True, frame


async def test_the_other_model_catalog_form_is_accepted(wire: Wire) -> None:
    client = await wire()
    params = every_key_params(client)
    params["modelCatalog"] = {"agentId": "main", "shortId": "c-7", "slugHint": "fast"}
    assert (await client.call("connect", params))["ok"] is True


@pytest.mark.parametrize(
    ("where", "key"),
    [("top", "bogus"), ("client", "bogus"), ("auth", "bogus"), ("device", "bogus")],
)
async def test_unknown_keys_are_still_refused(wire: Wire, where: str, key: str) -> None:
    client = await wire()
    params = control_ui_params(client, DeviceIdentity.generate())
    (params if where == "top" else params[where])[key] = "x"
    assert await refusal(client, params) == f"invalid connect params: unknown key {key!r}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"client.buildId": "b" * 97}, "buildId must have at most 96 characters"),
        ({"client.buildId": ""}, "buildId must have at least 1 characters"),
        ({"client.timeZone": "Z" * 65}, "timeZone must have at most 64 characters"),
        ({"client.timeZone": 1}, "timeZone must be a string"),
        ({"client.version": ""}, "version must have at least 1 characters"),
        ({"scopes": ["operator.read", ""]}, "scopes[1] must have at least 1 characters"),
        ({"commands": [7]}, "commands[0] must be a string"),
        ({"permissions": {"camera": "yes"}}, "permissions['camera'] must be a boolean"),
        ({"permissions": {"": True}}, "permissions keys must not be empty"),
        ({"workerRuns": {"openclawVersion": "x"}}, "bundleHash is required"),
        ({"workerRuns.bundleHash": "A" * 64}, "bundleHash must be 64 lower-case hex digits"),
        (
            {"workerRuns.protocolFeatures": ["f", "f"]},
            "protocolFeatures must not repeat an item",
        ),
        ({"workerRuns.bundlePrewarm": 0}, "bundlePrewarm must be >= 1"),
        ({"workerRuns.extra": 1}, "unknown key 'extra'"),
        ({"modelCatalog": {"sessionKey": "s", "shortId": "c"}}, "unknown key 'sessionKey'"),
        ({"modelCatalog": {"slugHint": "fast"}}, "unknown key 'slugHint'"),
        ({"modelCatalog": {"agentId": ""}}, "agentId must have at least 1 characters"),
        ({"auth.approvalRuntimeToken": 5}, "approvalRuntimeToken must be a string"),
    ],
)
async def test_values_are_checked_as_openclaw_checks_them(
    wire: Wire, change: dict[str, Any], message: str
) -> None:
    client = await wire()
    params = every_key_params(client)
    for path, value in change.items():
        *parents, name = path.split(".")
        target = params
        for parent in parents:
            target = target[parent]
        target[name] = value
    assert await refusal(client, params) == f"invalid connect params: {message}"


# --- v2 and v3 device signatures -------------------------------------------------------------


async def test_a_tampered_v2_signature_is_refused_like_a_bad_v3(wire: Wire) -> None:
    messages = []
    for version in ("v2", "v3"):
        client = await wire()
        identity = DeviceIdentity.generate()
        params = control_ui_params(client, identity)
        if version == "v3":
            challenge = client.challenge["payload"]
            params["device"]["signature"] = identity.sign(
                v3_payload(
                    device_id=identity.device_id,
                    client_id="openclaw-control-ui",
                    client_mode="webchat",
                    role="operator",
                    scopes=UI_SCOPES,
                    signed_at=challenge["ts"],
                    token=TOKEN,
                    nonce=challenge["nonce"],
                    platform="Linux x86_64",
                    device_family=None,
                )
            )
        # signed over other scopes than sent: a valid signature, of something else
        params["scopes"] = [READ]
        messages.append(await refusal(client, params))
    assert messages == ["device authentication failed: device signature is invalid"] * 2


async def test_a_v2_signature_with_a_flipped_byte_is_refused(wire: Wire) -> None:
    client = await wire()
    params = control_ui_params(client, DeviceIdentity.generate())
    signature = params["device"]["signature"]
    flipped = "A" if signature[10] != "A" else "B"
    params["device"]["signature"] = signature[:10] + flipped + signature[11:]
    message = await refusal(client, params)
    assert message == "device authentication failed: device signature is invalid"


def v3_text(identity: DeviceIdentity, client: WireClient, platform: str, family: str) -> str:
    challenge = client.challenge["payload"]
    fields = [identity.device_id, "openclaw-control-ui", "webchat", "operator"]
    signed = [",".join(UI_SCOPES), str(challenge["ts"]), TOKEN, challenge["nonce"]]
    return "|".join(["v3", *fields, *signed, platform, family])


async def test_v3_is_tried_first_and_binds_the_platform(gw: RunningGateway, wire: Wire) -> None:
    identity = DeviceIdentity.generate()
    for platform_signed, ok in (("linux x86_64", True), ("linux", False)):
        client = await wire()
        params = control_ui_params(client, identity)
        # v3 as OpenClaw builds it: platform and family trimmed, only A-Z lower-cased
        params["client"]["platform"] = "\ufeff Linux x86_64 "
        params["client"]["deviceFamily"] = "İPAD"
        text = v3_text(identity, client, platform_signed, "İpad")
        params["device"]["signature"] = identity.sign(text)
        if ok:
            frame = await client.call("connect", params)
            assert frame["ok"] is True, frame
            assert signed_with(gw, frame["payload"]) == "v3"
        else:
            assert "device signature is invalid" in await refusal(client, params)


def test_platform_normalisation_matches_openclaws() -> None:
    assert auth_metadata(None) == ""
    assert auth_metadata("  \t") == ""
    assert auth_metadata("\ufeffMacIntel\u3000") == "macintel"
    assert auth_metadata("ÄNDROID") == "Ändroid"  # non-ASCII letters keep their case
    assert auth_metadata("\x1cLinux") == "\x1clinux"  # not whitespace to JavaScript's trim()


async def test_a_v2_signature_does_not_bind_the_platform(wire: Wire) -> None:
    client = await wire()
    params = control_ui_params(client, DeviceIdentity.generate())
    params["client"]["platform"] = "MacIntel"  # after signing: v2 has no platform field
    assert (await client.call("connect", params))["ok"] is True


@pytest.fixture
async def open_gateway(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    async with running_gateway(tmp_path, gateway_settings=GatewaySettings(port=0)) as running:
        yield running


@pytest.mark.parametrize(
    ("auth", "signed_token", "ok"),
    [
        ({"deviceToken": "dev-1"}, "dev-1", True),
        ({"bootstrapToken": "boot-1"}, "boot-1", True),
        ({"deviceToken": "dev-1", "bootstrapToken": "boot-1"}, "dev-1", True),
        ({"token": "", "deviceToken": "dev-1"}, "", True),  # ?? keeps an empty token
        ({"deviceToken": "dev-1"}, "", False),
    ],
)
async def test_the_signed_token_is_token_then_device_then_bootstrap_token(
    open_gateway: RunningGateway, auth: dict[str, str], signed_token: str, ok: bool
) -> None:
    client = await WireClient.open(open_gateway.url)
    try:
        identity = DeviceIdentity.generate()
        params = control_ui_params(client, identity)
        challenge = client.challenge["payload"]
        params["auth"] = auth
        params["device"]["signature"] = identity.sign(
            v2_text(
                identity,
                client_id="openclaw-control-ui",
                mode="webchat",
                scopes=UI_SCOPES,
                signed_at=challenge["ts"],
                token=signed_token,
                nonce=challenge["nonce"],
            )
        )
        frame = await client.call("connect", params)
        assert frame["ok"] is ok, frame
    finally:
        await client.close()


# --- the extra scopes ------------------------------------------------------------------------


async def test_the_ui_gets_the_scopes_it_asks_for(wire: Wire) -> None:
    client = await wire()
    frame = await client.call("connect", control_ui_params(client, DeviceIdentity.generate()))
    assert frame["payload"]["auth"]["scopes"] == sorted(UI_SCOPES)


async def test_the_extra_scopes_alone_allow_no_operator_method(wire: Wire) -> None:
    client = await wire()
    extra = ("operator.approvals", "operator.questions", "operator.pairing")
    frame = await client.connect(token=TOKEN, scopes=extra)
    assert frame["payload"]["auth"]["scopes"] == sorted(extra)
    denied = await client.call("events.replay", {"afterSeq": 0})
    assert denied["error"]["message"] == "missing scope: operator.read"
    assert (await client.ok("health"))["ok"] is True


async def test_a_pairing_caps_the_extra_scopes_like_any_other(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, require_device=True)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        identity = DeviceIdentity.generate()
        pair_device(gw.runtime.store, identity, (ADMIN, "operator.questions"))
        client = await WireClient.open(gw.url)
        try:
            frame = await client.call("connect", control_ui_params(client, identity))
            assert frame["ok"] is True, frame
            granted = frame["payload"]["auth"]["scopes"]
            assert granted == sorted([ADMIN, READ, WRITE, "operator.questions"])
        finally:
            await client.close()
