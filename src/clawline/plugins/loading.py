"""Finding plugins: the ``clawline`` entry-point group and ``[plugins]`` in config.toml; and the
list of the built-in plugin objects the runtime and the gateway add (:data:`BUILTIN_PLUGINS`).

::

    [plugins]
    enabled = ["my_plugins.audit", "my_plugins.extra:plugin"]   # module, or module:object
    disabled = ["noisy"]              # plugin names (entry-point names, module paths, PLUGIN_ID)
    entry_points = true               # load the "clawline" entry-point group (default)
    hook_timeout_seconds = 10         # how long an async hook may take (0 < t <= 600)

    [plugins.entries."my-plugin".config]   # what ctx.config holds for plugin "my-plugin"
    greeting = "hi"

A module that defines ``make_plugin()`` is a plugin factory: each plugin manager (one per
gateway) registers the object it returns, so a plugin that keeps state — the
:class:`~clawline.plugins.host.PluginHost` its ``startup`` hook received — has its own per
gateway. Any other module or object is the plugin itself.

A plugin's name is its ``PLUGIN_ID`` attribute when it has one, else the entry point's name or
the module path it was listed under. A plugin that cannot be imported is reported (logged, and
listed by ``clawline plugins``); it never stops the others or the gateway. The built-ins
cannot be disabled: the gateway's own methods, tools, channels and providers come from them.
They are not found here but built by the runtime with the parts they use
(:mod:`clawline.runtime`).
"""

from __future__ import annotations

import functools
import importlib
import logging
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata

from clawline.config import PluginsConfig

log = logging.getLogger("clawline.plugins")

ENTRY_POINT_GROUP = "clawline"


@dataclass(frozen=True, slots=True)
class BuiltinPlugin:
    """A built-in plugin object the runtime builds with its parts and adds under ``name``
    (source ``builtin``, origin ``origin``)."""

    name: str
    origin: str
    plugin_class: str
    """Its class, as ``module:Class`` (imported only to list its hooks)."""


BUILTIN_PLUGINS: tuple[BuiltinPlugin, ...] = (
    BuiltinPlugin(
        "clawline.gateway", "clawline.gateway", "clawline.gateway.plugin:GatewayMethodsPlugin"
    ),
    BuiltinPlugin(
        "clawline.channels", "clawline.channels", "clawline.channels.plugin:ChannelsPlugin"
    ),
    BuiltinPlugin(
        "clawline.providers", "clawline.agents", "clawline.agents.plugin:ProvidersPlugin"
    ),
    BuiltinPlugin("clawline.collab", "clawline.collab", "clawline.collab.plugin:CollabPlugin"),
    BuiltinPlugin("clawline.files", "clawline.agents", "clawline.agents.plugin:FileToolsPlugin"),
)
"""The built-in plugin objects, so that they can be listed without building one (``clawline
plugins``; a test holds it to what is added): the gateway's methods (added by the gateway,
:func:`clawline.gateway.assembly.gateway_methods`), then the runtime's, in the order it adds
them."""


def builtin_class(builtin: BuiltinPlugin) -> type:
    """The class of a built-in plugin (imported on demand)."""
    loaded = _import(builtin.plugin_class)
    if not isinstance(loaded, type):
        raise TypeError(f"{builtin.plugin_class} is not a class")
    return loaded


@dataclass(frozen=True, slots=True)
class Candidate:
    """A plugin object ready to register."""

    name: str
    source: str
    """``entry point`` or ``config``."""
    origin: str
    """The module path (``module:object``) it came from."""
    plugin: object


@dataclass(frozen=True, slots=True)
class LoadFailure:
    name: str
    source: str
    error: str


PLUGIN_FACTORY = "make_plugin"
"""The module attribute that makes a fresh plugin object per plugin manager."""


def _import(spec: str) -> object:
    """``module`` or ``module:attribute``."""
    module_name, _, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def plugin_of(loaded: object) -> object:
    """The plugin a loaded module or object stands for: what a module's ``make_plugin()``
    returns, else ``loaded`` itself."""
    if isinstance(loaded, types.ModuleType):
        factory = getattr(loaded, PLUGIN_FACTORY, None)
        if callable(factory):
            return factory()
    return loaded


def plugin_name(plugin: object, default: str) -> str:
    declared = getattr(plugin, "PLUGIN_ID", None)
    return declared if isinstance(declared, str) and declared.strip() else default


EntryPoints = Callable[[], Iterable[metadata.EntryPoint]]


def _group_entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def discover(
    settings: PluginsConfig, *, entry_points: EntryPoints = _group_entry_points
) -> tuple[list[Candidate], list[LoadFailure]]:
    """Import every plugin to load: the entry points, then those of config."""
    found: list[Candidate] = []
    failures: list[LoadFailure] = []

    def add(spec: str, default_name: str, source: str, load: Callable[[], object]) -> None:
        if default_name in settings.disabled:
            return
        try:
            plugin = plugin_of(load())
        except Exception as error:
            log.exception("plugin %s (%s) could not be loaded", default_name, source)
            failures.append(LoadFailure(default_name, source, f"{type(error).__name__}: {error}"))
            return
        name = plugin_name(plugin, default_name)
        if name in settings.disabled:
            return
        found.append(Candidate(name, source, spec, plugin))

    if settings.entry_points:
        for point in entry_points():
            add(point.value, point.name, "entry point", point.load)
    for spec in settings.enabled:
        add(spec, spec, "config", functools.partial(_import, spec))
    return found, failures
