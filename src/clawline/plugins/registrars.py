"""What the registration hooks receive, as the plugin API describes them:
:class:`MethodRegistrar` (``register_gateway_methods``), :class:`ToolRegistrar`
(``register_tools``), :class:`ChannelRegistrar` (``register_channels``) and
:class:`ProviderRegistrar` (``register_providers``).

They are Protocols, each made of the methods a plugin calls on it, so that the plugin API names
no part above it: the gateway's ``MethodRegistry``, the agents' ``ToolRegistry`` and
``ProviderRegistry`` and the channels' ``ChannelRegistry`` satisfy them (a test checks all
four). What is registered is described by its shape: a gateway method handler is a
:data:`~clawline.plugins.methods.MethodHandler`; a tool a :class:`PluginTool` (an agents
``Tool``); a provider a :class:`PluginProvider` (an agents ``Provider``); a channel adapter a
``clawline.channels.base.ChannelAdapter`` (a class the adapter subclasses, so typed ``Any``
here).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from clawline.plugins.methods import MethodHandler


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


class PluginTool(Protocol):
    """An agent tool (``clawline.agents.tools.base.Tool``): ``spec``, its ``ToolSpec`` (``name``,
    ``description``, ``parameters``), and ``async invoke(ctx, args) -> ToolResult`` with a
    ``ToolContext`` and the call's JSON arguments."""

    spec: Any

    async def invoke(self, ctx: Any, args: Mapping[str, Any]) -> Any: ...


@runtime_checkable
class ToolRegistrar(Protocol):
    """Where a plugin adds agent tools."""

    def register(self, tool: PluginTool, *, replace: bool = False) -> None:
        """Add ``tool`` under ``tool.spec.name``; a name already taken raises ``ValueError``
        unless ``replace``."""
        ...

    def names(self) -> list[str]:
        """The registered tool names, in registration order."""
        ...


@runtime_checkable
class ChannelRegistrar(Protocol):
    """Where a plugin adds channel adapters (``clawline.channels.base.ChannelAdapter``)."""

    def register(self, adapter: Any, *, replace: bool = False) -> None:
        """Add ``adapter`` under its ``id`` (a lower-case name); an invalid id raises
        ``InvalidField``, one already taken ``Conflict`` unless ``replace``."""
        ...

    def ids(self) -> list[str]:
        """The registered channel ids, in registration order."""
        ...

    def add_subagent_spawning_hook(self, hook: Callable[[Any], Awaitable[Any]]) -> None:
        """Also ask ``async hook(event) -> SpawningResult | None`` (``event`` a
        ``SubagentSpawning``) when a thread-bound spawn is prepared, after the adapters."""
        ...

    def add_subagent_ended_hook(self, hook: Callable[[Any], object]) -> None:
        """Also tell ``hook(event)`` (plain or coroutine; ``event`` a ``SubagentEnded``) when a
        session's bindings ended."""
        ...


class PluginProvider(Protocol):
    """A model provider (``clawline.agents.providers.base.Provider``): ``stream(*, model,
    system, messages, tools)`` yields the model's stream items for ``ModelMessage`` messages and
    ``ToolSpec`` tools."""

    def stream(
        self, *, model: str, system: str, messages: Sequence[Any], tools: Sequence[Any]
    ) -> AsyncIterator[Any]: ...


@runtime_checkable
class ProviderRegistrar(Protocol):
    """Where a plugin adds model providers."""

    def register(self, name: str, provider: PluginProvider) -> None:
        """Serve model references ``"<name>/<model>"`` (and ``"<name>"``) with ``provider``."""
        ...

    def register_api(self, api: str, factory: Callable[[Any, Mapping[str, str]], Any]) -> None:
        """Make the providers of the ``[models.providers.<n>]`` tables with ``api = "<api>"``
        with ``factory(settings, environ) -> provider`` (``settings`` a ``ProviderSettings``),
        on first use."""
        ...
