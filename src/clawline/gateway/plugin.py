"""The gateway's built-in methods as a plugin object: :class:`GatewayMethodsPlugin`.

clawline's own methods register through the same ``register_gateway_methods`` hook as any
plugin's. The runtime adds one :class:`GatewayMethodsPlugin` to its plugin manager (under
:data:`PLUGIN_NAME`); a gateway's method table is then made by calling the hook
(:func:`clawline.gateway.assembly.build_gateway`). The hook is ``tryfirst``, so the built-ins
register before any other plugin and keep their names.

The methods need no parts of their own: a handler reaches what it uses through its call
(``call.gateway.catalog``, …). Importing this module imports no method module; they are
imported when the hook runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from clawline.plugins.registrars import MethodRegistrar

PLUGIN_NAME = "clawline.gateway"


class GatewayMethodsPlugin:
    """Every built-in method family of :mod:`clawline.gateway.methods`."""

    @hookimpl(tryfirst=True)
    def register_gateway_methods(self, methods: MethodRegistrar) -> None:
        from clawline.gateway.methods import builtin_methods

        for method in builtin_methods():
            methods.add(method.name, method.handler, scope=method.scope, schema=method.schema)
