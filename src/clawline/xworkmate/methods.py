"""The plugin's gateway methods, registered in the upstream order.

Params are open objects (the XWorkmate bridge spreads extra fields into every request), so no
method declares a closed schema; each operation reads the fields it knows. A refusal is answered
as a request error ``{code, message}`` with code ``INVALID_REQUEST`` and the upstream plugin's
exact message; ``xworkmate.session.prepare`` answers ``CONFLICT`` when the message contains
"conflict". Store failures stay ``UNAVAILABLE``, and so does a call before the plugin started.

The handlers take the plugin host and settings from the started plugin when they are called
(:data:`~clawline.xworkmate.state.StateSource`): they are registered before it starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from clawline.errors import ClawlineError, StoreError
from clawline.plugins.host import PluginHost
from clawline.plugins.methods import (
    READ,
    WRITE,
    MethodCall,
    MethodError,
    MethodErrorCode,
    MethodHandler,
)
from clawline.plugins.registrars import MethodRegistrar
from clawline.types import JSON, JSONObject
from clawline.xworkmate import operations
from clawline.xworkmate.constants import METHOD_NAMES
from clawline.xworkmate.settings import XWorkmateSettings
from clawline.xworkmate.state import StateSource, XWorkmateNotStarted
from clawline.xworkmate.tasks_get import tasks_get

__all__ = ["register_methods"]


class Operation(Protocol):
    def __call__(
        self, params: Mapping[str, Any], *, host: PluginHost, config: XWorkmateSettings
    ) -> Awaitable[JSONObject]: ...


def _handler(operation: Operation, state: StateSource, *, conflicts: bool = False) -> MethodHandler:
    async def handle(call: MethodCall) -> JSON:
        try:
            started = state()
            return await operation(call.params, host=started.host, config=started.config)
        except (MethodError, StoreError):
            raise
        except XWorkmateNotStarted as error:
            raise MethodError(error.message, "UNAVAILABLE") from None
        except ClawlineError as error:
            code: MethodErrorCode = "INVALID_REQUEST"
            if conflicts and "conflict" in error.message:
                code = "CONFLICT"
            details = {"errorType": type(error).__name__}
            raise MethodError(error.message, code, details=details) from None
        except OSError as error:
            message = f"xworkmate artifact operation failed: {error.strerror or error}"
            raise MethodError(message) from None

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
