"""The plugin's gateway methods, registered in the upstream order.

Params are open objects (the XWorkmate bridge spreads extra fields into every request), so no
method declares a closed schema; each operation reads the fields it knows. A refusal is answered
as a request error ``{code, message}`` with code ``INVALID_REQUEST`` and the upstream plugin's
exact message; ``xworkmate.session.prepare`` answers ``CONFLICT`` when the message contains
"conflict". Store failures stay ``UNAVAILABLE``, and so does a call before the plugin started.

The handlers take the plugin host and settings from the started plugin when they are called
(:data:`~clawline.plugins.xworkmate.state.StateSource`): they are registered before it starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from clawline.errors import ClawlineError, StoreError
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.handshake import READ, WRITE
from clawline.gateway.registry import Call, Handler
from clawline.plugins.host import PluginHost
from clawline.plugins.registrars import MethodRegistrar
from clawline.plugins.xworkmate import operations
from clawline.plugins.xworkmate.constants import METHOD_NAMES
from clawline.plugins.xworkmate.settings import XWorkmateSettings
from clawline.plugins.xworkmate.state import StateSource, XWorkmateNotStarted
from clawline.plugins.xworkmate.tasks_get import tasks_get
from clawline.types import JSON, JSONObject

__all__ = ["register_methods"]


class Operation(Protocol):
    def __call__(
        self, params: Mapping[str, Any], *, host: PluginHost, config: XWorkmateSettings
    ) -> Awaitable[JSONObject]: ...


def _handler(operation: Operation, state: StateSource, *, conflicts: bool = False) -> Handler:
    async def handle(call: Call) -> JSON:
        try:
            started = state()
            return await operation(call.params, host=started.host, config=started.config)
        except (GatewayError, StoreError):
            raise
        except XWorkmateNotStarted as error:
            raise GatewayError(error.message, ErrorCode.UNAVAILABLE) from None
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


def register_methods(methods: MethodRegistrar, state: StateSource) -> None:
    """Add the six ``xworkmate.*`` methods to ``methods``, in order; they work on the state
    ``state()`` gives when they are called."""
    for name, operation, scope, conflicts in _METHODS:
        methods.add(name, _handler(operation, state, conflicts=conflicts), scope=scope)
