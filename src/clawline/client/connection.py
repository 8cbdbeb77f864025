"""``GatewayClient``: one operator connection to a gateway, with requests, events and resume.

A reader task owns the socket's incoming side: ``res`` frames are matched to waiting requests
by id, ``event`` frames go to the ``on_event`` callbacks and into a bounded queue (see
:mod:`clawline.client.event_queue`). The reader never waits for a consumer.

Reconnecting: :meth:`GatewayClient.resume` opens a new connection and asks the gateway for the
events this client missed (everything after :attr:`GatewayClient.last_seq` of boot
:attr:`GatewayClient.boot_id`). While that runs, the new connection's events are held back and
then released once, in ``seq`` order, without duplicates, so the caller sees exactly the events
it missed followed by the live ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from clawline.client.client_errors import (
    ConnectionLost,
    EventsNotRetainedError,
    Timeout,
    error_from_frame,
)
from clawline.client.event_queue import DEFAULT_EVENT_QUEUE, EventQueue, GatewayEvent
from clawline.client.handshake import (
    DEFAULT_SCOPES,
    ConnectOptions,
    Secret,
    normalize_url,
    open_connection,
)
from clawline.gateway.device import DeviceIdentity
from clawline.types import JSON, JSONObject

log = logging.getLogger("clawline.client")

EventCallback = Callable[[GatewayEvent], None]

_SUBSCRIBE = "sessions.subscribe"
_UNSUBSCRIBE = "sessions.unsubscribe"
_MESSAGES_SUBSCRIBE = "sessions.messages.subscribe"
_MESSAGES_UNSUBSCRIBE = "sessions.messages.unsubscribe"


@dataclass(frozen=True, slots=True)
class Resumed:
    """What :meth:`GatewayClient.resume` achieved.

    ``complete`` is True when every event missed while disconnected was delivered; False when
    the gateway no longer had them (or restarted): the caller must list again. ``missed`` counts
    the replayed events; ``reason`` is the gateway's explanation when incomplete."""

    complete: bool
    missed: int
    boot_id: str | None
    reason: str | None = None


class _Pending:
    __slots__ = ("frames", "method")

    def __init__(self, method: str) -> None:
        self.method = method
        self.frames: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()


def _close_reason(ws: ClientConnection) -> str:
    code = ws.close_code
    if code is None:
        return "the connection closed"
    reason = ws.close_reason
    return f"closed with code {code}" + (f" ({reason})" if reason else "")


class GatewayClient:
    """A connected operator client. Create one with :meth:`connect`; close it with
    :meth:`close` (or ``async with``)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        device: DeviceIdentity | None = None,
        client_id: str = "cli",
        client_mode: str = "cli",
        display_name: str | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        min_protocol: int = 3,
        max_protocol: int = 4,
        connect_timeout: float = 10.0,
        ignore_ticks: bool = True,
        event_queue_size: int = DEFAULT_EVENT_QUEUE,
    ) -> None:
        self.url = normalize_url(url)
        self.options = ConnectOptions(
            token=Secret(token),
            device=device,
            client_id=client_id,
            client_mode=client_mode,
            display_name=display_name,
            scopes=tuple(scopes),
            min_protocol=min_protocol,
            max_protocol=max_protocol,
        )
        self.connect_timeout = connect_timeout
        self.ignore_ticks = ignore_ticks
        self.hello: JSONObject = {}
        self.last_seq = 0
        """The highest event ``seq`` seen (ticks included)."""
        self.boot_id: str | None = None
        self.subscribed = False
        """Whether ``sessions.subscribe`` is in effect (re-issued by :meth:`resume`)."""
        self.message_keys: set[str] = set()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._id_prefix = secrets.token_hex(4)
        self._queue = EventQueue(event_queue_size)
        self._callbacks: list[EventCallback] = []
        self._held: list[GatewayEvent] | None = None
        self._closed = False
        self._lost: ConnectionLost | None = None
        self._disconnected = asyncio.Event()

    def __repr__(self) -> str:  # never shows the token
        return f"GatewayClient({self.url!r}, client_id={self.options.client_id!r})"

    # --- connecting ----------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        device: DeviceIdentity | None = None,
        client_id: str = "cli",
        client_mode: str = "cli",
        display_name: str | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        min_protocol: int = 3,
        max_protocol: int = 4,
        connect_timeout: float = 10.0,
        ignore_ticks: bool = True,
        event_queue_size: int = DEFAULT_EVENT_QUEUE,
    ) -> GatewayClient:
        """Connect and complete the handshake; raise :class:`ConnectError` when refused."""
        client = cls(
            url,
            token=token,
            device=device,
            client_id=client_id,
            client_mode=client_mode,
            display_name=display_name,
            scopes=scopes,
            min_protocol=min_protocol,
            max_protocol=max_protocol,
            connect_timeout=connect_timeout,
            ignore_ticks=ignore_ticks,
            event_queue_size=event_queue_size,
        )
        await client._open()
        snapshot = client.hello.get("snapshot")
        if isinstance(snapshot, dict) and isinstance(snapshot.get("stateVersion"), int):
            client.last_seq = snapshot["stateVersion"]
        return client

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _open(self) -> None:
        ws, hello = await open_connection(self.url, self.options, self.connect_timeout)
        self._ws = ws
        self.hello = hello
        server = hello.get("server")
        boot = server.get("bootId") if isinstance(server, dict) else None
        self.boot_id = boot if isinstance(boot, str) else None
        self._lost = None
        self._disconnected = asyncio.Event()
        self._reader = asyncio.create_task(self._read_loop(ws), name=f"clawline-client:{self.url}")

    # --- what the handshake established --------------------------------------------------

    @property
    def protocol(self) -> int | None:
        value = self.hello.get("protocol")
        return value if isinstance(value, int) else None

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes the gateway granted (may be fewer than requested)."""
        auth = self.hello.get("auth")
        granted = auth.get("scopes") if isinstance(auth, dict) else None
        return tuple(str(s) for s in granted) if isinstance(granted, list) else ()

    @property
    def methods(self) -> tuple[str, ...]:
        features = self.hello.get("features")
        names = features.get("methods") if isinstance(features, dict) else None
        return tuple(str(n) for n in names) if isinstance(names, list) else ()

    @property
    def events_supported(self) -> tuple[str, ...]:
        features = self.hello.get("features")
        names = features.get("events") if isinstance(features, dict) else None
        return tuple(str(n) for n in names) if isinstance(names, list) else ()

    @property
    def session_defaults(self) -> JSONObject:
        snapshot = self.hello.get("snapshot")
        defaults = snapshot.get("sessionDefaults") if isinstance(snapshot, dict) else None
        return defaults if isinstance(defaults, dict) else {}

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._lost is None and not self._closed

    @property
    def dropped_events(self) -> int:
        """Events dropped because the queue was full (oldest first)."""
        return self._queue.dropped

    # --- reading -------------------------------------------------------------------------

    async def _read_loop(self, ws: ClientConnection) -> None:
        failure: str | None = None
        try:
            async for raw in ws:
                try:
                    frame = orjson.loads(raw)
                except ValueError:
                    log.warning("ignoring a frame that is not JSON from %s", self.url)
                    continue
                if isinstance(frame, dict):
                    self._on_frame(frame)
        except ConnectionClosed:
            pass
        except Exception as error:  # a bug here must not leave requests waiting forever
            log.exception("reader of %s failed", self.url)
            failure = f"reader failed: {error}"
        finally:
            if self._ws is ws:
                self._connection_ended(
                    f"connection to {self.url} lost: {failure or _close_reason(ws)}"
                )

    def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "res":
            pending = self._pending.get(str(frame.get("id")))
            if pending is not None:
                pending.frames.put_nowait(frame)
        elif kind == "event":
            self._on_event(frame)

    def _on_event(self, frame: dict[str, Any]) -> None:
        name = frame.get("event")
        if not isinstance(name, str) or name == "connect.challenge":
            return
        raw_seq = frame.get("seq")
        seq = raw_seq if isinstance(raw_seq, int) and not isinstance(raw_seq, bool) else None
        event = GatewayEvent(name, frame.get("payload"), seq)
        if self._held is not None:
            self._held.append(event)
            return
        if seq is not None and seq > self.last_seq:
            self.last_seq = seq
        self._deliver(event)

    def _deliver(self, event: GatewayEvent) -> None:
        if event.name == "tick" and self.ignore_ticks:
            return
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:
                log.exception("event callback failed for %s", event.name)
        self._queue.put(event)

    def _connection_ended(self, message: str, *, end_events: bool = True) -> None:
        if self._lost is not None:
            return
        lost = ConnectionLost(message)
        self._lost = lost
        for pending in self._pending.values():
            pending.frames.put_nowait(lost)
        if end_events and not self._closed:
            log.info("%s", message)
            self._queue.end(lost)
        self._disconnected.set()

    # --- events --------------------------------------------------------------------------

    def on_event(self, callback: EventCallback) -> Callable[[], None]:
        """Call ``callback`` (on the reader task; it must not block) for every event; returns
        a function that removes it."""
        self._callbacks.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return remove

    async def events(self) -> AsyncIterator[GatewayEvent]:
        """Events in arrival order (``tick`` left out unless ``ignore_ticks=False``). Ends when
        the client is closed; raises :class:`ConnectionLost` when the connection drops (after
        the events received before), after which :meth:`resume` and iterate again. Meant for
        one consumer."""
        while True:
            try:
                yield await self._queue.get()
            except StopAsyncIteration:
                return

    def next_event_nowait(self) -> GatewayEvent | None:
        try:
            return self._queue.get_nowait()
        except StopAsyncIteration:
            return None

    async def wait_disconnected(self) -> ConnectionLost | None:
        """Wait until the connection ends; the error describing the loss (``None`` if closed)."""
        await self._disconnected.wait()
        return None if self._closed else self._lost

    # --- requests ------------------------------------------------------------------------

    async def _send(self, method: str, params: JSON) -> tuple[str, _Pending]:
        if self._closed:
            raise ConnectionLost(f"{method}: the client is closed")
        if self._lost is not None or self._ws is None:
            raise ConnectionLost(f"{method}: not connected ({self._lost or 'never connected'})")
        request_id = f"{self._id_prefix}-{next(self._ids)}"
        pending = _Pending(method)
        self._pending[request_id] = pending
        frame: JSONObject = {"type": "req", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        try:
            await self._ws.send(json.dumps(frame))
        except ConnectionClosed:
            self._pending.pop(request_id, None)
            raise ConnectionLost(f"{method}: the connection closed") from None
        return request_id, pending

    @staticmethod
    async def _next_frame(pending: _Pending) -> dict[str, Any]:
        item = await pending.frames.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def _track(self, method: str, params: JSON) -> None:
        if method == _SUBSCRIBE:
            self.subscribed = True
        elif method == _UNSUBSCRIBE:
            self.subscribed = False
        elif isinstance(params, dict) and isinstance(params.get("key"), str):
            if method == _MESSAGES_SUBSCRIBE:
                self.message_keys.add(params["key"])
            elif method == _MESSAGES_UNSUBSCRIBE:
                self.message_keys.discard(params["key"])

    async def request(self, method: str, params: JSON = None, *, timeout: float = 30.0) -> JSON:
        """Send one request and return its payload (``None`` when the answer has none).

        Raises :class:`GatewayRequestError` for an ``ok:false`` answer, :class:`Timeout`,
        or :class:`ConnectionLost`."""
        request_id, pending = await self._send(method, params)
        try:
            async with asyncio.timeout(timeout):
                frame = await self._next_frame(pending)
        except TimeoutError:
            raise Timeout(f"{method}: no answer within {timeout:g}s") from None
        finally:
            self._pending.pop(request_id, None)
        if frame.get("ok") is not True:
            raise error_from_frame(method, frame)
        self._track(method, params)
        return frame.get("payload")

    async def request_final(
        self, method: str, params: JSON = None, *, timeout: float = 120.0
    ) -> tuple[JSON, JSON]:
        """For methods that answer twice with one id (``agent``): ``(ack, final)`` payloads.

        The first answer is an acknowledgement when its payload has ``status: "accepted"``;
        a method that answers once (e.g. a replayed idempotent result) gives ``(None, final)``.
        A failed final answer raises :class:`GatewayRequestError` with its ``payload``."""
        request_id, pending = await self._send(method, params)
        ack: JSON = None
        try:
            async with asyncio.timeout(timeout):
                frame = await self._next_frame(pending)
                payload = frame.get("payload")
                if (
                    frame.get("ok") is True
                    and isinstance(payload, dict)
                    and payload.get("status") == "accepted"
                ):
                    ack = payload
                    frame = await self._next_frame(pending)
        except TimeoutError:
            stage = "final answer" if ack is not None else "answer"
            raise Timeout(f"{method}: no {stage} within {timeout:g}s") from None
        finally:
            self._pending.pop(request_id, None)
        if frame.get("ok") is not True:
            raise error_from_frame(method, frame)
        return ack, frame.get("payload")

    # --- resume and close ----------------------------------------------------------------

    async def _drop_connection(self) -> None:
        ws, reader = self._ws, self._reader
        if ws is None:
            return
        self._connection_ended(f"connection to {self.url} closed by the client", end_events=False)
        self._ws = None
        await ws.close()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def resume(self, *, timeout: float = 30.0) -> Resumed:
        """Reconnect and deliver the events missed since :attr:`last_seq`, then live ones.

        Restores the subscriptions (message streams first, then ``sessions.subscribe
        {afterSeq, bootId}``, which replays) or, without a sessions subscription, asks
        ``events.replay {afterSeq, bootId}``. The replay selects by every restored
        subscription at once. When the gateway no longer has the missed events, or restarted,
        the result's ``complete`` is False: subscriptions are restored but the caller must list
        again. Raises :class:`ConnectError` when the gateway cannot be reached (try again
        later; :attr:`last_seq` is kept)."""
        if self._closed:
            raise ConnectionLost("resume: the client is closed")
        after, old_boot = self.last_seq, self.boot_id
        subscribed, message_keys = self.subscribed, sorted(self.message_keys)
        await self._drop_connection()
        self._held = []
        complete, reason = True, None
        try:
            await self._open()
            self._queue.discard_ends()
            for key in message_keys:
                await self.request(_MESSAGES_SUBSCRIBE, {"key": key}, timeout=timeout)
            replay: JSONObject = {"afterSeq": after}
            if old_boot is not None:
                replay["bootId"] = old_boot
            if old_boot is not None and self.boot_id is not None and old_boot != self.boot_id:
                complete = False
                reason = f"the gateway restarted (boot {old_boot} -> {self.boot_id})"
            else:
                try:
                    method = _SUBSCRIBE if subscribed else "events.replay"
                    await self.request(method, replay, timeout=timeout)
                except EventsNotRetainedError as error:
                    complete, reason = False, error.message
            if not complete and subscribed:
                await self.request(_SUBSCRIBE, {}, timeout=timeout)
        except BaseException:
            self.last_seq = after  # a later resume asks for the same events again
            self._held = None
            raise
        held, self._held = self._held, None
        missed = self._release(held, after if complete else self._live_from(after))
        return Resumed(
            complete=complete,
            missed=missed if complete else 0,
            boot_id=self.boot_id,
            reason=reason,
        )

    def _live_from(self, default: int) -> int:
        """The ``seq`` the current connection's live stream starts after."""
        snapshot = self.hello.get("snapshot")
        value = snapshot.get("stateVersion") if isinstance(snapshot, dict) else None
        return value if isinstance(value, int) else default

    def _release(self, held: list[GatewayEvent], after: int) -> int:
        """Deliver held events: numbered ones after ``after`` once each in ``seq`` order, then
        unnumbered ones. Returns how many were replayed (not live on this connection)."""
        self.last_seq = after
        live_from = self._live_from(after)
        numbered = {e.seq: e for e in held if e.seq is not None and e.seq > after}
        missed = 0
        for seq in sorted(numbered):
            event = numbered[seq]
            if seq <= live_from:
                missed += 1
                event = dataclasses.replace(event, replayed=True)
            self.last_seq = seq
            self._deliver(event)
        for event in held:
            if event.seq is None:
                self._deliver(event)
        return missed

    async def close(self) -> None:
        """Close the connection; :meth:`events` ends, waiting requests get ConnectionLost."""
        if self._closed:
            return
        self._closed = True
        for pending in self._pending.values():
            pending.frames.put_nowait(ConnectionLost("the client was closed"))
        await self._drop_connection()
        self._queue.end(None)
        self._disconnected.set()
