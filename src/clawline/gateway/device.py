"""Ed25519 device identities: the v3 and v2 signature payloads, verification, and signing.

``device.publicKey`` is the raw 32-byte Ed25519 public key in base64url without padding;
``device.id`` is the lower-case hex SHA-256 of those bytes; ``device.signature`` signs the UTF-8
bytes of one of OpenClaw's payloads, fields joined with ``|``::

    v3|<device.id>|<client.id>|<client.mode>|<role>|<scopes,joined>|<signedAt>|<token>|
    <nonce>|<client.platform, normalised>|<client.deviceFamily, normalised>
    v2|<device.id>|<client.id>|<client.mode>|<role>|<scopes,joined>|<signedAt>|<token>|<nonce>

The scopes are the connect's ``scopes`` as sent, joined with ``,``; an absent token is written
as the empty string. v2 (what OpenClaw's Control UI signs) lacks the platform and device family,
so a v2 signature does not bind them. A gateway tries v3 first, then v2 (OpenClaw's order).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from clawline.errors import InvalidInput


class DeviceAuthError(InvalidInput):
    """A device block that does not prove what it claims."""


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    # Strict: the standard decoder would silently skip characters outside the alphabet.
    if not isinstance(text, str) or not _B64URL.fullmatch(text):
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def device_id_for(public_key_raw: bytes) -> str:
    return hashlib.sha256(public_key_raw).hexdigest()


# ECMAScript's String.prototype.trim set (WhiteSpace and LineTerminator), which differs from
# str.strip()'s: U+FEFF is trimmed, U+001C..U+001F and U+0085 are not.
_JS_TRIM = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def auth_metadata(value: str | None) -> str:
    """A platform or device family as the v3 payload carries it: trimmed, ``A-Z`` lower-cased
    (only ASCII, as OpenClaw does), ``""`` for none."""
    return (value or "").strip(_JS_TRIM).translate(_ASCII_LOWER)


def v2_payload(
    *,
    device_id: str,
    client_id: str,
    client_mode: str,
    role: str,
    scopes: Sequence[str],
    signed_at: int,
    token: str | None,
    nonce: str,
) -> str:
    fields = [device_id, client_id, client_mode, role, ",".join(scopes), str(signed_at)]
    return "|".join(["v2", *fields, token or "", nonce])


def v3_payload(
    *,
    device_id: str,
    client_id: str,
    client_mode: str,
    role: str,
    scopes: Sequence[str],
    signed_at: int,
    token: str | None,
    nonce: str,
    platform: str | None,
    device_family: str | None,
) -> str:
    """The v2 payload's fields under ``v3``, then the platform and device family."""
    v2 = v2_payload(
        device_id=device_id,
        client_id=client_id,
        client_mode=client_mode,
        role=role,
        scopes=scopes,
        signed_at=signed_at,
        token=token,
        nonce=nonce,
    )
    return "|".join(
        ["v3", v2.removeprefix("v2|"), auth_metadata(platform), auth_metadata(device_family)]
    )


def verify_device(
    *,
    device_id: str,
    public_key: str,
    signature: str,
    nonce: str,
    expected_nonce: str,
    payloads: Sequence[tuple[str, str]],
) -> str:
    """Check a device block against the candidate ``(version, payload)`` pairs, in order;
    return the version whose payload the signature signs, or raise :class:`DeviceAuthError`
    naming what failed (one message for a bad signature, whichever versions were tried)."""
    try:
        raw = b64url_decode(public_key)
    except (ValueError, binascii.Error):
        raise DeviceAuthError("device publicKey is not unpadded base64url") from None
    if len(raw) != 32:
        raise DeviceAuthError("device publicKey must be a raw 32-byte Ed25519 key")
    if device_id != device_id_for(raw):
        raise DeviceAuthError("device id does not match its publicKey")
    if nonce != expected_nonce:
        raise DeviceAuthError("device nonce does not match the connect challenge")
    try:
        signature_raw = b64url_decode(signature)
    except (ValueError, binascii.Error):
        raise DeviceAuthError("device signature is not unpadded base64url") from None
    key = Ed25519PublicKey.from_public_bytes(raw)
    for version, payload in payloads:
        try:
            key.verify(signature_raw, payload.encode("utf-8"))
        except InvalidSignature:
            continue
        return version
    raise DeviceAuthError("device signature is invalid")


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """A client-side Ed25519 identity that signs connect payloads."""

    private_key: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> DeviceIdentity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: bytes) -> DeviceIdentity:
        key = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise DeviceAuthError("device key file does not hold an Ed25519 private key")
        return cls(key)

    def to_pem(self) -> bytes:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    @property
    def public_key_raw(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_key(self) -> str:
        return b64url(self.public_key_raw)

    @property
    def device_id(self) -> str:
        return device_id_for(self.public_key_raw)

    def sign(self, payload: str) -> str:
        return b64url(self.private_key.sign(payload.encode("utf-8")))
