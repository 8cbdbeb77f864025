"""The ``session/list`` cursor of the bridge: opaque to clients, versioned, canonical.

A cursor is the base64url (no padding) form of the compact JSON object::

    {"v":2,"c":"<gateway keyset cursor>"}            or
    {"v":2,"c":"<gateway keyset cursor>","cwd":"<absolute cwd filter>"}

``c`` is the ``nextCursor`` of the gateway's ``sessions.list``: signed by the store and bound
to the listing's filters, so each page is one keyset read that starts strictly after the last
row seen (docs/gateway-sessions.md). ``cwd`` repeats the filter the walk was started with,
so a cursor cannot be replayed under another filter. Version 1 is OpenClaw's offset cursor
(``{"v":1,"offset":N}``); clawline refuses it as unsupported.

Errors use the texts of OpenClaw's ``openclaw acp`` (docs/acp.md).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from acp import RequestError

from clawline.acp.rpc_errors import invalid_params

CURSOR_VERSION = 2
MAX_CURSOR_LENGTH = 8192

INVALID_CURSOR = "Invalid ACP session list cursor."
UNSUPPORTED_CURSOR = "Unsupported ACP session list cursor."
CWD_MISMATCH = "ACP session list cursor does not match the cwd filter."
RELATIVE_CWD = "ACP session/list requires an absolute cwd."

_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ListCursor:
    gateway_cursor: str
    cwd: str | None = None


def _invalid() -> RequestError:
    return invalid_params(INVALID_CURSOR)


def _payload(cursor: ListCursor) -> dict[str, object]:
    payload: dict[str, object] = {"v": CURSOR_VERSION, "c": cursor.gateway_cursor}
    if cursor.cwd is not None:
        payload["cwd"] = cursor.cwd
    return payload


def encode_cursor(cursor: ListCursor) -> str:
    raw = _COMPACT.encode(_payload(cursor)).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _raw_bytes(text: str) -> bytes:
    if not text or len(text) > MAX_CURSOR_LENGTH or not text.isascii():
        raise _invalid()
    if any(ch in text for ch in "=+/") or len(text) % 4 == 1:
        raise _invalid()
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise _invalid() from None
    # base64 with non-zero padding bits decodes too; only the canonical spelling is accepted.
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != text:
        raise _invalid()
    return raw


def decode_cursor(text: object, cwd: str | None) -> ListCursor:
    """The cursor ``text`` stands for, checked against the request's ``cwd`` filter."""
    if not isinstance(text, str):
        raise _invalid()
    raw = _raw_bytes(text)
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _invalid() from None
    if not isinstance(payload, dict) or "v" not in payload:
        raise _invalid()
    version = payload["v"]
    if type(version) is not int:
        raise _invalid()
    if version != CURSOR_VERSION:
        raise invalid_params(UNSUPPORTED_CURSOR)
    if not set(payload) <= {"v", "c", "cwd"} or "c" not in payload:
        raise _invalid()
    inner, bound = payload["c"], payload.get("cwd")
    if type(inner) is not str or not inner or (bound is not None and type(bound) is not str):
        raise _invalid()
    cursor = ListCursor(inner, bound)
    if _COMPACT.encode(_payload(cursor)).encode("utf-8") != raw:
        raise _invalid()
    if bound != cwd:
        raise invalid_params(CWD_MISMATCH)
    return cursor
