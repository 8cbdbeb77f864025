"""Plugins that raise in every hook, sync and async, and a plugin that is slow: the gateway
stays up, runs complete, spawns work, and each failure is logged with the plugin's name."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from clawline.keys import is_subagent_key
from clawline.plugins import PluginManager
from tests.plugins import sample_plugins
from tests.plugins.plugin_support import (
    SAMPLES,
    connected,
    plugin_errors,
    plugin_gateway,
    plugin_settings,
    run_to_end,
    wait_for,
)
from tests.plugins.sample_plugins import ALL_HOOKS


async def test_plugins_raising_in_every_hook_break_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="clawline.plugins")
    settings = plugin_settings(
        tmp_path / "state", f"{SAMPLES}:raising_sync", f"{SAMPLES}:raising_async"
    )
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        services = gw.runtime
        loaded = {info.name for info in services.plugins.plugins()}
        builtins = {info.name for info in PluginManager.builtin_plugins()}
        assert {*builtins, "raising-sync", "raising-async"} <= loaded
        health = await client.ok("health")
        assert health["ok"] is True
        assert "chat.send" in gw.gateway.methods.names()
        assert "sessions_spawn" in services.runs.tools.names()
        assert services.channels.get("webchat") is not None

        done = await run_to_end(client, "main", "spawn helper: reply: child done", "k-1")
        assert done["status"] == "ok"
        children = [s.key for s in services.store.children("agent:main:main")]
        assert len(children) == 1
        assert is_subagent_key(children[0])
        child = children[0]
        await wait_for(lambda: any(not r.active for r in services.store.runs.by_child(child)))
        [record] = services.store.runs.by_child(child)
        assert record.outcome == {"status": "ok"}
        again = await run_to_end(client, "main", "hello again", "k-2")
        assert again["status"] == "ok"

        await client.ok("sessions.reset", {"key": "main"})
        await client.ok("sessions.delete", {"key": child})
        assert services.store.get(child) is None
    for name in ("raising-sync", "raising-async"):
        assert plugin_errors(caplog.records, name) == set(ALL_HOOKS), name
    broke = [r for r in caplog.records if "raising-sync broke in" in str(r.exc_info)]
    assert broke, "the plugin's own exception is logged with its traceback"


async def test_a_slow_plugin_is_cut_off_by_the_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="clawline.plugins")
    sample_plugins.slow.cancelled.clear()
    settings = plugin_settings(tmp_path / "state", f"{SAMPLES}:slow", hook_timeout_seconds=0.2)
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        started = time.monotonic()
        done = await run_to_end(client, "main", "hi", "slow-1")
        elapsed = time.monotonic() - started
        assert done["status"] == "ok"
        assert elapsed < 5, "session_start waited 60 s instead of the 0.2 s timeout"
        await wait_for(lambda: "agent_end" in sample_plugins.slow.cancelled)
        assert gw.gateway.ready
    assert sample_plugins.slow.cancelled == ["session_start", "agent_end"]
    timed_out = [r.getMessage() for r in caplog.records if "timed out" in r.getMessage()]
    assert timed_out == [
        "plugin slow: session_start hook timed out after 0.2s",
        "plugin slow: agent_end hook timed out after 0.2s",
    ]


async def test_a_plugin_that_cannot_be_imported_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = plugin_settings(tmp_path / "state", "tests.plugins.no_such_module")
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        assert (await client.ok("health"))["ok"] is True
        [failure] = gw.runtime.plugins.failures
        assert (failure.name, failure.source) == ("tests.plugins.no_such_module", "config")
        assert failure.error.startswith("ModuleNotFoundError")
    assert any("tests.plugins.no_such_module" in r.getMessage() for r in caplog.records)
