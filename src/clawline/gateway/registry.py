"""The method registry: gateway method name → handler, required scope and param schema.

Built-in methods and plugin methods register the same way::

    methods = MethodRegistry()

    @methods.method("sessions.list", scope=READ, schema=LIST_SCHEMA)
    async def sessions_list(call: Call) -> JSON: ...

A handler gets one :class:`Call`: the request (``params``, ``method``, ``request_id``), the
``connection`` it came on, and the ``gateway``, whose attributes are the parts a method may use
(``call.gateway.catalog``, ``.runs``, ``.tasks``, ``.store`` for reads, ``.workers`` for
blocking work, ``.clock``, ``.bus``, …; see :class:`~clawline.gateway.app.Gateway`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clawline.gateway.frames import AccessRefused
from clawline.gateway.params import Schema
from clawline.types import JSON

if TYPE_CHECKING:
    from clawline.gateway.app import Gateway
    from clawline.gateway.connection import Connection


class Call:
    """One request being handled: its params, the connection it came on, and the gateway
    (its parts, its event bus)."""

    __slots__ = ("connection", "gateway", "method", "params", "request_id")

    def __init__(
        self,
        *,
        request_id: str,
        method: str,
        params: dict[str, Any],
        connection: Connection,
        gateway: Gateway,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.connection = connection
        self.gateway = gateway

    async def ack(self, payload: JSON) -> None:
        """Send an intermediate ``res`` with this request's id (the ``agent`` method's first
        answer), after the events the request caused so far; the handler's return value is
        the final one."""
        await self.gateway.projection.caught_up()
        self.connection.send_response(self.request_id, payload)


Handler = Callable[[Call], Awaitable[JSON]]


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    handler: Handler
    scope: str | None
    schema: Schema | None


class MethodRegistry:
    def __init__(self) -> None:
        self._methods: dict[str, Method] = {}

    def add(
        self, name: str, handler: Handler, *, scope: str | None, schema: Schema | None = None
    ) -> None:
        if name in self._methods:
            raise ValueError(f"gateway method {name!r} is already registered")
        self._methods[name] = Method(name, handler, scope, schema)

    def method(
        self, name: str, *, scope: str | None, schema: Schema | None = None
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.add(name, handler, scope=scope, schema=schema)
            return handler

        return register

    def include(self, other: MethodRegistry) -> None:
        for method in other:
            self.add(method.name, method.handler, scope=method.scope, schema=method.schema)

    def get(self, name: str) -> Method:
        method = self._methods.get(name)
        if method is None:
            raise AccessRefused(f"unknown method: {name}")
        return method

    def __iter__(self) -> Iterator[Method]:
        return iter(self._methods.values())

    def names(self) -> list[str]:
        return list(self._methods)
