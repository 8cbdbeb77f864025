"""A synchronous face for :class:`GatewayClient`, for code that is not async (the CLI).

The client lives on a private event loop in a daemon thread; every call is handed to that loop
and waited for. It can be used from any thread except that loop's own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from clawline.client.connection import GatewayClient
from clawline.types import JSON

T = TypeVar("T")


class _Loop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="clawline-client-loop", daemon=True
        )
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


class BlockingGatewayClient:
    """``BlockingGatewayClient.connect(url, **options)`` takes :meth:`GatewayClient.connect`'s
    options; :meth:`request` and :meth:`request_final` block until answered."""

    def __init__(self, runner: _Loop, client: GatewayClient) -> None:
        self._runner = runner
        self.client = client

    @classmethod
    def connect(cls, url: str, **options: Any) -> BlockingGatewayClient:
        runner = _Loop()
        try:
            client = runner.run(GatewayClient.connect(url, **options))
        except BaseException:
            runner.stop()
            raise
        return cls(runner, client)

    def request(self, method: str, params: JSON = None, *, timeout: float = 30.0) -> JSON:
        return self._runner.run(self.client.request(method, params, timeout=timeout))

    def request_final(
        self, method: str, params: JSON = None, *, timeout: float = 120.0
    ) -> tuple[JSON, JSON]:
        return self._runner.run(self.client.request_final(method, params, timeout=timeout))

    def close(self) -> None:
        try:
            self._runner.run(self.client.close())
        finally:
            self._runner.stop()

    def __enter__(self) -> BlockingGatewayClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
