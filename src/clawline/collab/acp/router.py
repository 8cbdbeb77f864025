"""Which runner serves a session with an ACP key (``agent:<id>:acp:<uuid>``).

The run manager routes every ACP-keyed session here (``RunManager.route``). Sessions the acp
spawn runtime created carry ``acp`` metadata in their entry
(:data:`~clawline.collab.spawn_acp_plan.ACP_META`: ``{agent, mode, cwd, acpSessionId?}``); their
runs are turns of the external agent (:class:`clawline.collab.acp.acp_runner.AcpRunner`). Any
other session that merely has such a key (a ``chat.send`` to ``acp:x``) keeps the default runner.
This module does not import the ACP SDK, so gateways that never spawn an ACP child never load it.

The runtime builds the router and routes to it: ``runs.route(is_acp_key, lambda: router)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.agents.runner import RunContext, Runner, RunOutput
from clawline.collab.spawn_acp_plan import acp_meta

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.workers import StoreWorkers


class AcpSessionRouter:
    """Serves an ACP-keyed session with ``acp`` (the ACP runner) when its entry is an ACP
    child's, else with the run manager's runner (``runs.runner``, read at each run: tests
    replace it)."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        workers: StoreWorkers,
        runs: RunManager,
        acp: Runner,
    ) -> None:
        self._catalog = catalog
        self._workers = workers
        self._runs = runs
        self._acp = acp

    async def run(self, ctx: RunContext) -> RunOutput:
        entry = await self._workers.run(self._catalog.get, ctx.session_key)
        if acp_meta(entry) is None:
            return await self._runs.runner.run(ctx)
        return await self._acp.run(ctx)
