"""Where a gateway is made from a runtime: :func:`build_gateway`, the one place that unpacks a
:class:`~clawline.runtime.Runtime` into the parts a :class:`~clawline.gateway.app.Gateway`
uses.

Every adapter that serves a gateway builds it here — ``clawline gateway run``, the ACP
bridge's in-process gateway, :func:`clawline.testing.live_gateway.running_gateway` — so the
gateway itself never holds the runtime, only its parts::

    runtime = Runtime.open(settings)
    gateway = build_gateway(runtime, GatewaySettings(port=0))
    await serve(gateway)          # starts the runtime's parts, serves, stops them
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.gateway.app import Gateway
from clawline.gateway.options import GatewaySettings
from clawline.gateway.plugin import PLUGIN_NAME as GATEWAY_PLUGIN
from clawline.gateway.plugin import GatewayMethodsPlugin
from clawline.gateway.registry import MethodRegistry
from clawline.pairing.registry import PairingRegistry

if TYPE_CHECKING:
    from clawline.runtime import Runtime


def gateway_methods(runtime: Runtime) -> MethodRegistry:
    """The method table of a gateway over ``runtime``: what the plugins' (built-ins first)
    ``register_gateway_methods`` hooks add. The gateway brings its built-in methods itself: the
    first gateway built over a runtime adds :class:`GatewayMethodsPlugin` to its plugins (the
    runtime, below the gateway, does not know it)."""
    if runtime.plugins.get(GATEWAY_PLUGIN) is None:
        runtime.plugins.add(
            GatewayMethodsPlugin(), GATEWAY_PLUGIN, source="builtin", origin="clawline.gateway"
        )
    methods = MethodRegistry()
    runtime.plugins.register_gateway_methods(methods)
    return methods


def build_gateway(
    runtime: Runtime, settings: GatewaySettings, *, methods: MethodRegistry | None = None
) -> Gateway:
    """A gateway serving ``runtime``'s parts with ``settings``; ``methods`` replaces the
    plugins' method table (tests serving methods of their own)."""
    return Gateway(
        settings=settings,
        methods=gateway_methods(runtime) if methods is None else methods,
        catalog=runtime.catalog,
        runs=runtime.runs,
        tasks=runtime.tasks,
        store=runtime.store,
        workers=runtime.workers,
        clock=runtime.clock,
        background=runtime.background,
        events=runtime.events,
        plugins=runtime.plugins,
        thread_bindings=runtime.thread_bindings,
        inbox=runtime.inbox,
        channels=runtime.channels,
        row_cache=runtime.row_cache,
        pairings=PairingRegistry(store=runtime.store, clock=runtime.clock),
        instance=runtime.instance,
        state_dir=runtime.settings.state_dir,
        start_parts=runtime.start,
        stop_parts=runtime.stop,
    )
