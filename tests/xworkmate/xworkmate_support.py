"""Helpers for the XWorkmate plugin tests: a real gateway with the plugin enabled by config,
and files with chosen times in a workspace."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.xworkmate.export import ExportOptions
from clawline.xworkmate.scope import TaskScope
from tests.gateway.wire import WireClient

__all__ = [
    "APP_KEY",
    "PLUGIN",
    "SECRET",
    "SESSION",
    "TOKEN",
    "XwGateway",
    "options",
    "prepare_params",
    "write",
    "xworkmate_gateway",
]

PLUGIN = "clawline.xworkmate"
TOKEN = "xworkmate-test-token-0123"
SECRET = b"test-signing-secret"
SESSION = "agent:main:thread-main"
APP_KEY = "thread-main"


def write(path: Path, content: str | bytes = "x", *, age_s: float | None = None) -> Path:
    """Write a file (parents created); ``age_s`` sets its mtime that many seconds back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode() if isinstance(content, str) else content
    path.write_bytes(data)
    if age_s is not None:
        moment = time.time() - age_s
        os.utime(path, (moment, moment))
    return path


def options(**overrides: Any) -> ExportOptions:
    """Export options with the defaults (64 files, 10 MiB inline), overridden."""
    values: dict[str, Any] = {"max_files": 64, "max_inline_bytes": 10 * 1024 * 1024}
    values.update(overrides)
    return ExportOptions(**values)


def prepare_params(run_id: str = "turn-1", **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "schemaVersion": 1,
        "appThreadKey": APP_KEY,
        "openclawSessionKey": SESSION,
        "runId": run_id,
    }
    params.update(extra)
    return params


@dataclass
class XwGateway:
    """A running gateway with the plugin, and a connected admin client."""

    gw: RunningGateway
    client: WireClient
    state_dir: Path

    @property
    def workspace(self) -> Path:
        """The main agent's workspace (the default workspace root)."""
        return Path(os.path.realpath(self.state_dir / "workspace" / "main"))

    def scope_dir(self, run_id: str = "turn-1", session_key: str = SESSION) -> Path:
        return self.workspace / TaskScope(session_key, run_id).relative

    async def ok(self, method: str, params: Mapping[str, Any], timeout: float = 10.0) -> Any:
        frame = await self.client.call(method, dict(params), timeout=timeout)
        assert frame["ok"] is True, frame
        return frame["payload"]

    async def error(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ``{code, message}`` of a refused request."""
        frame = await self.client.call(method, dict(params))
        assert frame["ok"] is False, frame
        return {"code": frame["error"]["code"], "message": frame["error"]["message"]}


@contextlib.asynccontextmanager
async def xworkmate_gateway(
    tmp_path: Path, config: Mapping[str, Any] | None = None
) -> AsyncIterator[XwGateway]:
    """A gateway whose config.toml enables the plugin, with ``[plugins.xworkmate]`` =
    ``config`` (a fixed signing secret unless given)."""
    state_dir = tmp_path / "state"
    section = {"artifactRefSigningSecret": SECRET.decode(), **(config or {})}
    raw = {"plugins": {"enabled": [PLUGIN], "xworkmate": section}}
    settings = Settings(state_dir=state_dir, raw=raw)
    gateway_settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(
        state_dir, settings=settings, gateway_settings=gateway_settings
    ) as gw:
        client = await WireClient.open(gw.url)
        try:
            frame = await client.connect(token=TOKEN)
            assert frame["ok"] is True, frame
            yield XwGateway(gw, client, state_dir)
        finally:
            await client.close()
