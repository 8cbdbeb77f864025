"""The client's exception tree.

Every error :class:`~clawline.client.GatewayClient` raises on purpose is a
:class:`ClientError` (itself a :class:`~clawline.errors.ClawlineError`, so the command line
reports it as one ``error:`` line). Each carries a ``code``: the gateway's protocol error code
when the gateway answered, else one of the client's own codes below::

    ClientError ........................ code
    ├── ConnectError ................... the gateway refused the handshake (its code, e.g.
    │                                    INVALID_REQUEST) or could not be reached (UNAVAILABLE)
    ├── GatewayRequestError ............ a request was answered ``ok:false`` (the gateway's code)
    │   └── EventsNotRetainedError ..... a replay asked for events the gateway no longer keeps
    ├── ConnectionLost ................. the connection closed before the answer (UNAVAILABLE)
    └── Timeout ........................ no answer in time (TIMEOUT); also a ``TimeoutError``
"""

from __future__ import annotations

from typing import Any

from clawline.errors import ClawlineError
from clawline.types import JSON

CODE_UNAVAILABLE = "UNAVAILABLE"
CODE_TIMEOUT = "TIMEOUT"


class ClientError(ClawlineError):
    """Base of the client's errors. ``str(error)`` is the message alone."""

    def __init__(self, message: str, code: str = CODE_UNAVAILABLE) -> None:
        super().__init__(message)
        self.code = code


class ConnectError(ClientError):
    """The connection could not be established: unreachable, not a gateway, or the handshake
    was refused (then ``code`` and the message are the gateway's)."""


class GatewayRequestError(ClientError):
    """The gateway answered a request with ``ok:false``.

    ``details`` is the error's ``details`` object; ``payload`` is the frame's ``payload`` when
    it carried one (the final frame of a failed ``agent`` run does).
    """

    def __init__(
        self,
        code: str,
        message: str,
        details: JSON = None,
        payload: JSON = None,
        *,
        method: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message, code)
        self.details = details
        self.payload = payload
        self.method = method
        self.retryable = retryable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class EventsNotRetainedError(GatewayRequestError):
    """The events after the requested ``seq`` are gone (or the gateway restarted): the caller
    must list again instead of replaying. ``details`` holds the gateway's ``bootId``,
    ``lastSeq`` and ``oldestSeq``."""


class ConnectionLost(ClientError):
    """The connection closed while a request waited, or the client is not connected."""


class Timeout(ClientError, TimeoutError):
    """No answer within the timeout. The request may still complete on the gateway."""

    def __init__(self, message: str) -> None:
        super().__init__(message, CODE_TIMEOUT)


def error_from_frame(method: str, frame: dict[str, Any]) -> GatewayRequestError:
    """The error an ``ok:false`` response frame stands for. A refusal whose details name the
    gateway's stream position (``lastSeq``, ``oldestSeq``) is a replay that came too late."""
    body = frame.get("error")
    body = body if isinstance(body, dict) else {}
    details = body.get("details")
    retryable = body.get("retryable")
    kind = GatewayRequestError
    if isinstance(details, dict) and "lastSeq" in details and "oldestSeq" in details:
        kind = EventsNotRetainedError
    return kind(
        str(body.get("code") or CODE_UNAVAILABLE),
        str(body.get("message") or "request failed"),
        details,
        frame.get("payload"),
        method=method,
        retryable=retryable if isinstance(retryable, bool) else None,
    )
