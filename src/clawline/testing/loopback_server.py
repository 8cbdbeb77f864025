"""Serving an ASGI app on ``127.0.0.1`` inside the test's event loop: the one server behind the
test fakes (:mod:`~clawline.testing.fake_openai`, :mod:`~clawline.testing.fake_telegram`,
:mod:`~clawline.testing.webhook_receiver`)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn
from starlette.types import ASGIApp


class LoopbackServer:
    """``await start(app)`` serves ``app`` on ``127.0.0.1:port`` (0: any free port) and answers
    the base URL once uvicorn listens; ``await stop()`` ends it and waits for its task."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, app: ASGIApp, port: int = 0) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError(f"the {self._name} stopped before it started")
            await asyncio.sleep(0.005)
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        self._server = self._task = None
