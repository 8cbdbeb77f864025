"""``clawline gateway …``: run the gateway, or call one of its methods.

``gateway run`` prints two lines to stdout, in one write, once it accepts connections::

    clawline gateway listening on ws://127.0.0.1:18790
    web chat: http://127.0.0.1:18790/

(scripts read the URL from the first line, whose form does not change; the second is the web
chat's address, on loopback for a LAN bind) and logs to stderr (never the token). SIGTERM or
SIGINT stop it gracefully (exit 0). One gateway serves a store: while another holds it,
``gateway run`` exits 1 with one line, ``error: this store is in use by another gateway: pid …
on … since … (ws://…)``; a gateway that loses the store's instance lock stops and exits 1
(``clawline.store.instance_lock``).

``gateway call METHOD`` prints the method's payload as JSON; a refusal prints
``error: <CODE> <message>`` on stderr and exits 1 (bad ``--params`` exits 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from clawline.cli.root import CliState, CommandFailed, InputRefused, pass_state
from clawline.client.client_errors import ClientError
from clawline.client.target import GatewayTarget, resolve_gateway
from clawline.config import agents_config
from clawline.types import JSON

if TYPE_CHECKING:
    import socket

    from clawline.gateway.app import Gateway
    from clawline.gateway.device import DeviceIdentity

log = logging.getLogger("clawline.gateway")

READY_LINE = "clawline gateway listening on {url}"
WEB_CHAT_LINE = "web chat: {url}/"
FINAL_METHODS = frozenset({"agent"})
"""Methods that answer twice with one id; ``gateway call`` prints the final answer."""


@click.group("gateway")
def gateway() -> None:
    """Run the gateway, or call one of its methods."""


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("clawline")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


@gateway.command("run")
@click.option(
    "--port", type=click.IntRange(0, 65535), help="TCP port (default 18790; 0: any free port)."
)
@click.option("--bind", type=click.Choice(["loopback", "lan"]), help="loopback (default) or lan.")
@click.option("--auth", type=click.Choice(["token", "none"]), help="Client authentication.")
@click.option("--token", metavar="T", help="Gateway token (prefer CLAWLINE_GATEWAY_TOKEN).")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
@pass_state
def run_gateway(
    state: CliState,
    port: int | None,
    bind: str | None,
    auth: str | None,
    token: str | None,
    log_level: str,
) -> None:
    """Serve the gateway until SIGTERM or SIGINT."""
    from clawline.gateway.assembly import build_gateway
    from clawline.gateway.options import resolve_gateway_settings
    from clawline.gateway.server import bind_socket
    from clawline.runtime import Runtime

    settings = state.settings
    gateway_settings = resolve_gateway_settings(
        settings, port=port, bind=bind, auth=auth, token=token, env=state.environment
    )
    agents_config(
        settings.config, settings.state_dir
    )  # a bad agents/models/tools section stops start-up
    _configure_logging(log_level)
    try:
        sock = bind_socket(gateway_settings.host, gateway_settings.port)
    except OSError as error:
        where = f"{gateway_settings.host}:{gateway_settings.port}"
        raise CommandFailed(f"cannot listen on {where}: {error.strerror or error}") from None
    try:
        runtime = Runtime.open(settings, clock=state.clock)
    except BaseException:
        sock.close()
        raise
    try:
        asyncio.run(_serve(build_gateway(runtime, gateway_settings), sock))
    finally:
        runtime.close()
    log.info("stopped")


async def _serve(gateway_app: Gateway, sock: socket.socket) -> None:
    from clawline.gateway.server import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, _stopper(stop, signum))

    def ready(url: str) -> None:
        # One write: both lines reach a reader together, also one that stops after the first.
        click.echo(f"{READY_LINE.format(url=url)}\n{WEB_CHAT_LINE.format(url=_web_chat_url(url))}")
        sys.stdout.flush()

    try:
        await serve(
            gateway_app,
            sock=sock,
            on_ready=ready,
            stop=stop,
            install_signal_handlers=False,
        )
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


def _web_chat_url(ws_url: str) -> str:
    """The web chat's address for the gateway's ``ws://host:port``; a wildcard bind is opened
    on loopback."""
    return "http" + ws_url.removeprefix("ws").replace("://0.0.0.0:", "://127.0.0.1:")


def _stopper(stop: asyncio.Event, signum: int) -> Callable[[], None]:
    def handle() -> None:
        if not stop.is_set():
            log.info("%s received: shutting down", signal.Signals(signum).name)
        stop.set()

    return handle


def _parse_params(text: str | None) -> JSON:
    if text is None:
        return None
    try:
        value: JSON = json.loads(text)
    except ValueError as error:
        raise InputRefused(f"invalid --params: not JSON ({error})") from None
    if not isinstance(value, dict):
        raise InputRefused("invalid --params: must be a JSON object")
    return value


@gateway.command("call")
@click.argument("method")
@click.option("--params", "params_text", metavar="JSON", help="Params as a JSON object.")
@click.option("--url", metavar="URL", help="Gateway URL (else CLAWLINE_GATEWAY_URL, config).")
@click.option("--token", metavar="T", help="Gateway token (else CLAWLINE_GATEWAY_TOKEN, config).")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds to wait for the answer (for agent: the final answer).",
)
@pass_state
def call_method(
    state: CliState,
    method: str,
    params_text: str | None,
    url: str | None,
    token: str | None,
    timeout: float,
) -> None:
    """Call METHOD and print its payload as JSON."""
    params = _parse_params(params_text)
    payload = call_gateway(state, method, params, url=url, token=token, timeout=timeout)
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def call_gateway(
    state: CliState,
    method: str,
    params: JSON,
    *,
    url: str | None = None,
    token: str | None = None,
    timeout: float = 30.0,
) -> JSON:
    """One call to the gateway this state directory reaches; a refusal is a
    :class:`CommandFailed` line."""
    from clawline.client.identity import load_or_create_identity

    settings = state.settings
    target = resolve_gateway(settings, state.environment, url=url, token=token)
    device = load_or_create_identity(settings.state_dir)
    try:
        return asyncio.run(_call(target, device, method, params, timeout))
    except ClientError as error:
        raise CommandFailed(f"{error.code} {error.message}") from None


async def _call(
    target: GatewayTarget, device: DeviceIdentity, method: str, params: JSON, timeout: float
) -> JSON:
    from clawline.client.connection import GatewayClient

    client = await GatewayClient.connect(
        target.url, token=target.token, device=device, connect_timeout=min(timeout, 10.0)
    )
    try:
        if method in FINAL_METHODS:
            _, final = await client.request_final(method, params, timeout=timeout)
            return final
        return await client.request(method, params, timeout=timeout)
    finally:
        with contextlib.suppress(ClientError):
            await client.close()
