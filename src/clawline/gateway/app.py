"""The gateway application: one port serving the WebSocket protocol and HTTP.

- WebSocket at ``/`` and ``/ws`` (OpenClaw clients dial one or the other);
- ``/health``, ``/healthz``, ``/readyz`` → ``{"ok":true,"status":"live"}``;
- ``/`` over plain HTTP → the web chat (``clawline.web``; static files under ``/static/``).

Every request first passes the Origin and Host checks of :mod:`clawline.gateway.origin`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from clawline import __version__
from clawline.gateway.bus import Audience, EventBus
from clawline.gateway.connection import Connection
from clawline.gateway.origin import OriginHostCheck
from clawline.gateway.pairing_watch import watch_pairings
from clawline.gateway.projection import WireProjection
from clawline.gateway.registry import MethodRegistry
from clawline.gateway.settings import GatewaySettings
from clawline.runtime import Runtime
from clawline.types import JSONObject
from clawline.web.http import web_routes

__all__ = ["EVENTS", "Gateway", "create_app"]

log = logging.getLogger("clawline.gateway")

EVENTS: tuple[str, ...] = (
    "connect.challenge",
    "tick",
    "shutdown",
    "sessions.changed",
    "session.message",
    "chat",
    "agent",
    "session.update",
)
"""The events this gateway really emits, as listed in ``hello-ok.features.events``."""


class Gateway:
    """State of a running gateway: its runtime, methods, connected clients, and the event bus
    its projection of the runtime's domain events feeds."""

    def __init__(
        self,
        runtime: Runtime,
        settings: GatewaySettings,
        methods: MethodRegistry | None = None,
    ) -> None:
        self.runtime = runtime
        self.settings = settings
        self.bus = EventBus(clock=runtime.clock)
        """The numbered, replayable stream of frames the connections receive."""
        self.projection = WireProjection(
            bus=self.bus,
            store=runtime.store,
            workers=runtime.workers,
            clock=runtime.clock,
            is_active=runtime.runs.has_active_run,
        )
        if methods is None:
            methods = MethodRegistry()  # clawline's own come from its built-in plugin
            runtime.plugins.register_gateway_methods(methods)
        self.methods = methods
        self.connections: dict[str, Connection] = {}
        self.started_at = runtime.clock.now_ms()
        self.ready = False
        self.url: str | None = None
        """``ws://host:port`` once serving (set by :func:`clawline.gateway.server.serve`)."""
        self._on_shutdown: list[Callable[[], Awaitable[object]]] = []

    def on_shutdown(self, callback: Callable[[], Awaitable[object]]) -> None:
        """Await ``callback`` when the gateway stops (before runs are ended), newest first."""
        self._on_shutdown.append(callback)

    async def run_shutdown_callbacks(self) -> None:
        while self._on_shutdown:
            callback = self._on_shutdown.pop()
            try:
                await callback()
            except Exception:
                log.exception("a shutdown callback failed")

    def attach(self, connection: Connection) -> None:
        self.connections[connection.id] = connection
        self.bus.attach(connection)

    def detach(self, connection: Connection) -> None:
        self.connections.pop(connection.id, None)
        self.bus.detach(connection)

    def features(self) -> JSONObject:
        return {"methods": self.methods.names(), "events": list(EVENTS)}

    def snapshot(self) -> JSONObject:
        settings = self.runtime.settings
        return {
            "sessionDefaults": {
                "modelProvider": "offline",
                "model": "offline",
                "contextTokens": None,
                "defaultAgentId": settings.default_agent_id,
                "mainKey": settings.main_key,
            },
            "presence": [],
            "health": {"ok": True, "status": "live"},
            "stateVersion": self.bus.last_seq,
            "uptimeMs": self.runtime.clock.now_ms() - self.started_at,
        }

    def hello_ok(self, connection: Connection) -> JSONObject:
        info = connection.info
        assert info is not None
        bus = self.bus
        auth: JSONObject = {
            "method": info.auth_method,
            "role": info.role,
            "scopes": sorted(info.scopes),
        }
        if info.device_id is not None:
            auth["deviceId"] = info.device_id
        return {
            "type": "hello-ok",
            "protocol": info.protocol,
            "server": {"version": __version__, "connId": connection.id, "bootId": bus.boot_id},
            "features": self.features(),
            "snapshot": self.snapshot(),
            "auth": auth,
            "policy": {
                "maxPayload": self.settings.max_payload,
                "maxBufferedBytes": self.settings.max_buffered_bytes,
                "tickIntervalMs": self.settings.tick_interval_ms,
            },
        }

    async def project(self) -> None:
        """Project the runtime's domain events onto :attr:`bus` until cancelled
        (:func:`clawline.gateway.server.serve` runs it for the gateway's whole life)."""
        unsubscribe = self.runtime.events.subscribe(self.projection)
        try:
            await self.projection.run()
        finally:
            unsubscribe()
            self.projection.close()

    async def tick_loop(self) -> None:
        interval = self.settings.tick_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            self.bus.publish(
                "tick",
                {"ts": self.runtime.clock.now_ms()},
                audience=Audience.OPERATORS,
                drop_if_slow=True,
                retain=False,
            )


def create_app(gateway: Gateway) -> Starlette:
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "status": "live"})

    async def ready(request: Request) -> JSONResponse:
        if not gateway.ready:
            return JSONResponse({"ok": False, "status": "starting"}, status_code=503)
        return JSONResponse({"ok": True, "status": "live"})

    async def websocket(websocket: WebSocket) -> None:
        await Connection(websocket, gateway).serve()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        # The runtime has started by now (serve(): instance lock, plugins, recovery, the
        # announce dispatcher); this is what the gateway itself runs while it serves.
        ticker = asyncio.create_task(gateway.tick_loop())
        pairing_watch = None
        if gateway.settings.require_device:  # revocation reaches open connections
            pairing_watch = asyncio.create_task(watch_pairings(gateway))
        gateway.ready = True
        try:
            yield {}
        finally:
            gateway.ready = False
            gateway.bus.publish("shutdown", {"reason": "gateway stopping"}, retain=False)
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            if pairing_watch is not None:
                pairing_watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pairing_watch
            await gateway.run_shutdown_callbacks()

    routes = [
        *web_routes(),
        Route("/health", health),
        Route("/healthz", health),
        Route("/readyz", ready),
        WebSocketRoute("/", websocket),
        WebSocketRoute("/ws", websocket),
    ]
    check = Middleware(
        OriginHostCheck,
        allowed_origins=gateway.settings.allowed_origins,
        allowed_hosts=gateway.settings.allowed_hosts,
    )
    return Starlette(routes=routes, lifespan=lifespan, middleware=[check])
