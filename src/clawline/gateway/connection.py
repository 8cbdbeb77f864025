"""One WebSocket client: handshake, request dispatch, subscriptions and a bounded outbox.

Outgoing frames go through an outbox drained by a writer task, so nothing that publishes an
event ever waits for a slow client. When a client falls behind (its outbox holds more than
``maxBufferedBytes``), *drop-if-slow* events are dropped for it with a logged reason — it sees
the gap in ``seq`` and can replay or re-list — and a client twice that far behind is
disconnected rather than allowed to grow without bound.

A connection owns its tasks: one per request in flight, its writer, and the close it started.
When it closes, it cancels what is still running and waits for it (at most
``close_timeout_s``), so :meth:`Connection.serve` returns with none of them left behind.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from clawline.errors import ClawlineError
from clawline.failure_log import log_failure, one_line
from clawline.gateway.bus import Audience, Event
from clawline.gateway.frames import (
    AccessRefused,
    ErrorCode,
    FrameError,
    GatewayError,
    Request,
    encode_error,
    encode_event,
    encode_ok,
    parse_request,
)
from clawline.gateway.handshake import Challenge, ConnectionInfo, accept_connect, admit_device
from clawline.gateway.params import check
from clawline.gateway.registry import Call
from clawline.pairing.scopes import has_scope
from clawline.plugins.methods import MethodError
from clawline.types import JSON

if TYPE_CHECKING:
    from clawline.gateway.app import Gateway

log = logging.getLogger("clawline.gateway")
_ids = itertools.count(1)

CLOSE_NORMAL = 1000
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009


def _close_reason(message: str) -> str:
    """A WebSocket close reason holds at most 123 bytes of UTF-8; longer ones fail the close."""
    return message.encode()[:120].decode("utf-8", "ignore")


class Connection:
    """A connected client. Implements the event bus's ``Subscriber`` protocol."""

    def __init__(self, websocket: WebSocket, gateway: Gateway) -> None:
        self.id = f"c-{next(_ids)}"
        self._ws = websocket
        self._gateway = gateway
        self.info: ConnectionInfo | None = None
        self.challenge = Challenge()
        self.subscribed_sessions = False
        self.message_keys: set[str] = set()
        self.dropped_events = 0
        self._outbox: deque[str] = deque()
        self._outbox_chars = 0
        self._wakeup = asyncio.Event()
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        """The requests in flight."""
        self._closer: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()
        """Set when :meth:`serve` returns: detached, and every task of the connection ended
        (or, past ``close_timeout_s``, given up on and logged)."""

    @property
    def gateway(self) -> Gateway:
        """The gateway this connection belongs to."""
        return self._gateway

    # --- subscriber protocol -------------------------------------------------------------

    def wants(self, event: Event) -> bool:
        if self.info is None or self._closing:
            return False
        if event.audience is Audience.OPERATORS:
            return True
        if event.audience is Audience.SESSIONS:
            return self.subscribed_sessions
        return self.subscribed_sessions or event.session_key in self.message_keys

    def deliver(self, event: Event) -> None:
        self._enqueue(event.frame(), droppable=event.drop_if_slow, what=event.name)

    def deliver_replayed(self, event: Event) -> None:
        """Queue an event the client asked to have replayed: never dropped as slow."""
        self._enqueue(event.frame(), what=event.name)

    # --- outbox --------------------------------------------------------------------------

    def send_response(self, request_id: str, payload: JSON) -> None:
        self._enqueue(encode_ok(request_id, payload))

    def send_error(self, request_id: str | None, error: GatewayError, payload: JSON = None) -> None:
        self._enqueue(encode_error(request_id, error, payload))

    def send_event(self, name: str, payload: JSON = None, seq: int | None = None) -> None:
        self._enqueue(encode_event(name, payload, seq))

    def _enqueue(self, text: str, *, droppable: bool = False, what: str = "frame") -> None:
        if self._closing:
            return
        limit = self._gateway.settings.max_buffered_bytes
        if droppable and self._outbox_chars + len(text) > limit:
            self.dropped_events += 1
            if self.dropped_events == 1 or self.dropped_events % 1000 == 0:
                log.warning(
                    "dropped %s for %s: slow consumer (%d bytes buffered, limit %d; %d dropped)",
                    what,
                    self.id,
                    self._outbox_chars,
                    limit,
                    self.dropped_events,
                )
            return
        if self._outbox_chars > 2 * limit:
            log.warning(
                "closing %s: slow consumer (%d bytes buffered)", self.id, self._outbox_chars
            )
            self._close_soon(CLOSE_POLICY, "slow consumer")
            return
        self._outbox.append(text)
        self._outbox_chars += len(text)
        self._wakeup.set()

    async def _write_loop(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._outbox:
                text = self._outbox.popleft()
                self._outbox_chars -= len(text)
                await self._ws.send_text(text)

    async def _flush(self) -> None:
        while self._outbox:
            text = self._outbox.popleft()
            self._outbox_chars -= len(text)
            await self._ws.send_text(text)

    def _close_soon(self, code: int, reason: str) -> None:
        self._closing = True
        self._outbox.clear()
        self._outbox_chars = 0
        # Detach now: the close frame itself waits until the client reads again.
        self._gateway.detach(self)
        if self._closer is None:
            self._closer = asyncio.create_task(self._ws.close(code, reason))

    def disconnect(self, reason: str) -> None:
        """Close with 1008 (policy) now, e.g. when the device's pairing was revoked."""
        if not self._closing:
            log.info("closing %s: %s", self.id, reason)
            self._close_soon(CLOSE_POLICY, _close_reason(reason))

    # --- lifecycle -----------------------------------------------------------------------

    async def serve(self) -> None:
        await self._ws.accept()
        gateway = self._gateway
        self.send_event(
            "connect.challenge",
            {"nonce": self.challenge.nonce, "ts": gateway.clock.now_ms()},
        )
        writer = asyncio.create_task(self._write_loop())
        try:
            if await self._handshake():
                gateway.attach(self)
                await self._read_loop()
        except WebSocketDisconnect:
            pass
        finally:
            gateway.detach(self)
            self._closing = True
            try:
                await self._end_tasks(writer)
            finally:
                self.finished.set()

    async def _end_tasks(self, writer: asyncio.Task[None]) -> None:
        """Cancel the requests in flight and the writer, then wait for them and for a close
        already under way, at most ``close_timeout_s``; whatever is still running then is
        logged (and the close cancelled)."""
        running = [*self._tasks, writer]
        for task in running:
            task.cancel()
        if self._closer is not None:
            running.append(self._closer)
        done, pending = await asyncio.wait(running, timeout=self._gateway.settings.close_timeout_s)
        for task in done:
            if not task.cancelled():
                task.exception()  # e.g. the writer failing on the closed socket: expected
        if self._closer in pending:
            self._closer.cancel()
        stuck = [task for task in pending if task is not self._closer]
        if stuck:
            log.warning(
                "%s: %d task(s) still running %.1f s after the connection closed",
                self.id,
                len(stuck),
                self._gateway.settings.close_timeout_s,
            )

    async def _receive_text(self) -> str | bytes | None:
        message = await self._ws.receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", CLOSE_NORMAL))
        if message.get("text") is not None:
            return str(message["text"])
        data = message.get("bytes")
        return bytes(data) if data is not None else None

    async def _handshake(self) -> bool:
        settings = self._gateway.settings
        try:
            data = await asyncio.wait_for(self._receive_text(), settings.connect_timeout_s)
        except TimeoutError:
            await self._refuse(None, GatewayError("connect timeout"), CLOSE_POLICY)
            return False
        if not isinstance(data, str):
            binary = FrameError("invalid frame: binary messages are not supported")
            await self._refuse(None, binary, CLOSE_POLICY)
            return False
        try:
            request = parse_request(data, limit=settings.preauth_frame_limit)
        except FrameError as error:
            close = CLOSE_TOO_BIG if error.too_big else CLOSE_POLICY
            await self._refuse(error.request_id, error, close)
            return False
        if request.method != "connect":
            refusal = GatewayError("invalid handshake: the first request must be connect")
            await self._refuse(request.id, refusal, CLOSE_POLICY)
            return False
        try:
            info = accept_connect(request.params, self.challenge, settings)
            self.info = await admit_device(
                info,
                pairings=self._gateway.pairings,
                workers=self._gateway.workers,
                settings=settings,
            )
        except GatewayError as error:
            await self._refuse(request.id, error, CLOSE_POLICY)
            return False
        self.send_response(request.id, self._gateway.hello_ok(self))
        log.info(
            "%s connected: client %s (%s), protocol %d, scopes %s",
            self.id,
            self.info.client_id,
            self.info.client_mode,
            self.info.protocol,
            ",".join(sorted(self.info.scopes)) or "-",
        )
        return True

    async def _refuse(self, request_id: str | None, error: GatewayError, code: int) -> None:
        log.info("%s refused: %s", self.id, error.message)
        self.send_error(request_id, error)
        await self._flush()
        self._closing = True
        await self._ws.close(code, _close_reason(error.message))

    async def _read_loop(self) -> None:
        settings = self._gateway.settings
        while not self._closing:
            data = await self._receive_text()
            if data is None:
                continue
            if not isinstance(data, str):
                self.send_error(
                    None, FrameError("invalid frame: binary messages are not supported")
                )
                continue
            try:
                request = parse_request(data, limit=settings.max_payload)
            except FrameError as error:
                self.send_error(error.request_id, error)
                continue
            if len(self._tasks) >= settings.max_inflight_requests:
                busy = GatewayError(
                    f"too many requests in flight (max {settings.max_inflight_requests})",
                    ErrorCode.UNAVAILABLE,
                    retryable=True,
                )
                self.send_error(request.id, busy)
                continue
            task = asyncio.create_task(self._dispatch(request))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _dispatch(self, request: Request) -> None:
        try:
            payload = await self._call(request)
        except GatewayError as error:
            log_failure(log, error, self._refused(request), client_level=logging.DEBUG)
            self.send_error(request.id, error, error.payload)
        except MethodError as error:  # a plugin method's refusal, with its protocol code
            log_failure(log, error, self._refused(request), client_level=logging.DEBUG)
            details: JSON = error.details
            if details is None or isinstance(details, dict):
                details = {"errorClass": type(error).__name__, **(details or {})}
            answer = GatewayError(error.message, ErrorCode(error.code), details=details)
            self.send_error(request.id, answer)
        except ClawlineError as error:
            log_failure(log, error, self._refused(request), client_level=logging.DEBUG)
            self.send_error(request.id, GatewayError.answering(error))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: %s failed", self.id, request.method)
            internal = {"errorType": "Internal"}  # a bug: nothing to say but that it happened
            self.send_error(
                request.id, GatewayError("internal error", ErrorCode.UNAVAILABLE, details=internal)
            )
        else:
            self.send_response(request.id, payload)

    def _refused(self, request: Request) -> str:
        return f"{self.id}: {one_line(request.method)} refused"

    async def _call(self, request: Request) -> JSON:
        assert self.info is not None
        if request.method == "connect":
            raise GatewayError("already connected")
        method = self._gateway.methods.get(request.method)
        if method.scope is not None and not has_scope(self.info.scopes, method.scope):
            raise AccessRefused(f"missing scope: {method.scope}")
        params: dict[str, Any]
        if method.schema is not None:
            params = check(method.name, request.params, method.schema)
        elif request.params is None:
            params = {}
        elif isinstance(request.params, dict):
            params = request.params
        else:
            raise GatewayError(f"invalid {method.name} params: params must be an object")
        call = Call(
            request_id=request.id,
            method=method.name,
            params=params,
            connection=self,
            gateway=self._gateway,
        )
        result = await method.handler(call)
        # The events this request caused reach the client before its response.
        await self._gateway.projection.caught_up()
        return result
