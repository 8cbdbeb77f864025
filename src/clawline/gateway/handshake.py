"""The connect handshake: challenge, ``connect`` params, protocol, auth, device, scopes.

``connect.challenge`` → ``connect`` → ``hello-ok``. The connection's first request must be
``connect``; until it succeeds frames are limited to 64 KiB.

With ``require_device``, :func:`accept_connect` grants no scopes at all; :func:`admit_device`
then gives a verified device what its pairing allows (:mod:`clawline.pairing`): a paired device
its requested scopes capped by the grant, an unpaired one none (and a pairing code in the
gateway's log), a revoked one a ``NOT_PAIRED`` refusal.
"""

from __future__ import annotations

import hmac
import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from clawline.errors import ClawlineError, InvalidInput, StoreError, StoreUnavailable
from clawline.gateway.device import DeviceAuthError, v3_payload, verify_device
from clawline.gateway.frames import ErrorCode, GatewayError, Unauthorized
from clawline.gateway.options import GatewaySettings
from clawline.gateway.params import P, check
from clawline.pairing.registry import request_line
from clawline.pairing.scopes import OPERATOR_SCOPES
from clawline.records.pairing import DeviceClaim, DeviceRevoked

if TYPE_CHECKING:
    from clawline.pairing.registry import PairingRegistry
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.gateway")

SUPPORTED_PROTOCOLS = (3, 4)
CLIENT_MODES = ("cli", "ui", "backend", "node", "worker", "probe", "test", "webchat")

_CLIENT = {
    "id": P.string(required=True, min_len=1, max_len=128),
    "displayName": P.string(max_len=256),
    "version": P.string(required=True, max_len=128),
    "platform": P.string(required=True, max_len=128),
    "deviceFamily": P.string(max_len=128),
    "modelIdentifier": P.string(max_len=256),
    "mode": P.string(required=True, choices=CLIENT_MODES),
    "instanceId": P.string(max_len=256),
}
_AUTH = {
    "token": P.string(max_len=4096),
    "bootstrapToken": P.string(max_len=4096),
    "deviceToken": P.string(max_len=4096),
    "password": P.string(max_len=4096),
}
_DEVICE = {
    "id": P.string(required=True, max_len=128),
    "publicKey": P.string(required=True, max_len=128),
    "signature": P.string(required=True, max_len=256),
    "signedAt": P.integer(required=True, min=0),
    "nonce": P.string(required=True, max_len=128),
}
_CONNECT = {
    "minProtocol": P.integer(required=True, min=0),
    "maxProtocol": P.integer(required=True, min=0),
    "client": P.object(required=True),
    "role": P.string(max_len=64),
    "scopes": P.array(P.string(max_len=128), max_len=64),
    "caps": P.array(P.string(max_len=128), max_len=256),
    "commands": P.array(max_len=1024),
    "permissions": P.object(),
    "pathEnv": P.string(max_len=65536),
    "auth": P.object(),
    "device": P.object(),
    "locale": P.string(max_len=64),
    "userAgent": P.string(max_len=1024),
}


@dataclass(frozen=True, slots=True)
class Challenge:
    nonce: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass(frozen=True, slots=True)
class ConnectionInfo:
    """What a successful ``connect`` established."""

    protocol: int
    client: dict[str, Any]
    role: str
    scopes: frozenset[str]
    caps: tuple[str, ...]
    auth_method: str
    device_id: str | None
    device_public_key: str | None = None
    requested_scopes: tuple[str, ...] = ()
    """The ``scopes`` the client asked for (its grant may be less, see :func:`admit_device`)."""

    @property
    def client_id(self) -> str:
        return str(self.client["id"])

    @property
    def client_mode(self) -> str:
        return str(self.client["mode"])


def _negotiate(low: int, high: int) -> int:
    common = [v for v in SUPPORTED_PROTOCOLS if low <= v <= high]
    if not common:
        first, last = SUPPORTED_PROTOCOLS[0], SUPPORTED_PROTOCOLS[-1]
        raise GatewayError(
            f"protocol mismatch: this gateway speaks protocol {first}..{last}, "
            f"the client asked for {low}..{high}"
        )
    return max(common)


def accept_connect(
    raw_params: object, challenge: Challenge, settings: GatewaySettings
) -> ConnectionInfo:
    """Check ``connect`` params; raise :class:`GatewayError` for any refusal."""
    params = check("connect", raw_params, _CONNECT)
    protocol = _negotiate(params["minProtocol"], params["maxProtocol"])
    client = check("connect", params["client"], _CLIENT)
    auth = check("connect", params.get("auth") or {}, _AUTH)
    role = params.get("role") or "operator"
    if role != "operator":
        raise GatewayError(f'unsupported role: {role} (this gateway serves "operator" clients)')
    token = auth.get("token")
    auth_method = "none"
    if settings.auth == "token":
        if not token:
            raise Unauthorized("unauthorized: a gateway token is required (auth.token)")
        expected = (settings.token or "").encode()
        if not hmac.compare_digest(token.encode(), expected):
            raise Unauthorized("unauthorized: gateway token mismatch")
        auth_method = "token"
    requested = list(params.get("scopes") or [])
    device_id = public_key = None
    if params.get("device") is not None:
        device = check("connect", params["device"], _DEVICE)
        payload = v3_payload(
            device_id=device["id"],
            client_id=client["id"],
            client_mode=client["mode"],
            role=role,
            scopes=requested,
            signed_at=device["signedAt"],
            token=token,
            nonce=device["nonce"],
            platform=client.get("platform"),
            device_family=client.get("deviceFamily"),
        )
        try:
            verify_device(
                device_id=device["id"],
                public_key=device["publicKey"],
                signature=device["signature"],
                nonce=device["nonce"],
                expected_nonce=challenge.nonce,
                payload=payload,
            )
        except (DeviceAuthError, InvalidInput) as error:
            raise GatewayError(f"device authentication failed: {error}") from None
        device_id = device["id"]
        public_key = device["publicKey"]
    granted = frozenset(scope for scope in requested if scope in OPERATOR_SCOPES)
    if settings.require_device:
        granted = frozenset()  # only a pairing grants scopes (admit_device)
    return ConnectionInfo(
        protocol=protocol,
        client=client,
        role=role,
        scopes=granted,
        caps=tuple(params.get("caps") or ()),
        auth_method=auth_method,
        device_id=device_id,
        device_public_key=public_key,
        requested_scopes=tuple(requested),
    )


async def admit_device(
    info: ConnectionInfo,
    *,
    pairings: PairingRegistry,
    workers: StoreWorkers,
    settings: GatewaySettings,
) -> ConnectionInfo:
    """``info`` with the scopes the device's pairing allows (``require_device`` only).

    An unpaired device gets a pending request whose code is logged once, at WARNING, so it
    shows on ``clawline gateway run``'s output; a revoked one is refused with ``NOT_PAIRED``.
    """
    if not settings.require_device or info.device_id is None or info.device_public_key is None:
        return info
    claim = DeviceClaim(
        device_id=info.device_id,
        public_key=info.device_public_key,
        client_id=info.client_id,
        client_mode=info.client_mode,
        platform=str(info.client.get("platform") or ""),
        display_name=info.client.get("displayName"),
        requested_scopes=info.requested_scopes,
    )
    try:
        admission = await workers.run(pairings.admit, claim)
    except DeviceRevoked as error:
        raise GatewayError(error.message, ErrorCode.NOT_PAIRED) from None
    except (StoreError, StoreUnavailable):
        log.exception("device pairing lookup failed")
        raise GatewayError(
            "device pairing is unavailable", ErrorCode.UNAVAILABLE, retryable=True
        ) from None
    except ClawlineError as error:
        raise GatewayError(f"device pairing failed: {error.message}") from None
    if admission.code is not None:
        log.warning("%s", request_line(admission.pairing, admission.code))
    return replace(info, scopes=admission.scopes)
