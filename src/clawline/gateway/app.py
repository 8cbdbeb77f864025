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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from clawline import __version__
from clawline.gateway.bus import Audience, EventBus
from clawline.gateway.connection import Connection
from clawline.gateway.options import GatewaySettings
from clawline.gateway.origin import OriginHostCheck
from clawline.gateway.pairing_watch import recheck_pairings
from clawline.gateway.projection import WireProjection
from clawline.gateway.registry import MethodRegistry
from clawline.gateway.telegram_endpoint import telegram_routes
from clawline.gateway.webhook_endpoint import webhook_routes
from clawline.store.workers import StoreWorkers
from clawline.types import JSONObject
from clawline.web.http import web_routes

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.background import Background
    from clawline.channels.inbox import ChannelInbox
    from clawline.channels.registry import ChannelRegistry
    from clawline.channels.thread_bindings.living import ThreadBindings
    from clawline.clock import Clock
    from clawline.events import DomainEvents
    from clawline.instances import InstanceRegistration
    from clawline.pairing.registry import PairingRegistry
    from clawline.plugins.manager import PluginManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.sessions.listing_rows import RowCache
    from clawline.store.base import Store
    from clawline.tasks.registry import TaskRegistry

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
    """State of a running gateway: the parts its methods use, its method table, the connected
    clients, and the event bus its projection of the domain events feeds.

    The creator hands every part in (:func:`clawline.gateway.assembly.build_gateway` unpacks a
    runtime into them); methods reach them as ``call.gateway.<part>``. Building a gateway
    starts nothing: :func:`clawline.gateway.server.serve` awaits :attr:`start_parts`, serves,
    then awaits :attr:`stop_parts`.
    """

    def __init__(
        self,
        *,
        settings: GatewaySettings,
        methods: MethodRegistry,
        catalog: SessionCatalog,
        runs: RunManager,
        tasks: TaskRegistry,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        background: Background,
        events: DomainEvents,
        plugins: PluginManager,
        thread_bindings: ThreadBindings,
        inbox: ChannelInbox,
        channels: ChannelRegistry,
        row_cache: RowCache,
        pairings: PairingRegistry,
        instance: InstanceRegistration,
        state_dir: Path,
        start_parts: Callable[[], Awaitable[None]],
        stop_parts: Callable[[], Awaitable[None]],
    ) -> None:
        self.settings = settings
        self.methods = methods
        """Method name → handler; built-ins and plugins' methods alike (``hello-ok`` lists it)."""
        self.catalog = catalog
        self.runs = runs
        self.tasks = tasks
        self.store = store
        """For reads (listing rows, transcripts, ``path``); writes go through the catalog."""
        self.workers = workers
        """Blocking store work: ``await gateway.workers.run(fn, ...)``."""
        self.clock = clock
        self.background = background
        """The runtime's task group: the gateway's tick and pairing watch run in it."""
        self.events = events
        """The domain events :attr:`projection` turns into frames."""
        self.plugins = plugins
        """For the lifecycle hooks a method fires (``session_end``)."""
        self.thread_bindings = thread_bindings
        """A deleted session's bindings end (``sessions.delete``)."""
        self.inbox = inbox
        """Inbound channel messages (the webhook channel's endpoint hands them on)."""
        self.channels = channels
        self.row_cache = row_cache
        self.pairings = pairings
        """Device pairings: the handshake's admission and the revocation watch."""
        self.instance = instance
        """This process among the store's gateway instances (the URL is recorded once
        serving)."""
        self.state_dir = state_dir
        """Where ``gateway.json`` (this gateway's URL, for local clients) is written."""
        self.start_parts = start_parts
        """Bring up what the gateway serves (the store's instance lock, the plugins' startup,
        recovery, the background loops); awaited by ``serve()`` before it listens."""
        self.stop_parts = stop_parts
        """Take it down again (runs ended, loops stopped, the lock released); awaited by
        ``serve()`` after it served."""
        event_log = store.event_log()
        self.event_workers = (
            StoreWorkers(None, threads=2, name="clawline-events") if event_log else None
        )
        """The event log's own threads (its writer and its reader), so the stream never waits
        behind the store's work; closed by ``serve()`` once the stream has stopped."""
        self.bus = EventBus(
            clock=clock,
            event_log=event_log,
            instance_id=instance.instance_id,
            workers=self.event_workers,
        )
        """The numbered, replayable stream of frames the connections receive; the stream of
        every gateway instance on the store when it has an event log (PostgreSQL)."""
        self.projection = WireProjection(
            bus=self.bus, store=store, workers=workers, clock=clock, is_active=runs.has_active_run
        )
        self.connections: dict[str, Connection] = {}
        self.started_at = clock.now_ms()
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
        return {
            "sessionDefaults": {
                "modelProvider": "offline",
                "model": "offline",
                "contextTokens": None,
                "defaultAgentId": self.catalog.default_agent_id,
                "mainKey": self.catalog.main_key,
            },
            "presence": [],
            "health": {"ok": True, "status": "live"},
            "stateVersion": self.bus.last_seq,
            "uptimeMs": self.clock.now_ms() - self.started_at,
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
            "server": {
                "version": __version__,
                "connId": connection.id,
                "bootId": bus.boot_id,
                "instanceId": self.instance.instance_id,
            },
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
        """Project the domain events onto :attr:`bus` until cancelled
        (:func:`clawline.gateway.server.serve` runs it for the gateway's whole life)."""
        unsubscribe = self.events.subscribe(self.projection)
        try:
            await self.projection.run()
        finally:
            unsubscribe()
            self.projection.close()

    async def tick(self) -> None:
        """One ``tick`` event to every operator (every ``tickIntervalMs``)."""
        self.bus.publish(
            "tick",
            {"ts": self.clock.now_ms()},
            audience=Audience.OPERATORS,
            drop_if_slow=True,
            retain=False,
        )

    async def prune_events(self) -> None:
        """Delete the shared event stream's events past its retention (``event_retention_s``,
        the newest ``event_retention_min_events`` kept however old)."""
        await self.bus.prune(
            retention_ms=int(self.settings.event_retention_s * 1000),
            keep_at_least=self.settings.event_retention_min_events,
        )

    async def recheck_pairings(self) -> None:
        """Apply the stored pairings to the open connections (``require_device`` only)."""
        await recheck_pairings(
            list(self.connections.values()), pairings=self.pairings, workers=self.workers
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
        # The parts have started by now (serve() awaited start_parts: the instance lock, the
        # plugins, recovery, the announce dispatcher); this is what the gateway itself runs
        # while it serves.
        settings = gateway.settings
        loops = [
            gateway.background.every(
                settings.tick_interval_ms / 1000, gateway.tick, name="gateway tick"
            )
        ]
        if settings.require_device:  # revocation reaches open connections
            loops.append(
                gateway.background.every(
                    settings.pairing_check_interval_s,
                    gateway.recheck_pairings,
                    name="pairing watch",
                )
            )
        if gateway.bus.shared:
            loops.append(
                gateway.background.every(
                    settings.event_prune_interval_s, gateway.prune_events, name="event log prune"
                )
            )
        gateway.ready = True
        try:
            yield {}
        finally:
            gateway.ready = False
            gateway.bus.publish("shutdown", {"reason": "gateway stopping"}, retain=False)
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await gateway.run_shutdown_callbacks()

    routes = [
        *web_routes(),
        Route("/health", health),
        Route("/healthz", health),
        Route("/readyz", ready),
        WebSocketRoute("/", websocket),
        WebSocketRoute("/ws", websocket),
        *webhook_routes(gateway.inbox, gateway.channels),
        *telegram_routes(gateway.channels),
    ]
    check = Middleware(
        OriginHostCheck,
        allowed_origins=gateway.settings.allowed_origins,
        allowed_hosts=gateway.settings.allowed_hosts,
    )
    return Starlette(routes=routes, lifespan=lifespan, middleware=[check])
