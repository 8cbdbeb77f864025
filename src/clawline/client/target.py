"""Which gateway a client talks to: URL and token from options, environment or config.

Order, for the URL and the token separately: the explicit value (``--url``/``--token``), else
``CLAWLINE_GATEWAY_URL``/``CLAWLINE_GATEWAY_TOKEN``, else ``[gateway] url``/``token`` in
``config.toml``. :func:`configured_gateway` stops there (a gateway is *configured* only by those);
:func:`resolve_gateway` then falls back to the gateway this state directory runs (its
``gateway.json`` runtime file) and finally to ``ws://127.0.0.1:<[gateway] port or 18790>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from clawline.config import Settings

RUNTIME_FILE = "gateway.json"


@dataclass(frozen=True, slots=True)
class GatewayTarget:
    url: str
    token: str | None = field(default=None, repr=False)
    source: str = "option"
    """Where the URL came from: option, env, config, runtime or default."""


def _token(settings: Settings, env: Mapping[str, str], token: str | None) -> str | None:
    if token:
        return token
    configured = settings.config.gateway.token
    from_config = configured.get_secret_value().strip() if configured is not None else None
    return env.get("CLAWLINE_GATEWAY_TOKEN", "").strip() or from_config


def configured_gateway(
    settings: Settings,
    env: Mapping[str, str],
    *,
    url: str | None = None,
    token: str | None = None,
) -> GatewayTarget | None:
    """The gateway named by ``url``, the environment or the config; ``None`` when none is."""
    if url:
        return GatewayTarget(url, _token(settings, env, token), "option")
    from_env = env.get("CLAWLINE_GATEWAY_URL", "").strip()
    if from_env:
        return GatewayTarget(from_env, _token(settings, env, token), "env")
    from_config = settings.config.gateway.url
    if from_config:
        return GatewayTarget(from_config, _token(settings, env, token), "config")
    return None


def _runtime_url(settings: Settings) -> str | None:
    path = settings.state_dir / RUNTIME_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        return None
    return url.replace("://0.0.0.0:", "://127.0.0.1:")


def resolve_gateway(
    settings: Settings,
    env: Mapping[str, str],
    *,
    url: str | None = None,
    token: str | None = None,
) -> GatewayTarget:
    """Like :func:`configured_gateway`, falling back to the local gateway."""
    target = configured_gateway(settings, env, url=url, token=token)
    if target is not None:
        return target
    chosen = _token(settings, env, token)
    running = _runtime_url(settings)
    if running is not None:
        return GatewayTarget(running, chosen, "runtime")
    port = env.get("CLAWLINE_GATEWAY_PORT", "").strip() or settings.config.gateway.port
    return GatewayTarget(f"ws://127.0.0.1:{port}", chosen, "default")
