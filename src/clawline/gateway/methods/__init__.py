"""The gateway's built-in methods, one module per family; :func:`builtin_methods` gathers them
for the gateway plugin object (:mod:`clawline.gateway.plugin`) that registers them."""

from __future__ import annotations

from clawline.gateway.registry import MethodRegistry


def builtin_methods() -> MethodRegistry:
    from clawline.gateway.methods import (
        absent_features,
        agent,
        agent_catalog,
        channel_methods,
        chat,
        chat_startup,
        plugin_catalog,
        sessions,
        system,
        tasks,
        web,
    )

    registry = MethodRegistry()
    for module in (
        system,
        sessions,
        chat,
        chat_startup,
        agent,
        agent_catalog,
        tasks,
        web,
        channel_methods,
        plugin_catalog,
        absent_features,
    ):
        registry.include(module.methods)
    return registry
