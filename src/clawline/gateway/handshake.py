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
import re
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from clawline.errors import ClawlineError, InvalidInput, StoreError, StoreUnavailable
from clawline.gateway.device import DeviceAuthError, v2_payload, v3_payload, verify_device
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

# The schemas follow OpenClaw 2026.9.6's ConnectParamsSchema (closed objects; its NonEmptyString
# is min_len=1). Bounds OpenClaw leaves open are clawline's own, or the pre-auth frame limit.
_CLIENT = {
    "id": P.string(required=True, min_len=1, max_len=128),
    "displayName": P.string(min_len=1, max_len=256),
    "version": P.string(required=True, min_len=1, max_len=128),
    "buildId": P.string(min_len=1, max_len=96),
    "platform": P.string(required=True, min_len=1, max_len=128),
    "deviceFamily": P.string(min_len=1, max_len=128),
    "modelIdentifier": P.string(min_len=1, max_len=256),
    "timeZone": P.string(min_len=1, max_len=64),
    "mode": P.string(required=True, choices=CLIENT_MODES),
    "instanceId": P.string(min_len=1, max_len=256),
}
_AUTH = {
    "token": P.string(max_len=4096),
    "bootstrapToken": P.string(max_len=4096),
    "deviceToken": P.string(max_len=4096),
    "password": P.string(max_len=4096),
    "approvalRuntimeToken": P.string(max_len=4096),
    "agentRuntimeIdentityToken": P.string(max_len=4096),
}
_DEVICE = {
    "id": P.string(required=True, min_len=1, max_len=128),
    "publicKey": P.string(required=True, min_len=1, max_len=128),
    "signature": P.string(required=True, min_len=1, max_len=256),
    "signedAt": P.integer(required=True, min=0),
    "nonce": P.string(required=True, min_len=1, max_len=128),
}
_MAX_SAFE_INTEGER = 2**53 - 1
_WORKER_RUNS = {
    "bundleHash": P.string(required=True, min_len=64, max_len=64),
    "openclawVersion": P.string(required=True, min_len=1, max_len=128),
    "protocolFeatures": P.array(P.string(min_len=1, max_len=128), required=True, max_len=64),
    "bundlePrewarm": P.integer(min=1, max=_MAX_SAFE_INTEGER),
}
_BUNDLE_HASH = re.compile(r"[a-f0-9]{64}")
# modelCatalog is one of two closed objects: by session, or by a catalog's shortId.
_CATALOG_BY_SESSION = {"agentId": P.string(min_len=1), "sessionKey": P.string(min_len=1)}
_CATALOG_BY_SHORT_ID = {
    "agentId": P.string(min_len=1),
    "shortId": P.string(required=True, min_len=1),
    "slugHint": P.string(min_len=1),
}
_CONNECT = {
    "minProtocol": P.integer(required=True, min=0),
    "maxProtocol": P.integer(required=True, min=0),
    "client": P.object(required=True),
    "role": P.string(min_len=1, max_len=64),
    "scopes": P.array(P.string(min_len=1, max_len=128), max_len=64),
    "caps": P.array(P.string(min_len=1, max_len=128), max_len=256),
    "commands": P.array(P.string(min_len=1, max_len=1024), max_len=1024),
    "computerUse": P.anything(),
    "workerRuns": P.object(),
    "permissions": P.object(),
    "pathEnv": P.string(max_len=65536),
    "modelCatalog": P.object(),
    "auth": P.object(),
    "device": P.object(),
    "locale": P.string(max_len=64),
    "userAgent": P.string(max_len=1024),
}


def _invalid(message: str) -> GatewayError:
    return GatewayError(f"invalid connect params: {message}")


def _check_extras(params: dict[str, Any]) -> None:
    """The parts of the schema :func:`check` cannot say: a record, a union, a pattern."""
    permissions = params.get("permissions")
    if permissions is not None:
        for name, value in permissions.items():
            if not name:
                raise _invalid("permissions keys must not be empty")
            if not isinstance(value, bool):
                raise _invalid(f"permissions[{name[:64]!r}] must be a boolean")
    worker_runs = params.get("workerRuns")
    if worker_runs is not None:
        check("connect", worker_runs, _WORKER_RUNS)
        if not _BUNDLE_HASH.fullmatch(worker_runs["bundleHash"]):
            raise _invalid("bundleHash must be 64 lower-case hex digits")
        features = worker_runs["protocolFeatures"]
        if len(set(features)) != len(features):
            raise _invalid("protocolFeatures must not repeat an item")
    catalog = params.get("modelCatalog")
    if catalog is not None:
        by_short_id = "shortId" in catalog
        check("connect", catalog, _CATALOG_BY_SHORT_ID if by_short_id else _CATALOG_BY_SESSION)


def signature_token(auth: dict[str, Any]) -> str | None:
    """The token a device signature covers: OpenClaw's ``token ?? deviceToken ??
    bootstrapToken`` (an empty ``token`` is still the token)."""
    for name in ("token", "deviceToken", "bootstrapToken"):
        if auth.get(name) is not None:
            return str(auth[name])
    return None


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
    device_auth: str | None = None
    """Which payload the device signed: ``"v3"`` or ``"v2"`` (``None``: no device)."""
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
    _check_extras(params)
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
    device_id = public_key = device_auth = None
    if params.get("device") is not None:
        device = check("connect", params["device"], _DEVICE)
        token_signed = signature_token(auth)
        signed = {
            "device_id": device["id"],
            "client_id": client["id"],
            "client_mode": client["mode"],
            "role": role,
            "scopes": requested,
            "signed_at": device["signedAt"],
            "token": token_signed,
            "nonce": device["nonce"],
        }
        v3 = v3_payload(
            **signed, platform=client.get("platform"), device_family=client.get("deviceFamily")
        )
        v2 = v2_payload(**signed)
        try:
            device_auth = verify_device(
                device_id=device["id"],
                public_key=device["publicKey"],
                signature=device["signature"],
                nonce=device["nonce"],
                expected_nonce=challenge.nonce,
                payloads=(("v3", v3), ("v2", v2)),
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
        device_auth=device_auth,
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
