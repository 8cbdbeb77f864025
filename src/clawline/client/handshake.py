"""Opening a connection: dial, read ``connect.challenge``, send ``connect``, await ``hello-ok``.

The ``connect`` request carries the client block, the requested scopes, the token
(``auth.token``) and, with a device identity, the device block signing the v3 payload (see
:mod:`clawline.gateway.device`) over the challenge nonce, with ``signedAt`` = the challenge's
``ts``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from clawline import __version__
from clawline.client.client_errors import CODE_UNAVAILABLE, ConnectError, error_from_frame
from clawline.gateway.device import DeviceIdentity, v3_payload
from clawline.types import JSONObject

DEFAULT_SCOPES = ("operator.read", "operator.write", "operator.admin")
MAX_MESSAGE = 64 * 1024 * 1024
"""Largest frame accepted from the gateway (its ``maxPayload`` is 25 MiB; listings of many
thousand rows can exceed that on the way out)."""


def normalize_url(url: str) -> str:
    """``ws://host:port`` (any path, e.g. ``/ws``, kept); ``http(s)://`` becomes ``ws(s)://``."""
    parts = urlsplit(url.strip())
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in ("ws", "wss") or not parts.hostname:
        raise ConnectError(f"invalid gateway URL {url!r} (use ws://host:port)", CODE_UNAVAILABLE)
    return urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))


class Secret:
    """Holds the token so that no repr, log line or traceback variable dump shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value

    def reveal(self) -> str | None:
        return self._value

    def __repr__(self) -> str:
        return "<hidden>" if self._value else "<none>"


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """Who the client says it is and what it asks for."""

    token: Secret = field(default_factory=lambda: Secret(None))
    device: DeviceIdentity | None = None
    client_id: str = "cli"
    client_mode: str = "cli"
    display_name: str | None = None
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    min_protocol: int = 3
    max_protocol: int = 4

    def params(self, nonce: str, challenge_ts: int | None) -> JSONObject:
        """The ``connect`` params answering the challenge ``nonce``."""
        client: JSONObject = {
            "id": self.client_id,
            "version": __version__,
            "platform": sys.platform,
            "mode": self.client_mode,
        }
        if self.display_name is not None:
            client["displayName"] = self.display_name
        params: JSONObject = {
            "minProtocol": self.min_protocol,
            "maxProtocol": self.max_protocol,
            "client": client,
            "role": "operator",
            "scopes": list(self.scopes),
            "caps": [],
            "userAgent": f"clawline/{__version__}",
        }
        token = self.token.reveal()
        if token is not None:
            params["auth"] = {"token": token}
        if self.device is not None:
            signed_at = challenge_ts if challenge_ts is not None else 0
            payload = v3_payload(
                device_id=self.device.device_id,
                client_id=self.client_id,
                client_mode=self.client_mode,
                role="operator",
                scopes=list(self.scopes),
                signed_at=signed_at,
                token=token,
                nonce=nonce,
                platform=sys.platform,
                device_family=None,
            )
            params["device"] = {
                "id": self.device.device_id,
                "publicKey": self.device.public_key,
                "signature": self.device.sign(payload),
                "signedAt": signed_at,
                "nonce": nonce,
            }
        return params


async def _dial(url: str) -> ClientConnection:
    try:
        return await websockets.connect(
            url,
            open_timeout=None,
            max_size=MAX_MESSAGE,
            proxy=None,
            user_agent_header=f"clawline/{__version__}",
        )
    except InvalidURI:
        raise ConnectError(f"invalid gateway URL {url!r}") from None
    except (OSError, InvalidHandshake) as error:
        raise ConnectError(f"cannot connect to {url}: {error}") from None


async def _handshake(ws: ClientConnection, url: str, options: ConnectOptions) -> JSONObject:
    request_id = f"connect-{secrets.token_hex(4)}"
    try:
        nonce: str | None = None
        challenge_ts: int | None = None
        while nonce is None:
            frame = json.loads(await ws.recv())
            if frame.get("type") == "event" and frame.get("event") == "connect.challenge":
                payload = frame.get("payload") or {}
                nonce = str(payload.get("nonce") or "")
                ts = payload.get("ts")
                challenge_ts = ts if isinstance(ts, int) else None
        params = options.params(nonce, challenge_ts)
        request = {"type": "req", "id": request_id, "method": "connect", "params": params}
        await ws.send(json.dumps(request))
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("type") == "res" and frame.get("id") in (request_id, None):
                break
    except ConnectionClosed as closed:
        reason = f" ({closed.rcvd.reason})" if closed.rcvd and closed.rcvd.reason else ""
        raise ConnectError(
            f"cannot connect to {url}: the gateway closed the connection{reason}"
        ) from None
    except (ValueError, AttributeError):
        raise ConnectError(f"cannot connect to {url}: not a clawline gateway") from None
    if frame.get("ok") is not True:
        error = error_from_frame("connect", frame)
        raise ConnectError(error.message, error.code)
    hello = frame.get("payload")
    if not isinstance(hello, dict) or hello.get("type") != "hello-ok":
        raise ConnectError(f"cannot connect to {url}: unexpected connect answer")
    return hello


async def open_connection(
    url: str, options: ConnectOptions, timeout: float
) -> tuple[ClientConnection, JSONObject]:
    """A connected socket and the ``hello-ok`` payload; :class:`ConnectError` otherwise."""
    try:
        async with asyncio.timeout(timeout):
            ws = await _dial(url)
            try:
                return ws, await _handshake(ws, url, options)
            except BaseException:
                await ws.close()
                raise
    except TimeoutError:
        raise ConnectError(f"cannot connect to {url}: no handshake within {timeout:g}s") from None
