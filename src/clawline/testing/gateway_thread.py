"""A real gateway served from its own thread and event loop, for synchronous tests: code under
test (the CLI, a blocking client) may then block the test's thread while it talks to it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway

__all__ = ["GatewayThread"]

T = TypeVar("T")


class GatewayThread:
    """``with GatewayThread(state_dir) as gw: …`` serves on ``gw.url`` until the block ends."""

    def __init__(
        self,
        state_dir: Path,
        *,
        clock: Clock = SYSTEM_CLOCK,
        gateway_settings: GatewaySettings | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.clock = clock
        self.gateway_settings = gateway_settings or GatewaySettings(port=0)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="test-gateway", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._running: RunningGateway | None = None
        self._error: BaseException | None = None

    @property
    def running(self) -> RunningGateway:
        assert self._running is not None, "the gateway is not running"
        return self._running

    @property
    def url(self) -> str:
        return self.running.url

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with running_gateway(
                self.state_dir, gateway_settings=self.gateway_settings, clock=self.clock
            ) as running:
                self._running = running
                self._ready.set()
                await self._stop.wait()
        except BaseException as error:
            self._error = error
        finally:
            self._ready.set()

    def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine on the gateway's loop (e.g. to publish events) and wait for it."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(timeout=10)

    def __enter__(self) -> GatewayThread:
        self._thread.start()
        if not self._ready.wait(timeout=15) or self._running is None:
            self.__exit__()
            raise RuntimeError(f"the gateway did not start: {self._error!r}")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=15)
        assert not self._thread.is_alive(), "the gateway thread did not stop"
