"""A real gateway on ``127.0.0.1:0`` inside the current event loop, for tests and plugins."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.config import Settings
from clawline.gateway.app import Gateway
from clawline.gateway.assembly import build_gateway
from clawline.gateway.options import GatewaySettings
from clawline.gateway.server import bind_socket, serve
from clawline.runtime import Runtime

__all__ = ["RunningGateway", "running_gateway"]


@dataclass(frozen=True, slots=True)
class RunningGateway:
    url: str
    """``ws://127.0.0.1:<port>``; the WebSocket is served at ``/`` and ``/ws``."""
    gateway: Gateway
    runtime: Runtime
    """The runtime whose parts the gateway serves (tests reach the parts through it)."""

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def http_url(self) -> str:
        return "http" + self.url[2:]


@contextlib.asynccontextmanager
async def running_gateway(
    state_dir: Path,
    *,
    gateway_settings: GatewaySettings | None = None,
    store_url: str | None = None,
    settings: Settings | None = None,
    clock: Clock = SYSTEM_CLOCK,
    port: int = 0,
) -> AsyncIterator[RunningGateway]:
    """Start a gateway with its own state directory; stop it (gracefully) on exit.

    ``port`` 0 picks a free port; a test that restarts a gateway passes the port of the one it
    stopped, so clients (a browser page and its storage, keyed by origin) find it again."""
    base = settings or Settings(state_dir=state_dir)
    if store_url is not None:
        base = replace(base, store_url=store_url)
    runtime = Runtime.open(base, clock=clock)
    gateway = build_gateway(runtime, gateway_settings or GatewaySettings(port=0))
    sock = bind_socket("127.0.0.1", port)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    def on_ready(url: str) -> None:
        if not ready.done():
            ready.set_result(url)

    server = asyncio.create_task(
        serve(gateway, sock=sock, on_ready=on_ready, stop=stop, install_signal_handlers=False)
    )
    try:
        waiters: set[asyncio.Future[object]] = {server, ready}  # type: ignore[arg-type]
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if server in done:
            server.result()
            raise RuntimeError("the gateway stopped before it was ready")
        yield RunningGateway(url=ready.result(), gateway=gateway, runtime=runtime)
    finally:
        stop.set()
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await server  # raises what stopped it, e.g. StoreInUse or StoreLockLost
        finally:
            runtime.close()
