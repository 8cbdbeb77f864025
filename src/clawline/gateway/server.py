"""Running the gateway with uvicorn on a socket we bind ourselves (so port 0 works)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from clawline.errors import StoreError, StoreUnavailable
from clawline.gateway.app import Gateway, create_app
from clawline.instances import InstanceRegistration
from clawline.store.instance_lock import StoreLockLost

log = logging.getLogger("clawline.gateway")

WS_MAX_SIZE = 32 * 1024 * 1024
"""The transport's own frame bound. Frames between ``maxPayload`` (25 MiB) and this get a typed
error and the connection survives; larger ones are closed by the WebSocket layer (1009)."""


class _NoFrameDumps(logging.Filter):
    """Drop the websockets library's DEBUG dumps of what crosses the wire — frames (``< %s``),
    request lines and headers (``< GET %s HTTP/1.1``, ``< %s: %s``): a ``connect`` frame carries
    the gateway token, and a client may send one in an ``Authorization`` or ``Cookie`` header."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.levelno == logging.DEBUG
            and isinstance(record.msg, str)
            and record.msg.startswith(("< ", "> "))
        )


def _hide_frame_dumps() -> None:
    logger = logging.getLogger("uvicorn.error")  # the logger uvicorn hands to websockets
    if not any(isinstance(existing, _NoFrameDumps) for existing in logger.filters):
        logger.addFilter(_NoFrameDumps())


def bind_socket(host: str, port: int) -> socket.socket:
    # proto must be IPPROTO_TCP, not 0: asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto says TCP, and with Nagle on a small frame following another waits ~40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def _write_runtime_file(path: Path, url: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    tmp.replace(path)


def _remove_runtime_file(path: Path, url: str) -> None:
    """Remove the runtime file if it still names this gateway (this process, this URL)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("pid") == os.getpid() and data.get("url") == url:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


async def serve(
    gateway: Gateway,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
    install_signal_handlers: bool = True,
) -> None:
    """Serve until ``stop`` is set, or until SIGINT/SIGTERM when signal handlers are installed.
    Shutdown is graceful: the lifespan publishes ``shutdown`` and ends active runs.

    Every gateway starts here, so this is where its parts start (``gateway.start_parts``, for a
    gateway built from a runtime :meth:`Runtime.start <clawline.runtime.Runtime.start>`: the
    instance registration, then recovery) before it serves, and stop after it served; another
    gateway holding a SQLite store's lock raises
    :class:`~clawline.store.instance_lock.StoreInUse`. Losing the instance's lease (or lock)
    while serving stops the gateway and raises
    :class:`~clawline.store.instance_lock.StoreLockLost` once it has stopped
    (:mod:`clawline.instances`)."""
    settings = gateway.settings
    sock = sock or bind_socket(settings.host, settings.port)
    try:
        await gateway.bus.open()  # a shared stream's id and position, before any client
    except BaseException:
        if gateway.event_workers is not None:
            gateway.event_workers.close()
        sock.close()
        raise
    # The projection and the event stream live longer than the parts' start and stop: what
    # recovery and the runs' endings tell becomes frames too (and reaches the other instances).
    stream = asyncio.create_task(gateway.bus.run(), name="gateway-event-stream")
    projection = asyncio.create_task(gateway.project(), name="gateway-projection")
    try:
        await gateway.start_parts()
    except BaseException:
        await _cancel(projection)
        await _cancel(stream)
        if gateway.event_workers is not None:
            gateway.event_workers.close()
        sock.close()
        raise
    try:
        await _serve_holding(
            gateway,
            sock,
            instance=gateway.instance,
            on_ready=on_ready,
            stop=stop,
            install_signal_handlers=install_signal_handlers,
        )
    finally:
        try:
            await gateway.stop_parts()
        finally:
            await gateway.projection.caught_up()
            await _cancel(projection)
            await _cancel(stream)
            if gateway.event_workers is not None:
                gateway.event_workers.close()
            sock.close()


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _serve_holding(
    gateway: Gateway,
    sock: socket.socket,
    *,
    instance: InstanceRegistration,
    on_ready: Callable[[str], None] | None,
    stop: asyncio.Event | None,
    install_signal_handlers: bool,
) -> None:
    host, port = sock.getsockname()[:2]
    url = f"ws://{host}:{port}"
    config = uvicorn.Config(
        create_app(gateway),
        lifespan="on",
        log_level="warning",
        access_log=False,
        server_header=False,
        ws_max_size=WS_MAX_SIZE,
        # per-message deflate costs milliseconds per page of rows for little gain on loopback
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    # Everything loaded so far lives as long as the process. Moving it out of the cyclic
    # collector's view keeps full collections short while a large listing allocates
    # hundreds of thousands of short-lived objects.
    gc.collect()
    gc.freeze()
    _hide_frame_dumps()
    if not install_signal_handlers:
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    runtime_file = gateway.state_dir / "gateway.json"

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.005)
        try:
            await instance.record(url)
        except (StoreError, StoreUnavailable) as error:
            log.warning("could not record the URL with the instance registration: %s", error)
        _write_runtime_file(runtime_file, url)
        gateway.url = url
        log.info("listening on %s", url)
        if on_ready is not None:
            on_ready(url)

    async def stop_when_told() -> None:
        if stop is not None:
            await stop.wait()
            server.should_exit = True

    lost: list[str] = []

    async def stop_when_lock_lost() -> None:
        reason = await instance.watch()
        lost.append(reason)
        log.critical(
            "lost the instance lease of the store %s (%s): stopping, another gateway may take"
            " its runs over",
            gateway.store.location,
            reason,
        )
        server.should_exit = True

    helpers = [
        asyncio.create_task(announce()),
        asyncio.create_task(stop_when_told()),
        asyncio.create_task(stop_when_lock_lost()),
    ]
    try:
        await server.serve(sockets=[sock])
    finally:
        for helper in helpers:
            helper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await helper
        _remove_runtime_file(runtime_file, url)
    if lost:
        raise StoreLockLost(
            f"the gateway stopped: it lost the instance lease of {gateway.store.location}"
            f" ({lost[0]})"
        )
