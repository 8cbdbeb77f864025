"""One-time pairing codes: six characters of Crockford's base32, shown as ``7QX-4KD``.

30 random bits from :mod:`secrets`. The alphabet has no I, L, O or U, and reading a code back
forgives case, a missing dash, spaces, and O/I/L typed for 0/1/1. The store keeps only
:func:`code_digest`, an HMAC keyed with the store's secret, so the table and its backups do not
hold a usable code.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from clawline.records.pairing import InvalidPairingCode

CODE_LENGTH = 6
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_TYPOS = str.maketrans({"O": "0", "I": "1", "L": "1"})
_DIGEST_CONTEXT = b"clawline device pairing code\x00"


def new_code() -> str:
    """A fresh random code in display form (``XXX-XXX``)."""
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:3]}-{raw[3:]}"


def normalize_code(text: str) -> str:
    """The six code characters of ``text``; :class:`InvalidPairingCode` if it is not a code."""
    compact = "".join(text.split()).replace("-", "").upper().translate(_TYPOS)
    if len(compact) != CODE_LENGTH or any(char not in _ALPHABET for char in compact):
        raise InvalidPairingCode(
            f"not a pairing code: {text.strip()[:32]!r} (expected 6 letters and digits, "
            "like 7QX-4KD, as the gateway printed it)"
        )
    return compact


def code_digest(secret: bytes, code: str) -> str:
    """The stored form of a code (``code`` as :func:`normalize_code` returns it)."""
    return hmac.new(secret, _DIGEST_CONTEXT + code.encode("ascii"), hashlib.sha256).hexdigest()
