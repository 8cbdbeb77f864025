"""What a refused request leaves in the log, over a real socket: a client's mistakes are routine
(one line at DEBUG/INFO, no traceback), a bug in a method is an ERROR with its traceback."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import Any

import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.gateway.registry import Call
from clawline.testing.live_gateway import running_gateway
from clawline.types import JSON
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

BAD_PARAMS: list[Any] = [
    None,
    {},
    [],
    "x",
    {"sessionKey": "x"},
    {"sessionKey": ""},
    {"sessionKey": " "},
    {"sessionKey": "bad key"},
    {"sessionKey": 7},
    {"key": ""},
    {"key": " "},
    {"key": "bad key"},
    {"key": "agent:main:nope"},
    {"key": "agent:main:main", "label": 5},
    {"runId": "x", "taskId": "x"},
    {"message": "hi", "sessionKey": "agent::x"},
    {"openclawSessionKey": "agent:main:t", "runId": "../x", "appThreadKey": "t"},
    {"afterSeq": -1},
    {"keys": []},
]
SKIPPED = {"connect"}
"""``connect`` is the handshake, answered before dispatch."""


def _starts_a_bridge(method: str, params: Any) -> bool:
    """``web.family`` with an ``agent:`` key starts the ACP bridge: not a refusal to test."""
    key = params.get("sessionKey") if isinstance(params, dict) else None
    return method == "web.family" and isinstance(key, str) and key.startswith("agent:")


async def test_a_loop_of_bad_requests_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="clawline")
    state_dir = tmp_path / "state"
    raw = {"plugins": {"enabled": ["clawline.xworkmate"]}}
    settings = Settings(state_dir=state_dir, raw=raw)
    gateway_settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    refused = 0
    async with running_gateway(
        state_dir, settings=settings, gateway_settings=gateway_settings
    ) as gw:
        names = [name for name in gw.gateway.methods.names() if name not in SKIPPED]
        assert {"web.family", "sessions.patch", "xworkmate.session.prepare"} <= set(names)
        client = await WireClient.open(gw.url)
        try:
            assert (await client.connect(token=TOKEN))["ok"] is True
            for _ in range(3):  # the fuzz-run shape: the same mistakes, again and again
                for name, params in itertools.product(names, BAD_PARAMS):
                    if _starts_a_bridge(name, params):
                        continue
                    frame = await client.call(name, params, timeout=10)
                    payload = frame.get("payload")
                    failed = frame["ok"] is False or (
                        isinstance(payload, dict)
                        and (payload.get("success") is False or payload.get("ok") is False)
                    )
                    refused += failed
            assert (await client.ok("health"))["ok"] is True
        finally:
            await client.close()
    assert refused > 3 * len(names) * 5, refused  # most of them really were refused
    clawline = [r for r in caplog.records if r.name.startswith("clawline")]
    errors = [r.getMessage() for r in clawline if r.levelno >= logging.ERROR]
    assert errors == []
    assert [r.getMessage() for r in clawline if r.exc_info] == []
    assert all("\n" not in r.getMessage() for r in clawline)
    family = [r for r in clawline if "getSessionFamily failed" in r.getMessage()]
    assert family, "web.family refusals are still logged"
    assert {r.levelno for r in family} == {logging.INFO}
    refusals = [
        r for r in clawline if r.name == "clawline.gateway" and " refused: " in r.getMessage()
    ]
    assert len(refusals) > 3 * len(names), "each refusal is logged once, at DEBUG"
    assert {r.levelno for r in refusals} == {logging.DEBUG}


async def test_a_bug_in_a_method_is_an_error_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="clawline")

    async def broken(call: Call) -> JSON:
        raise ZeroDivisionError("a bug in the method")

    async with running_gateway(
        tmp_path / "state", gateway_settings=GatewaySettings(port=0, auth="token", token=TOKEN)
    ) as gw:
        gw.gateway.methods.add("test.broken", broken, scope=None)
        client = await WireClient.open(gw.url)
        try:
            assert (await client.connect(token=TOKEN))["ok"] is True
            frame = await client.call("test.broken", {})
        finally:
            await client.close()
    assert frame["ok"] is False
    assert frame["error"]["message"] == "internal error"  # the bug's text stays in the log
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "test.broken failed" in record.getMessage()
    assert record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError
