"""The plugin's gateway methods, registered in the upstream order.

Params are open objects (the XWorkmate bridge spreads extra fields into every request), so no
method declares a closed schema; each operation reads the fields it knows. A refusal is answered
as a request error ``{code, message}`` with code ``INVALID_REQUEST`` and the upstream plugin's
exact message; ``xworkmate.session.prepare`` answers ``CONFLICT`` when the message contains
"conflict". Store failures stay ``UNAVAILABLE``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from clawline.errors import ClawlineError, StoreError
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.handshake import READ, WRITE
from clawline.gateway.registry import Call, Handler, MethodRegistry
from clawline.plugins.xworkmate import operations
from clawline.plugins.xworkmate.constants import METHOD_NAMES
from clawline.plugins.xworkmate.tasks_get import tasks_get
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.runtime import Runtime

__all__ = ["register_methods"]

Operation = Callable[["Runtime", Mapping[str, Any]], Awaitable[JSONObject]]


def _handler(operation: Operation, *, conflicts: bool = False) -> Handler:
    async def handle(call: Call) -> JSON:
        try:
            return await operation(call.services, call.params)
        except (GatewayError, StoreError):
            raise
        except ClawlineError as error:
            code = ErrorCode.INVALID_REQUEST
            if conflicts and "conflict" in error.message:
                code = ErrorCode.CONFLICT
            details = {"errorType": type(error).__name__}
            raise GatewayError(error.message, code, details=details) from None
        except OSError as error:
            message = f"xworkmate artifact operation failed: {error.strerror or error}"
            raise GatewayError(message) from None

    return handle


_METHODS: tuple[tuple[str, Operation, str, bool], ...] = (
    ("xworkmate.session.prepare", operations.prepare, WRITE, True),
    ("xworkmate.tasks.get", tasks_get, READ, False),
    ("xworkmate.artifacts.export", operations.export, READ, False),
    ("xworkmate.artifacts.collect-and-snapshot", operations.snapshot, WRITE, False),
    ("xworkmate.artifacts.list", operations.list_artifacts, READ, False),
    ("xworkmate.artifacts.read", operations.read, READ, False),
)
assert tuple(name for name, *_ in _METHODS) == METHOD_NAMES


def register_methods(methods: MethodRegistry) -> None:
    """Add the six ``xworkmate.*`` methods to ``methods``, in order."""
    for name, operation, scope, conflicts in _METHODS:
        methods.add(name, _handler(operation, conflicts=conflicts), scope=scope)
