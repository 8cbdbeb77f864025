"""Serving the bridge over stdio: the SDK's JSON-RPC :class:`acp.connection.Connection` with a
method table of our own.

Why not ``acp.run_agent``: its router serves ``session/resume`` and ``session/close`` only with
``use_unstable_protocol`` (SDK 0.12.1), answers ``{}`` for methods an
``acp.Agent`` subclass leaves unimplemented and flattens ``_meta`` into keyword
arguments. :class:`Dispatcher` routes exactly the methods the bridge implements,
validates params with the SDK's pydantic request models (``-32602`` with the errors), then
with the schema's stricter rules the models lack (:mod:`clawline.acp.strict`), and passes
``_meta`` as its own dict; anything else is ``-32601 Method not found``, and unknown
notifications are ignored. Messages are framed by
:class:`clawline.acp.ndjson.NdjsonTransport` (orjson) through the connection's transport
seam; it also answers malformed envelopes itself (:mod:`clawline.acp.jsonrpc_envelope`), refuses
lines over :data:`STDIN_LIMIT` without holding them and stops reading while
:data:`clawline.acp.ndjson.MAX_PENDING_REQUESTS` requests are unanswered.

stdout carries only ACP: :func:`stdio_streams` writes to a duplicate of file descriptor 1 and
then points descriptor 1 at stderr, so a stray ``print`` (ours or a library's) cannot corrupt
the protocol.
"""

from __future__ import annotations

import asyncio
import logging
import os
import selectors
import stat
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from acp import RequestError
from acp.connection import Connection, StreamObserver
from acp.schema import (
    CancelNotification,
    CloseSessionRequest,
    InitializeRequest,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    PromptRequest,
    ResumeSessionRequest,
)
from pydantic import BaseModel, ValidationError

from clawline.acp.bridge_agent import Bridge
from clawline.acp.lines import READ_CHUNK
from clawline.acp.ndjson import NdjsonTransport
from clawline.acp.strict import check_protocol_version

log = logging.getLogger("clawline.acp")

STDIN_LIMIT = 50 * 1024 * 1024
"""Longest accepted message line (the SDK's default); a longer one is refused without being
held whole (:mod:`clawline.acp.lines`)."""

SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while the bridge serves (Python's default: 5 ms).
The store thread of an in-process gateway builds listing pages in Python while the event loop
answers the client; with the default, a request that arrives then waits up to 5 ms for the
loop to get the interpreter back (every tenth ``session/list`` page of a walk did)."""

Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]


class Dispatcher:
    """The ``MethodHandler`` of the connection: method → (request model, bridge handler)."""

    def __init__(self, bridge: Bridge) -> None:
        self.requests: dict[str, tuple[type[BaseModel], Handler]] = {
            "initialize": (InitializeRequest, bridge.initialize),
            "session/new": (NewSessionRequest, bridge.new_session),
            "session/load": (LoadSessionRequest, bridge.load_session),
            "session/resume": (ResumeSessionRequest, bridge.resume_session),
            "session/close": (CloseSessionRequest, bridge.close_session),
            "session/list": (ListSessionsRequest, bridge.list_sessions),
            "session/prompt": (PromptRequest, bridge.prompt),
        }
        self.notifications: dict[str, tuple[type[BaseModel], Handler]] = {
            "session/cancel": (CancelNotification, bridge.cancel),
        }
        self.strict: dict[str, Callable[[Mapping[str, Any]], None]] = {
            "initialize": check_protocol_version,
        }
        """Checks of the raw params where the ACP schema is stricter than the SDK's model."""

    async def __call__(self, method: str, params: Any | None, is_notification: bool) -> Any:
        table = self.notifications if is_notification else self.requests
        route = table.get(method)
        if route is None:
            if is_notification:
                log.debug("ignoring notification %s", method)
                return None
            raise RequestError.method_not_found(method)
        model, handler = route
        try:
            request = model.model_validate({} if params is None else params)
        except ValidationError as error:
            if is_notification:
                log.warning("ignoring invalid %s: %s", method, error)
                return None
            errors = error.errors(include_url=False, include_context=False, include_input=False)
            raise RequestError.invalid_params({"errors": errors}) from None
        strict = self.strict.get(method)
        if strict is not None and isinstance(params, dict):
            strict(params)
        meta = getattr(request, "field_meta", None)
        return await handler(request, dict(meta) if isinstance(meta, dict) else {})


def _check_pipe(fd: int, name: str) -> None:
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        raise OSError(f"{name} must be a pipe, socket or terminal for ACP over stdio")


def check_stdio() -> None:
    """Refuse early (before any gateway is started) when stdin or stdout is a regular file:
    asyncio's pipe transports need a pipe, socket or terminal."""
    _check_pipe(sys.stdin.fileno(), "stdin")
    _check_pipe(sys.stdout.fileno(), "stdout")


def _pollable(fd: int) -> bool:
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except PermissionError:
            return False
    return True


def _read_on_a_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int
) -> None:
    """Feed ``reader`` from ``fd`` with blocking reads on a daemon thread, until EOF (at once
    for ``/dev/null``)."""

    def pump() -> None:
        try:
            while chunk := os.read(fd, READ_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError as error:
            loop.call_soon_threadsafe(reader.set_exception, error)
            return
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp stdin", daemon=True).start()


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Reader on stdin, writer on (a duplicate of) stdout; descriptor 1 then goes to stderr."""
    loop = asyncio.get_running_loop()
    check_stdio()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    if _pollable(sys.stdin.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:  # a device epoll cannot watch (``< /dev/null``): read it on a thread instead
        _read_on_a_thread(loop, reader, sys.stdin.fileno())
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, protocol_out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_stdio(
    bridge: Bridge,
    *,
    stop: asyncio.Event | None = None,
    observers: Sequence[StreamObserver] = (),
) -> None:
    """Serve until stdin ends (or ``stop`` is set); turns still in flight are cancelled."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        reader, writer = await stdio_streams()
    except BaseException:
        await bridge.aclose()
        raise
    transport = NdjsonTransport(reader, writer, line_limit=STDIN_LIMIT)
    connection = Connection(
        Dispatcher(bridge), transport, observers=list(observers), listening=False
    )
    bridge.attach(connection)
    listening = asyncio.ensure_future(connection.main_loop())
    waiters: set[asyncio.Future[Any]] = {listening}
    if stop is not None:
        waiters.add(asyncio.ensure_future(stop.wait()))
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        await bridge.aclose()
        await asyncio.shield(connection.close())
