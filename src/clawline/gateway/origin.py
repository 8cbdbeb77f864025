"""Origin and Host checks, in front of every route (cross-site WebSocket hijacking and DNS
rebinding).

Every HTTP request and WebSocket upgrade passes :class:`OriginHostCheck` first:

- **Host** (all requests): an IP literal, ``localhost``, or a name listed in ``[gateway]
  allowedHosts``; the port is not checked. A DNS-rebinding page reaches the gateway under the
  attacker's name, so its requests carry a Host the gateway does not know. A request without
  a Host header (or with several) is refused.
- **Origin** (WebSocket upgrades, and HTTP requests other than GET and HEAD): absent — a client
  that is not a browser — or the gateway's own origin (``http``/``https`` and the same
  host:port as the Host header), or listed in ``[gateway] allowedOrigins``. ``Origin: null``
  is refused unless ``"null"`` is listed.

A refusal is HTTP 403 (to an HTTP request, with a short plain-text body), sent before any route
runs (an upgrade never switches protocols), and logged at WARNING once per refused value.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from clawline.config import ConfigError

log = logging.getLogger("clawline.gateway.origin")

DEFAULT_PORTS = {"http": 80, "https": 443}
REPORTED_LIMIT = 256
"""How many refused values are remembered so each is logged once; past it, no more are."""
_SHOWN_CHARS = 200
"""A header is cut to this length in the log (and in the set of values already reported)."""

_HOST = r"(?P<host>\[[0-9A-Fa-f:.]+(?:%[0-9A-Za-z._~-]+)?\]|[0-9A-Za-z._~-]+)"
_PORT = r"(?::(?P<port>[0-9]{1,5}))?"
_ORIGIN = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://" + _HOST + _PORT)
_HOST_HEADER = re.compile(_HOST + _PORT)
_NAME = re.compile(r"[0-9a-z_-]+(?:\.[0-9a-z_-]+)*")


@dataclass(frozen=True, slots=True)
class Origin:
    """A parsed ``scheme://host[:port]``; ``host`` is lowercase, IPv6 without brackets."""

    scheme: str
    host: str
    port: int | None
    """The explicit port, ``None`` when absent or the scheme's default."""

    @property
    def effective_port(self) -> int | None:
        return self.port if self.port is not None else DEFAULT_PORTS.get(self.scheme)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{host}{port}"


def _host_and_port(host: str, port: str | None) -> tuple[str, int | None] | None:
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        host = host[1:-1]
    number = int(port) if port is not None else None
    if number is not None and number > 65535:
        return None
    return host.lower(), number


def parse_origin(text: str) -> Origin | None:
    """``scheme://host[:port]`` (nothing more: no path, user or query), else ``None``."""
    match = _ORIGIN.fullmatch(text)
    if match is None:
        return None
    parts = _host_and_port(match["host"], match["port"])
    if parts is None:
        return None
    scheme = match["scheme"].lower()
    host, port = parts
    if port is not None and port == DEFAULT_PORTS.get(scheme):
        port = None
    return Origin(scheme, host, port)


def _parse_host_header(text: str) -> tuple[str, int | None] | None:
    match = _HOST_HEADER.fullmatch(text)
    return None if match is None else _host_and_port(match["host"], match["port"])


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _entries(value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
        raise ConfigError(f"gateway {key} must be a list of strings")
    return [entry.strip() for entry in value]


def parse_allowed_origins(value: object) -> frozenset[str]:
    """``[gateway] allowedOrigins``: exact origins such as ``"http://localhost:5173"``, or
    ``"null"``; returned in their canonical form (lowercase, default port dropped)."""
    origins: set[str] = set()
    for entry in _entries(value, "allowedOrigins"):
        if entry == "*":
            raise ConfigError(
                'gateway allowedOrigins: "*" is not accepted (it would let every web page '
                "drive the gateway); list the origins instead"
            )
        if entry == "null":
            origins.add(entry)
            continue
        origin = parse_origin(entry)
        if origin is None:
            raise ConfigError(
                f"gateway allowedOrigins: {entry!r} is not an origin (scheme://host[:port], "
                'no path or trailing slash, e.g. "http://localhost:5173")'
            )
        origins.add(str(origin))
    return frozenset(origins)


def parse_allowed_hosts(value: object) -> frozenset[str]:
    """``[gateway] allowedHosts``: host names (no port, no wildcard) the gateway answers to
    besides IP literals and ``localhost``; returned lowercase without a trailing dot."""
    hosts: set[str] = set()
    for entry in _entries(value, "allowedHosts"):
        name = entry.lower().removesuffix(".")
        if "*" in name:
            raise ConfigError(
                f"gateway allowedHosts: {entry!r}: wildcards are not accepted (they would "
                "undo the DNS-rebinding check); list the names instead"
            )
        if not (_NAME.fullmatch(name) or _is_ip_literal(name.strip("[]"))):
            raise ConfigError(
                f"gateway allowedHosts: {entry!r} is not a host name (a name without scheme "
                'or port, e.g. "gateway.lan")'
            )
        hosts.add(name)
    return frozenset(hosts)


@dataclass(frozen=True, slots=True)
class Refusal:
    header: Literal["origin", "host"]
    value: str | None
    """The refused header value, ``None`` when the header is missing."""


class OriginPolicy:
    """Which Host and Origin headers a request may carry (see the module docstring)."""

    def __init__(self, allowed_origins: Iterable[str], allowed_hosts: Iterable[str]) -> None:
        self.allowed_origins = parse_allowed_origins(list(allowed_origins))
        self.allowed_hosts = parse_allowed_hosts(list(allowed_hosts))

    def host_allowed(self, host: str) -> bool:
        name = host.removesuffix(".")
        return name == "localhost" or _is_ip_literal(host) or name in self.allowed_hosts

    def origin_allowed(self, text: str, host: str, port: int | None) -> bool:
        if text in self.allowed_origins:
            return True
        origin = parse_origin(text)
        if origin is None:
            return False  # "null" and anything malformed, unless listed exactly
        if str(origin) in self.allowed_origins:
            return True
        same_port = origin.effective_port == (
            port if port is not None else DEFAULT_PORTS.get(origin.scheme)
        )
        return origin.scheme in DEFAULT_PORTS and origin.host == host and same_port

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why this request is refused, or ``None`` when it may go on."""
        headers = Headers(scope=scope)
        hosts = headers.getlist("host")
        if len(hosts) != 1:
            return Refusal("host", ", ".join(hosts) or None)
        parsed = _parse_host_header(hosts[0])
        if parsed is None or not self.host_allowed(parsed[0]):
            return Refusal("host", hosts[0])
        acts = scope["type"] == "websocket" or scope["method"] not in ("GET", "HEAD")
        origins = headers.getlist("origin")
        if not acts or not origins:
            return None
        if len(origins) > 1:
            return Refusal("origin", ", ".join(origins))
        if not self.origin_allowed(origins[0], *parsed):
            return Refusal("origin", origins[0])
        return None


class _RefusalLog:
    """Logs each refused value once, remembering at most :data:`REPORTED_LIMIT` of them so a
    flood of distinct values cannot grow memory (or the log) without bound."""

    def __init__(self, limit: int = REPORTED_LIMIT) -> None:
        self.limit = limit
        self.reported: set[tuple[str, str | None]] = set()
        self.full = False

    def report(self, refusal: Refusal, request: str) -> None:
        value = refusal.value
        if value is not None and len(value) > _SHOWN_CHARS:
            value = value[:_SHOWN_CHARS] + "…"
        key = (refusal.header, value)
        if key in self.reported or self.full:
            return
        if len(self.reported) >= self.limit:
            self.full = True
            log.warning(
                "refused %d distinct origins or hosts; further ones are refused without a log line",
                self.limit,
            )
            return
        self.reported.add(key)
        if refusal.header == "origin":
            log.warning(
                "refused %s from origin %r: not this gateway's own origin and not in "
                "[gateway] allowedOrigins (logged once per origin)",
                request,
                value,
            )
        elif value is None:
            log.warning("refused %s without a single Host header (logged once)", request)
        else:
            log.warning(
                "refused %s for host %r: not an IP address, localhost or a name in "
                "[gateway] allowedHosts, as with DNS rebinding (logged once per host)",
                request,
                value,
            )


class OriginHostCheck:
    """ASGI middleware answering 403 to requests :class:`OriginPolicy` refuses."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_origins: Iterable[str] = (),
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.policy = OriginPolicy(allowed_origins, allowed_hosts)
        self.refusals = _RefusalLog()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.policy.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            self.refusals.report(refusal, "a WebSocket upgrade")
            # Closing before accepting makes the server answer 403 (with no body). Not a
            # denial response with a body: uvicorn's websockets-sansio protocol then logs
            # "ASGI callable returned without completing handshake" at ERROR for every
            # refusal (Kludex/uvicorn#3138).
            await send({"type": "websocket.close", "code": 1008})
            return
        self.refusals.report(refusal, "an HTTP request")
        response = PlainTextResponse(f"{refusal.header} not allowed\n", status_code=403)
        await response(scope, receive, send)
