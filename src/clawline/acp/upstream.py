"""The bridge's gateway: one :class:`GatewayClient`, requests, and run events routed by run id.

Which gateway (:func:`open_upstream`): ``--url`` (else ``CLAWLINE_GATEWAY_URL``, else
``[gateway] url``); without one, the gateway that serves the state directory (its
``gateway.json``); when none answers there, a gateway started inside this process on
``127.0.0.1:0`` with the state directory's runtime (store, run manager, dispatcher,
recovery). The bridge always talks to it through the gateway protocol.

``chat`` and ``agent`` events reach every operator connection without a subscription; the
client's event callback hands each one to the turn that watches its ``runId``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from clawline import keys
from clawline.acp.rpc_errors import from_gateway
from clawline.client import GatewayClient, GatewayEvent, load_or_create_identity
from clawline.client.client_errors import ClientError, ConnectError
from clawline.client.target import configured_gateway, resolve_gateway
from clawline.config import Settings, agents_config
from clawline.errors import NotFound

log = logging.getLogger("clawline.acp")

RUN_EVENTS = frozenset({"chat", "agent"})
CONNECT_TIMEOUT_S = 10.0
MAX_GATEWAY_CALLS = 32
"""Gateway calls in flight at once; further calls wait for one to finish. The gateway answers
a connection's requests beyond its ``max_inflight_requests`` (64 by default) with ``too many
requests in flight``, so the bridge stays well below that instead of passing the refusal on."""

RunListener = Callable[[GatewayEvent | None], None]
"""Gets each event of one run; ``None`` when the gateway connection is lost."""


class Upstream:
    def __init__(self, client: GatewayClient) -> None:
        self.client = client
        self._runs: dict[str, RunListener] = {}
        self._reconnect = asyncio.Lock()
        self._calls = asyncio.Semaphore(MAX_GATEWAY_CALLS)
        client.on_event(self._on_event)
        self._watch = asyncio.ensure_future(self._watch_connection(client))
        defaults = client.session_defaults
        agent = defaults.get("defaultAgentId")
        main = defaults.get("mainKey")
        self.default_agent_id = agent if isinstance(agent, str) else keys.DEFAULT_AGENT_ID
        self.main_key = main if isinstance(main, str) else keys.DEFAULT_MAIN_KEY

    def canonical(self, raw: str) -> str:
        """The stored form of a key (``main`` → ``agent:<default>:main``); raises
        :class:`clawline.errors.InvalidSessionKey`."""
        return keys.canonicalize(
            raw, default_agent_id=self.default_agent_id, main_key=self.main_key
        )

    async def request(self, method: str, params: Mapping[str, Any], timeout: float = 60.0) -> Any:
        """The payload of one gateway call (queued while :data:`MAX_GATEWAY_CALLS` are in
        flight; ``timeout`` starts when it is sent); refusals become JSON-RPC errors
        (:func:`clawline.acp.rpc_errors.from_gateway`)."""
        try:
            return await self._call(method, params, timeout)
        except ClientError as error:
            raise from_gateway(error) from None

    async def request_or_none(
        self, method: str, params: Mapping[str, Any], timeout: float = 60.0
    ) -> Any | None:
        """:meth:`request`, but ``None`` when the gateway answers that what the call names does
        not exist (its error's category, ``details.errorType``, is ``NotFound``)."""
        try:
            return await self._call(method, params, timeout)
        except ClientError as error:
            if error.category is NotFound:
                return None
            raise from_gateway(error) from None

    async def _call(self, method: str, params: Mapping[str, Any], timeout: float) -> Any:
        async with self._calls:
            if not self.client.connected:
                await self._resume()
            return await self.client.request(method, dict(params), timeout=timeout)

    def watch(self, run_id: str, listener: RunListener) -> Callable[[], None]:
        self._runs[run_id] = listener

        def stop() -> None:
            if self._runs.get(run_id) is listener:
                del self._runs[run_id]

        return stop

    def _on_event(self, event: GatewayEvent) -> None:
        if event.name not in RUN_EVENTS or not isinstance(event.payload, dict):
            return
        listener = self._runs.get(str(event.payload.get("runId")))
        if listener is not None:
            listener(event)

    async def _watch_connection(self, client: GatewayClient) -> None:
        """When the connection drops, every turn in flight fails (its listener gets ``None``);
        the next request reconnects (:meth:`GatewayClient.resume`)."""
        while True:
            lost = await client.wait_disconnected()
            if lost is None:
                return  # closed
            log.warning("%s", lost)
            for listener in list(self._runs.values()):
                listener(None)
            self._runs.clear()
            while not client.connected:
                await asyncio.sleep(0.2)

    async def _resume(self) -> None:
        async with self._reconnect:
            if not self.client.connected:
                await self.client.resume(timeout=CONNECT_TIMEOUT_S)

    async def close(self) -> None:
        self._watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watch
        with contextlib.suppress(ClientError):
            await self.client.close()


async def _connect(url: str, token: str | None, settings: Settings) -> GatewayClient:
    device = load_or_create_identity(settings.state_dir)
    return await GatewayClient.connect(
        url,
        token=token,
        device=device,
        client_id="cli",
        client_mode="cli",
        display_name="clawline acp",
        connect_timeout=CONNECT_TIMEOUT_S,
    )


@contextlib.asynccontextmanager
async def _in_process_gateway(
    settings: Settings, env: Mapping[str, str], token: str | None
) -> AsyncIterator[tuple[str, str | None]]:
    """The state directory's gateway, served from this process on ``127.0.0.1:0``: its URL
    and token."""
    from clawline.gateway.assembly import build_gateway
    from clawline.gateway.options import resolve_gateway_settings
    from clawline.gateway.server import bind_socket, serve
    from clawline.runtime import Runtime

    gateway_settings = resolve_gateway_settings(
        settings, port=0, bind="loopback", token=token, env=env
    )
    agents_config(settings.config, settings.state_dir)
    runtime = Runtime.open(settings)
    sock = bind_socket("127.0.0.1", 0)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    def on_ready(url: str) -> None:
        if not ready.done():
            ready.set_result(url)

    server = asyncio.ensure_future(
        serve(
            build_gateway(runtime, gateway_settings),
            sock=sock,
            on_ready=on_ready,
            stop=stop,
            install_signal_handlers=False,
        )
    )
    try:
        waiters: set[asyncio.Future[object]] = {server, ready}  # type: ignore[arg-type]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            server.result()
            raise ConnectError("the in-process gateway stopped before it was ready")
        log.info("started an in-process gateway on %s", ready.result())
        yield ready.result(), gateway_settings.token
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await server
        runtime.close()


@contextlib.asynccontextmanager
async def open_upstream(
    settings: Settings, env: Mapping[str, str], *, url: str | None, token: str | None
) -> AsyncIterator[Upstream]:
    async with contextlib.AsyncExitStack() as stack:
        target = configured_gateway(settings, env, url=url, token=token)
        client: GatewayClient | None = None
        if target is None:
            local = resolve_gateway(settings, env, token=token)
            if local.source == "runtime":
                try:
                    client = await _connect(local.url, local.token, settings)
                except ConnectError as error:
                    log.info("the state directory's gateway did not answer: %s", error)
            if client is None:
                started = _in_process_gateway(settings, env, token)
                gateway_url, gateway_token = await stack.enter_async_context(started)
                client = await _connect(gateway_url, gateway_token, settings)
        else:
            client = await _connect(target.url, target.token, settings)
        upstream = Upstream(client)
        stack.push_async_callback(upstream.close)
        yield upstream
