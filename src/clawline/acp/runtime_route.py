"""Which runner serves a session with an ACP key (``agent:<id>:acp:<uuid>``).

The run manager routes every ACP-keyed session here (``RunManager.route``). Sessions the acp
spawn runtime created carry ``acp`` metadata in their entry (:data:`ACP_META`: ``{agent, mode,
cwd, acpSessionId?}``); their runs are turns of the external agent
(:class:`clawline.acp.runtime.AcpRunner`). Any other session that merely has such a key (a
``chat.send`` to ``acp:x``) keeps the default runner. This module does not import the ACP SDK, so
gateways that never spawn an ACP child never load it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from clawline.agents.runner import RunContext, RunOutput

if TYPE_CHECKING:
    from clawline.runtime import Runtime
    from clawline.sessions.entry import SessionEntry

__all__ = ["ACP_META", "AcpSessionRouter", "acp_meta"]

ACP_META = "acp"
"""The entry field of an ACP child: ``{agent, mode: "oneshot"|"persistent", cwd,
acpSessionId?}``."""


def acp_meta(entry: SessionEntry | None) -> Mapping[str, object] | None:
    """The ACP metadata of a spawned ACP child's entry, else ``None``."""
    if entry is None:
        return None
    meta = entry.extra.get(ACP_META)
    return meta if isinstance(meta, Mapping) and isinstance(meta.get("agent"), str) else None


class AcpSessionRouter:
    def __init__(self, services: Runtime) -> None:
        self._services = services

    async def run(self, ctx: RunContext) -> RunOutput:
        services = self._services
        entry = await services.call(services.catalog.get, ctx.session_key)
        if acp_meta(entry) is None:
            return await services.runs.runner.run(ctx)
        return await services.acp.runner.run(ctx)
