"""The plugin's gateway methods, registered in the upstream order.

Params are open objects (the XWorkmate bridge spreads extra fields into every request), so no
method declares a closed schema; each operation reads the fields it knows. A refusal is a
clawline error with the upstream plugin's exact message, answered by the gateway from its
category (``clawline.errors.CATEGORY_CODES``): a bad request ``INVALID_REQUEST``, a session
mapping that points elsewhere (``xworkmate.session.prepare``) ``CONFLICT``, a store failure or a
call before the plugin started ``UNAVAILABLE``; ``details`` name the category and the class.

The handlers take the plugin host and settings from the started plugin when they are called
(:data:`~clawline.xworkmate.state.StateSource`): they are registered before it starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from clawline.config import XWorkmateSettings
from clawline.pairing.scopes import READ, WRITE
from clawline.plugins.host import PluginHost
from clawline.plugins.methods import MethodCall, MethodError, MethodHandler
from clawline.plugins.registrars import MethodRegistrar
from clawline.types import JSON, JSONObject
from clawline.xworkmate import operations
from clawline.xworkmate.constants import METHOD_NAMES
from clawline.xworkmate.state import StateSource
from clawline.xworkmate.tasks_get import tasks_get


class Operation(Protocol):
    def __call__(
        self, params: Mapping[str, Any], *, host: PluginHost, config: XWorkmateSettings
    ) -> Awaitable[JSONObject]: ...


def _handler(operation: Operation, state: StateSource) -> MethodHandler:
    async def handle(call: MethodCall) -> JSON:
        try:
            started = state()
            return await operation(call.params, host=started.host, config=started.config)
        except OSError as error:
            message = f"xworkmate artifact operation failed: {error.strerror or error}"
            raise MethodError(message) from None

    return handle


_METHODS: tuple[tuple[str, Operation, str], ...] = (
    ("xworkmate.session.prepare", operations.prepare, WRITE),
    ("xworkmate.tasks.get", tasks_get, READ),
    ("xworkmate.artifacts.export", operations.export, READ),
    ("xworkmate.artifacts.collect-and-snapshot", operations.snapshot, WRITE),
    ("xworkmate.artifacts.list", operations.list_artifacts, READ),
    ("xworkmate.artifacts.read", operations.read, READ),
)
assert tuple(name for name, *_ in _METHODS) == METHOD_NAMES


def register_methods(methods: MethodRegistrar, state: StateSource) -> None:
    """Add the six ``xworkmate.*`` methods to ``methods``, in order; they work on the state
    ``state()`` gives when they are called."""
    for name, operation, scope in _METHODS:
        methods.add(name, _handler(operation, state), scope=scope)
