"""JSON-RPC errors the bridge answers with.

Every refusal carries its text twice: as the error ``message`` and as ``data.details``, where
OpenClaw's bridge puts it (it answers ``-32603 Internal error`` with the text in
``data.details``; clawline uses the code that says what went wrong).
"""

from __future__ import annotations

from typing import Any

from acp import RequestError

from clawline.client.client_errors import ClientError, GatewayRequestError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002


def _error(code: int, text: str, extra: dict[str, Any] | None = None) -> RequestError:
    data: dict[str, Any] = {"details": text}
    if extra:
        data.update(extra)
    return RequestError(code, text, data)


def invalid_params(text: str) -> RequestError:
    return _error(INVALID_PARAMS, text)


def internal_error(text: str) -> RequestError:
    return _error(INTERNAL_ERROR, text)


def not_found(text: str) -> RequestError:
    return _error(RESOURCE_NOT_FOUND, text)


def session_not_found(session_id: str) -> RequestError:
    """An ACP ``sessionId`` this bridge does not know (``-32002``; acpx then falls back to
    ``session/new``, the TypeScript SDK treats it as success on ``session/close``)."""
    return _error(RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"uri": session_id})


def from_gateway(error: ClientError) -> RequestError:
    """A gateway refusal (``INVALID_REQUEST``) is the caller's fault: ``-32602``; anything else
    (unavailable, timeout, lost connection) is ours: ``-32603``."""
    if isinstance(error, GatewayRequestError) and error.code == "INVALID_REQUEST":
        return invalid_params(error.message)
    return internal_error(f"gateway: {error.message}")
