"""The gateway's options: command-line options over environment variables over ``[gateway]``
of config.toml (:class:`~clawline.config.GatewayConfig`), and the protocol limits tests tune.

Secure defaults: the gateway binds to loopback. Binding to the LAN requires token
authentication and a token; without both it refuses to start.

Environment: ``CLAWLINE_GATEWAY_TOKEN``, ``CLAWLINE_GATEWAY_PORT``, ``CLAWLINE_GATEWAY_BIND``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from clawline.config import DEFAULT_PORT, ConfigError, Settings
from clawline.gateway.frames import (
    MAX_BUFFERED_BYTES,
    MAX_PAYLOAD,
    MAX_PREAUTH_FRAME,
    TICK_INTERVAL_MS,
)
from clawline.gateway.origin import parse_allowed_hosts, parse_allowed_origins

Bind = Literal["loopback", "lan"]
AuthMode = Literal["token", "none"]


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    port: int = DEFAULT_PORT
    bind: Bind = "loopback"
    auth: AuthMode = "none"
    token: str | None = field(default=None, repr=False)
    require_device: bool = False
    """Grant operator scopes only to paired devices (see :mod:`clawline.pairing`)."""
    allowed_origins: frozenset[str] = frozenset()
    """``[gateway] allowedOrigins``: browser origins allowed besides the gateway's own page."""
    allowed_hosts: frozenset[str] = frozenset()
    """``[gateway] allowedHosts``: names the gateway answers to besides IP literals and
    ``localhost`` (see :mod:`clawline.gateway.origin`)."""
    max_payload: int = MAX_PAYLOAD
    max_buffered_bytes: int = MAX_BUFFERED_BYTES
    preauth_frame_limit: int = MAX_PREAUTH_FRAME
    tick_interval_ms: int = TICK_INTERVAL_MS
    connect_timeout_s: float = 10.0
    max_inflight_requests: int = 64
    close_timeout_s: float = 5.0
    """How long a closing connection waits for its cancelled requests to finish."""
    pairing_check_interval_s: float = 2.0
    """How often a ``require_device`` gateway re-reads its connected devices' pairings."""
    event_retention_s: float = 3600.0
    """A store shared by several gateway instances (PostgreSQL) keeps the event stream in its
    event log for replays (``events.replay``, ``sessions.subscribe {afterSeq}``) this long…"""
    event_retention_min_events: int = 10_000
    """…and keeps the newest this many events however old they are."""
    event_prune_interval_s: float = 60.0
    """How often the gateway deletes the event log's events past that retention."""

    @property
    def host(self) -> str:
        return "127.0.0.1" if self.bind == "loopback" else "0.0.0.0"


def _port(value: str | int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ConfigError("gateway port must be an integer") from None
    if not 0 <= number <= 65535:
        raise ConfigError("gateway port must be a port number from 0 to 65535")
    return number


def resolve_gateway_settings(
    settings: Settings,
    *,
    port: int | None = None,
    bind: str | None = None,
    auth: str | None = None,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
) -> GatewaySettings:
    """Options over environment over ``[gateway]``, checked, as :class:`GatewaySettings`."""
    env = os.environ if env is None else env
    section = settings.config.gateway
    chosen_port = _port(
        port if port is not None else env.get("CLAWLINE_GATEWAY_PORT") or section.port
    )
    chosen_bind = bind or env.get("CLAWLINE_GATEWAY_BIND") or section.bind
    if chosen_bind not in ("loopback", "lan"):
        raise ConfigError('gateway bind must be "loopback" or "lan"')
    configured = section.token.get_secret_value().strip() if section.token else None
    chosen_token = token or env.get("CLAWLINE_GATEWAY_TOKEN") or configured
    chosen_auth = auth or section.auth or ("token" if chosen_token else "none")
    if chosen_auth not in ("token", "none"):
        raise ConfigError('gateway auth must be "token" or "none"')
    if chosen_auth == "token" and not chosen_token:
        raise ConfigError(
            "gateway auth is token but no token is set (use --token or CLAWLINE_GATEWAY_TOKEN)"
        )
    if chosen_bind == "lan" and chosen_auth != "token":
        raise ConfigError(
            "refusing to bind off loopback without a token: use --auth token with --token "
            "(or CLAWLINE_GATEWAY_TOKEN)"
        )
    return GatewaySettings(
        port=chosen_port,
        bind=cast(Bind, chosen_bind),
        auth=cast(AuthMode, chosen_auth),
        token=chosen_token if chosen_auth == "token" else None,
        require_device=section.require_device,
        allowed_origins=parse_allowed_origins(list(section.allowed_origins)),
        allowed_hosts=parse_allowed_hosts(list(section.allowed_hosts)),
    )
