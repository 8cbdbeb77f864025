"""The channel adapter registry and the two channel hooks clawline runs itself.

Adapters are registered through the plugins' ``register_channels`` hook (which of them this
gateway starts is :mod:`clawline.channels.connections`). The channel side of
thread binding stays here: ``subagent_spawning`` runs the adapters' hooks (and any added with
:meth:`ChannelRegistry.add_subagent_spawning_hook`) in registration order, first answer wins;
``subagent_ended`` tells every adapter and every added listener, and a failing listener is
logged, never raised.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeAlias

from clawline.channels.base import (
    UNAVAILABLE,
    BindingCapabilities,
    ChannelAdapter,
    SpawningResult,
    SubagentEnded,
    SubagentSpawning,
)
from clawline.errors import Conflict, InvalidField

log = logging.getLogger("clawline.channels")

SpawningHook: TypeAlias = Callable[[SubagentSpawning], Awaitable[SpawningResult | None]]
EndedHook: TypeAlias = Callable[[SubagentEnded], object]


def normalize_channel(value: str) -> str:
    return value.strip().lower()


class ChannelRegistry:
    """Channel adapters by id (lower-case)."""

    def __init__(self, adapters: Iterable[ChannelAdapter] = ()) -> None:
        self._adapters: dict[str, ChannelAdapter] = {}
        self._spawning_hooks: list[SpawningHook] = []
        self._ended_hooks: list[EndedHook] = []
        for adapter in adapters:
            self.register(adapter)

    # --- adapters ----------------------------------------------------------------------------

    def register(self, adapter: ChannelAdapter, *, replace: bool = False) -> None:
        channel = normalize_channel(getattr(adapter, "id", "") or "")
        if not channel or channel != adapter.id:
            raise InvalidField(f"channel adapter id must be a lower-case name: {adapter.id!r}")
        if channel in self._adapters and not replace:
            raise Conflict(f"channel adapter already registered: {channel}")
        self._adapters[channel] = adapter

    def unregister(self, channel: str) -> ChannelAdapter | None:
        return self._adapters.pop(normalize_channel(channel), None)

    def get(self, channel: str) -> ChannelAdapter | None:
        return self._adapters.get(normalize_channel(channel))

    def ids(self) -> list[str]:
        return list(self._adapters)

    def capabilities(self, channel: str, account_id: str) -> BindingCapabilities:
        """``{adapterAvailable:false, bindSupported:false, placements:[]}`` without an adapter."""
        adapter = self.get(channel)
        return UNAVAILABLE if adapter is None else adapter.capabilities(account_id)

    def default_placement(self, channel: str) -> str:
        adapter = self.get(channel)
        return "current" if adapter is None else adapter.default_placement

    # --- subagent_spawning ---------------------------------------------------------------------

    def add_subagent_spawning_hook(self, hook: SpawningHook) -> None:
        self._spawning_hooks.append(hook)

    def _spawning(self) -> list[SpawningHook]:
        hooks: list[SpawningHook] = [
            adapter.subagent_spawning
            for adapter in self._adapters.values()
            if adapter.has_subagent_spawning_hook
        ]
        return hooks + self._spawning_hooks

    def has_subagent_spawning_hooks(self) -> bool:
        return bool(self._spawning())

    async def run_subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        """The first hook's answer that is not ``None``; a hook's exception propagates."""
        for hook in self._spawning():
            result = await hook(event)
            if result is not None:
                return result
        return None

    # --- subagent_ended ------------------------------------------------------------------------

    def add_subagent_ended_hook(self, hook: EndedHook) -> None:
        """``hook(event)``, a plain or a coroutine function (awaited)."""
        self._ended_hooks.append(hook)

    async def fire_subagent_ended(self, event: SubagentEnded) -> None:
        listeners: list[EndedHook] = [adapter.subagent_ended for adapter in self._adapters.values()]
        for listener in listeners + self._ended_hooks:
            try:
                outcome = listener(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:  # a listener's bug must not undo the unbinding
                log.exception("subagent_ended listener failed for %s", event.target_session_key)
