"""The device pairing record, its statuses, and the errors pairing raises.

One row per device identity (``device.id``, the SHA-256 of its Ed25519 public key):

- ``pending``: the device connected to a gateway with ``require_device`` and waits for an
  operator; it holds the digest of the one pairing code printed for its last request;
- ``paired``: approved, with the operator scopes granted (``granted_scopes``);
- ``revoked``: refused from now on (the key can never be paired again).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clawline.errors import InvalidInput, NotFound
from clawline.types import JSONObject

PENDING, PAIRED, REVOKED = "pending", "paired", "revoked"
PAIRING_STATUSES = (PENDING, PAIRED, REVOKED)


class InvalidPairingCode(InvalidInput):
    """A pairing code that is malformed, unknown, already used or expired."""


class PairingNotFound(NotFound):
    """No stored pairing matches the device id or prefix given."""


class DeviceRevoked(InvalidInput):
    """The device's pairing was revoked: it may not connect, nor be paired again."""


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    """Who a verified device says it is, from its ``connect`` request."""

    device_id: str
    public_key: str
    client_id: str
    client_mode: str
    platform: str
    display_name: str | None
    requested_scopes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DevicePairing:
    """One device's pairing state (times in epoch milliseconds)."""

    device_id: str
    public_key: str
    status: str
    client_id: str
    client_mode: str
    platform: str
    display_name: str | None
    requested_scopes: tuple[str, ...]
    """The operator scopes the device asked for in its last pairing request."""
    granted_scopes: tuple[str, ...]
    """What the approval granted (empty until paired; kept after a revocation)."""
    created_at: int
    requested_at: int
    updated_at: int
    approved_at: int | None = None
    revoked_at: int | None = None
    code_hash: str | None = field(default=None, repr=False)
    """Keyed digest of the pending request's pairing code; ``None`` once used or replaced."""
    code_expires_at: int | None = None

    def to_json(self) -> JSONObject:
        """The pairing as ``clawline devices list --format json`` shows it (never the code)."""
        return {
            "deviceId": self.device_id,
            "publicKey": self.public_key,
            "status": self.status,
            "clientId": self.client_id,
            "clientMode": self.client_mode,
            "platform": self.platform,
            "displayName": self.display_name,
            "requestedScopes": list(self.requested_scopes),
            "grantedScopes": list(self.granted_scopes),
            "createdAt": self.created_at,
            "requestedAt": self.requested_at,
            "updatedAt": self.updated_at,
            "approvedAt": self.approved_at,
            "revokedAt": self.revoked_at,
            "codeExpiresAt": self.code_expires_at,
        }
