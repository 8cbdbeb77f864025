"""Session families for the web chat, from ACP (docs/web.md).

The web chat never derives lineage itself: ``web.family {sessionKey}`` runs the family operation
of :mod:`clawline.acp_client.family_loader` against an ACP link to clawline's own bridge, a
``python -m clawline acp --url <this gateway>`` subprocess that connects back to the gateway as
an ordinary client. The subprocess is started on the first request (not at gateway start-up),
reused by every later request and stopped when the gateway stops; if it dies, the link starts a
fresh one on the next request.

The gateway keeps one :class:`WebFamily` (``clawline.gateway.methods.web.family_service``) and
closes it when it stops; the family itself knows only how to start the bridge
(:class:`BridgeTarget`: the gateway's URL, state directory and token, asked for when the bridge
starts, since the URL is known only once the gateway serves).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawline.acp_client import FamilyResult, get_session_family
from clawline.acp_client.agent_calls import AcpClientError
from clawline.acp_client.link import AgentFeatures, AgentLink, spawned_agent

STOPPED = "the gateway is stopping"
TIMED_OUT = "ACP session family request timed out"
FAMILY_TIMEOUT_S = 30.0
CLOSE_WAIT_S = 5.0
"""How long closing waits for a request in flight before it stops the bridge under it."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BridgeTarget:
    """How to start clawline's bridge against a gateway."""

    url: str
    state_dir: Path
    token: str | None = field(default=None, repr=False)

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "clawline",
            "--state-dir",
            str(self.state_dir),
            "acp",
            "--url",
            self.url,
        ]

    def environment(self) -> dict[str, str]:
        """The token travels in the environment, never on the command line (``ps`` shows it)."""
        return {} if self.token is None else {"CLAWLINE_GATEWAY_TOKEN": self.token}


def loopback_url(url: str) -> str:
    """A gateway bound to every interface is reached over loopback."""
    return url.replace("://0.0.0.0:", "://127.0.0.1:", 1)


def bridge_target(*, url: str | None, state_dir: Path, token: str | None) -> BridgeTarget:
    """The bridge for a gateway serving at ``url`` (``None``: not serving yet, a
    ``RuntimeError``) over ``state_dir``, with its token (``None`` without token auth)."""
    if url is None:
        raise RuntimeError("the gateway is not serving yet")
    return BridgeTarget(loopback_url(url), state_dir, token)


class WebFamily:
    """One lazily started ACP link to clawline's bridge, shared by every ``web.family`` call.
    It is itself the connection the family operation uses (``ready`` / ``request``), so the
    operation validates the key before anything is started."""

    def __init__(self, *, target: Callable[[], BridgeTarget]) -> None:
        self._target = target
        self._stack: contextlib.AsyncExitStack | None = None
        self._link: AgentLink | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def started(self) -> bool:
        return self._link is not None

    @property
    def processes(self) -> Sequence[asyncio.subprocess.Process]:
        """The bridge process of the open link, when one runs (for tests and diagnostics)."""
        process = None if self._link is None else self._link.process
        return () if process is None else (process,)

    async def family(self, session_key: object) -> FamilyResult:
        """``{success, current, children[, error]}`` for ``session_key``, as ACP lists it.
        Never raises; a key that is not ``agent:…`` fails without starting the bridge.
        One request at a time (they share the bridge's read-ahead of session/list pages)."""
        async with self._lock:
            try:
                async with asyncio.timeout(FAMILY_TIMEOUT_S):
                    return await get_session_family(self, session_key)
            except TimeoutError:
                log.warning("[acp-chat] getSessionFamily failed: %s", TIMED_OUT)
                return {"success": False, "current": None, "children": [], "error": TIMED_OUT}

    async def ready(self) -> AgentFeatures:
        """The link's initialisation; the bridge starts here, on the first valid request."""
        return await (await self._open()).ready()

    async def request(self, method: str, params: Mapping[str, Any]) -> object:
        return await (await self._open()).request(method, params)

    async def close(self) -> None:
        """Stop the bridge (stdin closed, then terminated). A request in flight may finish first
        (for at most :data:`CLOSE_WAIT_S`); every later one fails, and nothing is started any
        more: stopping the bridge under a request would otherwise make the link start a fresh
        one behind the closed family's back, a process nobody stops."""
        self._closed = True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_WAIT_S), self._lock:
                pass
        stack, self._stack, self._link = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    async def _still_open(self) -> None:
        """Before each start of the bridge (the link's retries included)."""
        if self._closed:
            raise AcpClientError(STOPPED)

    async def _open(self) -> AgentLink:
        if self._link is None:
            if self._closed:  # a request in flight while closing keeps the open link
                raise AcpClientError(STOPPED)
            target = self._target()
            command = target.command()
            stack = contextlib.AsyncExitStack()
            self._link = await stack.enter_async_context(
                spawned_agent(
                    command[0],
                    *command[1:],
                    env=target.environment(),
                    before_attempt=self._still_open,
                )
            )
            self._stack = stack
        return self._link
