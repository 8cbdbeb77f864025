"""Opaque keyset cursors: versioned, signed, and bound to the query they page.

A cursor is the base64url (no padding) form of a compact JSON object::

    {"v":2,"u":<updatedAt>,"k":"<key>","q":"<query fingerprint>","s":"<signature>"}

``s`` is a truncated HMAC-SHA256 over the other fields with the store's secret, so a cursor that
was edited, or that comes from another store, is refused; ``q`` ties it to one set of filters.
Version 1 is OpenClaw's offset cursor (``{"v":1,"offset":N}``), which clawline does not accept.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from clawline.errors import InvalidCursor
from clawline.records.session import SessionEntry


@dataclass(frozen=True, slots=True)
class Position:
    """A place in the listing order: the last row of a page."""

    updated_at: int
    key: str

    @classmethod
    def of(cls, entry: SessionEntry) -> Position:
        return cls(entry.updated_at, entry.key)


CURSOR_VERSION = 2
MAX_CURSOR_LENGTH = 2048


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not text or any(ch in text for ch in "=+/") or not text.isascii():
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# One encoder for every cursor: json.dumps builds a new one whenever it is given options.
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _compact(payload: dict[str, object]) -> str:
    return _COMPACT_JSON.encode(payload)


class CursorCodec:
    """Encodes and checks cursors with one store's secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, updated_at: int, key: str, fingerprint: str) -> str:
        message = _compact({"v": CURSOR_VERSION, "u": updated_at, "k": key, "q": fingerprint})
        digest = hmac.new(self._secret, message.encode(), hashlib.sha256).digest()
        return _b64encode(digest[:16])

    def encode(self, position: Position, fingerprint: str) -> str:
        payload = {
            "v": CURSOR_VERSION,
            "u": position.updated_at,
            "k": position.key,
            "q": fingerprint,
            "s": self._sign(position.updated_at, position.key, fingerprint),
        }
        return _b64encode(_compact(payload).encode())

    def decode(self, cursor: object, fingerprint: str) -> Position:
        """The position a cursor stands for, or :class:`InvalidCursor` saying why not."""
        if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_LENGTH:
            raise InvalidCursor("invalid cursor: malformed")
        try:
            raw = _b64decode(cursor)
            payload = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, binascii.Error, RecursionError):
            raise InvalidCursor("invalid cursor: malformed") from None
        if not isinstance(payload, dict) or "v" not in payload:
            raise InvalidCursor("invalid cursor: malformed")
        if payload["v"] != CURSOR_VERSION or isinstance(payload["v"], bool):
            raise InvalidCursor("invalid cursor: unsupported version")
        if set(payload) != {"v", "u", "k", "q", "s"}:
            raise InvalidCursor("invalid cursor: malformed")
        updated_at, key, query, signature = payload["u"], payload["k"], payload["q"], payload["s"]
        if (
            isinstance(updated_at, bool)
            or not isinstance(updated_at, int)
            or not isinstance(key, str)
            or not isinstance(query, str)
            or not isinstance(signature, str)
        ):
            raise InvalidCursor("invalid cursor: malformed")
        canonical = {"v": CURSOR_VERSION, "u": updated_at, "k": key, "q": query, "s": signature}
        try:
            if _b64encode(raw) != cursor or _compact(canonical).encode() != raw:
                raise InvalidCursor("invalid cursor: malformed")
        except UnicodeEncodeError:
            raise InvalidCursor("invalid cursor: malformed") from None
        expected = self._sign(updated_at, key, query)
        if not hmac.compare_digest(expected, signature):
            raise InvalidCursor(
                "invalid cursor: signature mismatch (tampered with, or from another store)"
            )
        if query != fingerprint:
            raise InvalidCursor("invalid cursor: it belongs to a different query")
        return Position(updated_at, key)
