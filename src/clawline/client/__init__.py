"""``clawline.client``: an async Python client for the gateway protocol (docs/client.md).

::

    from clawline.client import GatewayClient

    async with await GatewayClient.connect("ws://127.0.0.1:18790", token=TOKEN) as client:
        rows = await client.request("sessions.list", {"limit": 10})
        ack, final = await client.request_final("agent", {"message": "hi", "idempotencyKey": k})

Modules: ``connection`` (:class:`GatewayClient`), ``handshake`` (dial, ``connect``,
``hello-ok``), ``errors`` (the exception tree), ``events``
(:class:`GatewayEvent`, the bounded queue), ``identity`` (the device key), ``target`` (which
gateway: URL and token from options, environment, config), ``blocking`` (a synchronous wrapper).
"""

from __future__ import annotations

from clawline.client.blocking import BlockingGatewayClient
from clawline.client.client_errors import (
    ClientError,
    ConnectError,
    ConnectionLost,
    EventsNotRetainedError,
    GatewayRequestError,
    Timeout,
)
from clawline.client.connection import GatewayClient, Resumed
from clawline.client.event_queue import GatewayEvent
from clawline.client.handshake import DEFAULT_SCOPES, normalize_url
from clawline.client.identity import device_key_path, load_or_create_identity
from clawline.client.target import GatewayTarget, configured_gateway, resolve_gateway
from clawline.gateway.device import DeviceIdentity

__all__ = [
    "DEFAULT_SCOPES",
    "BlockingGatewayClient",
    "ClientError",
    "ConnectError",
    "ConnectionLost",
    "DeviceIdentity",
    "EventsNotRetainedError",
    "GatewayClient",
    "GatewayEvent",
    "GatewayRequestError",
    "GatewayTarget",
    "Resumed",
    "Timeout",
    "configured_gateway",
    "device_key_path",
    "load_or_create_identity",
    "normalize_url",
    "resolve_gateway",
]
