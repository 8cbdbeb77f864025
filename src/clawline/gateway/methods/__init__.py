"""The gateway's built-in methods, one module per family; :func:`builtin_methods` gathers them
for the gateway plugin object (:mod:`clawline.gateway.plugin`) that registers them."""

from __future__ import annotations

from clawline.gateway.registry import MethodRegistry


def builtin_methods() -> MethodRegistry:
    from clawline.gateway.methods import (
        agent,
        channel_methods,
        chat,
        sessions,
        system,
        tasks,
        web,
    )

    registry = MethodRegistry()
    for module in (system, sessions, chat, agent, tasks, web, channel_methods):
        registry.include(module.methods)
    return registry
