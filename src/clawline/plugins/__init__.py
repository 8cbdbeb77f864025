"""clawline plugins: pluggy hooks for gateway methods, tools, channels, providers and the
session lifecycle (docs/plugins.md).

A plugin is a module (or object) with functions marked ``@hookimpl``; every hook is specified
in :mod:`clawline.plugins.hookspecs`. Plugins are installed through the entry-point group
``clawline`` or listed in config.toml (``[plugins] enabled = ["module.path"]``); the
:class:`PluginManager` (``runtime.plugins``) loads them and calls their hooks, each in
isolation. What a plugin may use of the gateway is the :class:`PluginHost` its ``startup`` hook
receives and every hook context carries (``ctx.host``); session extensions
(``pluginExtensions``) are read and written through it (:mod:`clawline.plugins.extensions`).
A plugin's gateway methods are described by :mod:`clawline.plugins.methods` (the call, the
refusal with a protocol code, the operator scopes).

The plugin API stands below the domain: it imports nothing from the agents, collaboration,
channels, ACP, gateway, web or runtime packages (not even for type checking); what the
registration hooks receive is described by Protocols (:mod:`clawline.plugins.registrars`).
"""

from __future__ import annotations

from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.plugins.context import HookContext
from clawline.plugins.extensions import find_sessions, read_extension, update_extension
from clawline.plugins.hookspecs import hookimpl
from clawline.plugins.host import PluginHost
from clawline.plugins.manager import PluginInfo, PluginManager
from clawline.plugins.methods import MethodCall, MethodError
from clawline.plugins.registrars import (
    ChannelRegistrar,
    MethodRegistrar,
    ProviderRegistrar,
    ToolRegistrar,
)

__all__ = [
    "ADMIN",
    "READ",
    "WRITE",
    "ChannelRegistrar",
    "HookContext",
    "MethodCall",
    "MethodError",
    "MethodRegistrar",
    "PluginHost",
    "PluginInfo",
    "PluginManager",
    "ProviderRegistrar",
    "ToolRegistrar",
    "find_sessions",
    "hookimpl",
    "read_extension",
    "update_extension",
]
