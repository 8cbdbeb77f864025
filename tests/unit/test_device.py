"""Ed25519 device identities: the v3 and v2 payloads, base64url, and what verification refuses."""

from __future__ import annotations

import base64
import hashlib
import uuid

import pytest

from clawline.gateway.device import (
    DeviceAuthError,
    DeviceIdentity,
    b64url,
    b64url_decode,
    device_id_for,
    v2_payload,
    v3_payload,
    verify_device,
)

NONCE = str(uuid.uuid4())


def payload_for(identity: DeviceIdentity, **overrides: object) -> str:
    fields: dict[str, object] = {
        "device_id": identity.device_id,
        "client_id": "cli",
        "client_mode": "cli",
        "role": "operator",
        "scopes": ["operator.read", "operator.write"],
        "signed_at": 1_796_007_731_117,
        "token": "tok",
        "nonce": NONCE,
        "platform": "Linux",
        "device_family": None,
    }
    fields.update(overrides)
    return v3_payload(**fields)  # type: ignore[arg-type]


def block(identity: DeviceIdentity, payload: str | None = None) -> dict[str, str]:
    return {
        "device_id": identity.device_id,
        "public_key": identity.public_key,
        "signature": identity.sign(payload or payload_for(identity)),
        "nonce": NONCE,
        "expected_nonce": NONCE,
        "payload": payload or payload_for(identity),
    }


def verify(fields: dict[str, str]) -> str:
    """``verify_device`` with the block's payload as the only (v3) candidate."""
    rest = dict(fields)
    payload = rest.pop("payload")
    return verify_device(**rest, payloads=(("v3", payload),))


def test_v3_payload_has_eleven_fields_in_order() -> None:
    payload = v3_payload(
        device_id="abc",
        client_id="cli",
        client_mode="ui",
        role="operator",
        scopes=["operator.write", "operator.read"],
        signed_at=1_796_007_731_117,
        token="secret",
        nonce="n-1",
        platform="Linux",
        device_family="Desktop",
    )
    assert payload == (
        "v3|abc|cli|ui|operator|operator.write,operator.read|1796007731117|secret|n-1|linux|desktop"
    )
    assert len(payload.split("|")) == 11


def test_v3_payload_with_absent_device_family_ends_with_a_bar() -> None:
    identity = DeviceIdentity.generate()
    payload = payload_for(identity, device_family=None)
    assert payload.endswith("|linux|")
    assert payload.split("|")[-1] == ""
    assert len(payload.split("|")) == 11


def test_v3_payload_with_absent_token_has_an_empty_field() -> None:
    payload = v3_payload(
        device_id="d",
        client_id="c",
        client_mode="cli",
        role="operator",
        scopes=[],
        signed_at=1,
        token=None,
        nonce="n",
        platform=None,
        device_family=None,
    )
    assert payload == "v3|d|c|cli|operator||1||n||"


def test_identity_key_and_id_shapes() -> None:
    identity = DeviceIdentity.generate()
    assert len(identity.public_key) == 43
    assert "=" not in identity.public_key
    assert len(identity.device_id) == 64
    assert identity.device_id == hashlib.sha256(identity.public_key_raw).hexdigest()
    assert identity.device_id == device_id_for(b64url_decode(identity.public_key))
    assert len(identity.sign("x")) == 86


def test_identity_round_trips_through_pem() -> None:
    identity = DeviceIdentity.generate()
    again = DeviceIdentity.from_pem(identity.to_pem())
    assert again.device_id == identity.device_id


def test_from_pem_refuses_a_non_ed25519_key() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with pytest.raises(DeviceAuthError, match="Ed25519"):
        DeviceIdentity.from_pem(pem)


def test_b64url_round_trip_without_padding() -> None:
    for size in range(40):
        data = bytes(range(size))
        text = b64url(data)
        assert "=" not in text
        assert b64url_decode(text) == data


@pytest.mark.parametrize(
    "text",
    [
        "AAAA=",  # padded
        "AB+/",  # the standard alphabet, not base64url
        "AB CD",  # whitespace
        "AB\nCD",
        "AB*D",  # not base64 at all
        "ABCDE",  # impossible length
        "é",
    ],
)
def test_b64url_decode_is_strict(text: str) -> None:
    with pytest.raises(ValueError):  # binascii.Error is a ValueError
        b64url_decode(text)


def test_a_valid_block_verifies() -> None:
    assert verify(block(DeviceIdentity.generate())) == "v3"


def test_signed_scopes_keep_the_order_sent() -> None:
    identity = DeviceIdentity.generate()
    signed = payload_for(identity, scopes=["operator.read", "operator.write"])
    reordered = payload_for(identity, scopes=["operator.write", "operator.read"])
    fields = block(identity, signed)
    fields["payload"] = reordered
    with pytest.raises(DeviceAuthError, match="signature is invalid"):
        verify(fields)


def test_wrong_device_id_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    fields["device_id"] = DeviceIdentity.generate().device_id
    with pytest.raises(DeviceAuthError, match="id does not match"):
        verify(fields)


def test_wrong_nonce_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    fields["expected_nonce"] = str(uuid.uuid4())
    with pytest.raises(DeviceAuthError, match="nonce"):
        verify(fields)


def test_tampered_signature_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    signature = fields["signature"]
    middle = len(signature) // 2
    swapped = "A" if signature[middle] != "A" else "B"
    fields["signature"] = signature[:middle] + swapped + signature[middle + 1 :]
    with pytest.raises(DeviceAuthError, match="signature is invalid"):
        verify(fields)


def test_signature_by_another_key_is_refused() -> None:
    identity, other = DeviceIdentity.generate(), DeviceIdentity.generate()
    fields = block(identity)
    fields["signature"] = other.sign(fields["payload"])
    with pytest.raises(DeviceAuthError, match="signature is invalid"):
        verify(fields)


def test_padded_public_key_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    fields["public_key"] += "="
    with pytest.raises(DeviceAuthError, match="base64url"):
        verify(fields)


def test_standard_base64_public_key_is_refused() -> None:
    identity = DeviceIdentity.generate()
    while "-" not in identity.public_key and "_" not in identity.public_key:
        identity = DeviceIdentity.generate()
    fields = block(identity)
    fields["public_key"] = base64.b64encode(identity.public_key_raw).decode().rstrip("=")
    with pytest.raises(DeviceAuthError, match="base64url"):
        verify(fields)


@pytest.mark.parametrize("size", [31, 33, 0])
def test_public_key_of_the_wrong_length_is_refused(size: int) -> None:
    raw = bytes(range(size))
    fields = block(DeviceIdentity.generate())
    fields["public_key"] = b64url(raw)
    fields["device_id"] = device_id_for(raw)
    with pytest.raises(DeviceAuthError, match="32-byte"):
        verify(fields)


def test_signature_that_is_not_base64url_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    fields["signature"] = fields["signature"][:-2] + "=="
    with pytest.raises(DeviceAuthError, match="signature is not unpadded base64url"):
        verify(fields)


def test_signature_of_the_wrong_length_is_refused() -> None:
    fields = block(DeviceIdentity.generate())
    fields["signature"] = fields["signature"][:40]
    with pytest.raises(DeviceAuthError, match="signature is invalid"):
        verify(fields)


def test_v2_payload_has_nine_fields_in_order() -> None:
    payload = v2_payload(
        device_id="abc",
        client_id="openclaw-control-ui",
        client_mode="webchat",
        role="operator",
        scopes=["operator.write", "operator.read"],
        signed_at=1_796_007_731_117,
        token=None,
        nonce="n-1",
    )
    assert payload == (
        "v2|abc|openclaw-control-ui|webchat|operator|operator.write,operator.read|1796007731117||n-1"
    )


def test_the_version_that_verifies_is_named_and_v3_is_tried_first() -> None:
    identity = DeviceIdentity.generate()
    v3 = payload_for(identity)
    v2 = "v2|" + v3.removeprefix("v3|").rsplit("|", 2)[0]
    fields = block(identity, v2)
    del fields["payload"]
    candidates = (("v3", v3), ("v2", v2))
    assert verify_device(**fields, payloads=candidates) == "v2"
    fields["signature"] = identity.sign(v3)
    assert verify_device(**fields, payloads=candidates) == "v3"
    fields["signature"] = identity.sign(v3 + "x")
    with pytest.raises(DeviceAuthError, match=r"^device signature is invalid$"):
        verify_device(**fields, payloads=candidates)
