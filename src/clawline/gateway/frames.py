"""Wire frames of the gateway protocol: ``req`` in; ``res`` and ``event`` out.

| kind    | shape                                                              |
|---------|--------------------------------------------------------------------|
| request | ``{type:"req", id, method, params?}``                              |
| success | ``{type:"res", id, ok:true, payload?}``                            |
| failure | ``{type:"res", id, ok:false, error:{code, message, details?, …}}`` |
| event   | ``{type:"event", event, payload?, seq?}``                          |

A frame that cannot be read gets a typed ``INVALID_REQUEST`` failure. When its ``id`` cannot be
found, the failure carries ``id: null``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import orjson

from clawline.errors import CATEGORY_CODES, ClawlineError
from clawline.types import JSON, JSONObject

MAX_PREAUTH_FRAME = 64 * 1024
MAX_PAYLOAD = 25 * 1024 * 1024
MAX_BUFFERED_BYTES = 50 * 1024 * 1024
TICK_INTERVAL_MS = 30_000
MAX_ID_LENGTH = 256
MAX_METHOD_LENGTH = 128


class ErrorCode(enum.StrEnum):
    NOT_LINKED = "NOT_LINKED"
    NOT_PAIRED = "NOT_PAIRED"
    AGENT_TIMEOUT = "AGENT_TIMEOUT"
    INVALID_REQUEST = "INVALID_REQUEST"
    APPROVAL_NOT_FOUND = "APPROVAL_NOT_FOUND"
    UNAVAILABLE = "UNAVAILABLE"
    CONFLICT = "CONFLICT"


class GatewayError(ClawlineError):
    """An error answered to a request with its protocol ``code``.

    ``payload`` rides on the failure frame next to ``error`` (the ``agent`` method's second
    answer carries ``{runId, status:"error", summary}`` this way)."""

    client_fault = True

    def __init__(
        self,
        message: str,
        code: ErrorCode = ErrorCode.INVALID_REQUEST,
        *,
        details: JSON = None,
        retryable: bool | None = None,
        payload: JSON = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.details = details
        self.retryable = retryable
        self.payload = payload

    @classmethod
    def answering(cls, error: ClawlineError) -> GatewayError:
        """How any other clawline error is answered: its category's code
        (:data:`~clawline.errors.CATEGORY_CODES`), and details naming the category and the class,
        so a client can tell a bad label from a missing session without reading the message."""
        category = error.category
        details = {"errorType": category.__name__, "errorClass": type(error).__name__}
        return cls(error.message, ErrorCode(CATEGORY_CODES[category]), details=details)


class AccessRefused(GatewayError):
    """The connection may not make this call: a scope it lacks, a method that is not there."""


class Unauthorized(AccessRefused):
    """The handshake's credentials are missing or wrong (``unauthorized: …``)."""


class FrameError(GatewayError):
    """A frame that is not a valid request. ``request_id`` is its id when one was readable;
    ``too_big``: it was refused for its size."""

    def __init__(
        self, message: str, request_id: str | None = None, *, too_big: bool = False
    ) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.too_big = too_big


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    method: str
    params: Any


def parse_request(data: str | bytes, *, limit: int) -> Request:
    """Decode one client frame; raise :class:`FrameError` when it is not a valid request."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > limit:
        raise FrameError(
            f"invalid frame: {size} bytes exceeds the limit of {limit} bytes", too_big=True
        )
    try:
        frame = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise FrameError("invalid frame: not valid JSON") from None
    if not isinstance(frame, dict):
        raise FrameError("invalid frame: expected a JSON object")
    raw_id = frame.get("id")
    request_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= MAX_ID_LENGTH else None
    if frame.get("type") != "req":
        raise FrameError('invalid frame: type must be "req"', request_id)
    if request_id is None:
        raise FrameError(
            f"invalid frame: id must be a non-empty string of at most {MAX_ID_LENGTH} characters"
        )
    method = frame.get("method")
    if not isinstance(method, str) or not method or len(method) > MAX_METHOD_LENGTH:
        raise FrameError("invalid frame: method must be a non-empty string", request_id)
    extra = set(frame) - {"type", "id", "method", "params"}
    if extra:
        raise FrameError(f"invalid frame: unknown field {sorted(extra)[0]!r}", request_id)
    return Request(id=request_id, method=method, params=frame.get("params"))


def encode_ok(request_id: str, payload: JSON = None) -> str:
    frame: JSONObject = {"type": "res", "id": request_id, "ok": True}
    if payload is not None:
        frame["payload"] = payload
    return orjson.dumps(frame).decode()


def encode_error(request_id: str | None, error: GatewayError, payload: JSON = None) -> str:
    """The failure frame of a request. Its ``details`` (an object) always carry ``errorType``,
    the error's category (:mod:`clawline.errors`; the one given, else its code's), and
    ``errorClass``, the class that refused (the one given, else the gateway error's own)."""
    body: JSONObject = {"code": str(error.code), "message": error.message}
    details = error.details
    if details is None:
        details = {}
    if isinstance(details, dict):
        details = {
            **details,
            "errorType": details.get("errorType", error.category.__name__),
            "errorClass": details.get("errorClass", type(error).__name__),
        }
    body["details"] = details
    if error.retryable is not None:
        body["retryable"] = error.retryable
    frame: JSONObject = {"type": "res", "id": request_id, "ok": False, "error": body}
    if payload is not None:
        frame["payload"] = payload
    return orjson.dumps(frame).decode()


def encode_event(name: str, payload: JSON = None, seq: int | None = None) -> str:
    frame: JSONObject = {"type": "event", "event": name}
    if payload is not None:
        frame["payload"] = payload
    if seq is not None:
        frame["seq"] = seq
    return orjson.dumps(frame).decode()
