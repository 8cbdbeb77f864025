"""``plugins.list``: the plugins loaded into this gateway's plugin manager, in OpenClaw's
catalog shape: ``{plugins: [{id, name, origin, installed, enabled, state, error?}],
diagnostics: [], mutationAllowed: false}``.

A loaded plugin is ``installed``, ``enabled`` and in state ``enabled``; one that failed to
load is listed in state ``error`` with the failure. clawline installs and enables plugins
through its configuration only, so ``mutationAllowed`` is false.
"""

from __future__ import annotations

from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.types import JSON

methods = MethodRegistry()


@methods.method("plugins.list", scope=READ, schema={})
async def plugins_list(call: Call) -> JSON:
    manager = call.gateway.plugins
    plugins: list[JSON] = [
        {
            "id": info.name,
            "name": info.name,
            "origin": info.source,
            "installed": True,
            "enabled": True,
            "state": "enabled",
        }
        for info in manager.plugins()
    ]
    plugins += [
        {
            "id": failure.name,
            "name": failure.name,
            "origin": failure.source,
            "installed": True,
            "enabled": False,
            "state": "error",
            "error": failure.error,
        }
        for failure in manager.failures
    ]
    return {"plugins": plugins, "diagnostics": [], "mutationAllowed": False}
