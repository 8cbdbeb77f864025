"""What the registration hooks ``register_gateway_methods`` and ``register_tools`` receive, as
the plugin API describes it: :class:`MethodRegistrar` and :class:`ToolRegistrar`.

They are Protocols so that the plugin API names no adapter: the gateway's
:class:`clawline.gateway.registry.MethodRegistry` and the agents'
:class:`clawline.agents.tools.registry.ToolRegistry` satisfy them (a test checks both). A gateway
method handler is ``async (call) -> JSON`` where ``call`` is the gateway's
:class:`clawline.gateway.registry.Call` (its ``params``, ``connection``, ``request_id``,
``method`` and ``gateway``); a tool is a :class:`clawline.agents.tools.base.Tool`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from clawline.agents.tools.base import Tool

__all__ = ["MethodHandler", "MethodRegistrar", "ToolRegistrar"]

MethodHandler = Callable[[Any], Awaitable[Any]]
"""``async (call) -> JSON``: answers one request (``call`` is a gateway ``Call``)."""


@runtime_checkable
class MethodRegistrar(Protocol):
    """Where a plugin adds gateway methods."""

    def add(
        self, name: str, handler: MethodHandler, *, scope: str | None, schema: Any = None
    ) -> None:
        """Add method ``name``; ``scope`` is the operator scope a caller needs (``None``: any
        connected client), ``schema`` the params' schema (``clawline.gateway.params``), if
        any. A name already taken raises ``ValueError``."""
        ...

    def method(self, name: str, *, scope: str | None, schema: Any = None) -> Callable[[Any], Any]:
        """The decorator form of :meth:`add`."""
        ...

    def names(self) -> list[str]:
        """The registered method names, in registration order."""
        ...


@runtime_checkable
class ToolRegistrar(Protocol):
    """Where a plugin adds agent tools."""

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add ``tool`` under ``tool.spec.name``; a name already taken raises ``ValueError``
        unless ``replace``."""
        ...

    def names(self) -> list[str]:
        """The registered tool names, in registration order."""
        ...
