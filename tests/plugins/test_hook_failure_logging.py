"""How a failing lifecycle hook is logged: a typed refusal is one line without a traceback, a
typed operational failure a warning, anything else an ERROR with the traceback."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from clawline.config import Settings
from clawline.errors import InvalidInput, StoreUnavailable
from clawline.plugins import HookContext, hookimpl
from clawline.plugins.manager import PluginManager
from clawline.runtime import Runtime


class Raises:
    def __init__(self, error: Exception) -> None:
        self.error = error

    @hookimpl
    async def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        raise self.error


@pytest.mark.parametrize(
    ("error", "level", "traced"),
    [
        (InvalidInput("invalid session key:\nbad"), logging.INFO, False),
        (StoreUnavailable("store gone"), logging.WARNING, False),
        (KeyError("a bug"), logging.ERROR, True),
    ],
)
async def test_hook_failures_are_logged_by_whose_fault_they_are(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    level: int,
    traced: bool,
) -> None:
    caplog.set_level(logging.DEBUG, logger="clawline.plugins")
    services = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        manager = PluginManager()
        manager.bind(services.plugin_host)
        assert manager.add(Raises(error), "raises")
        await manager.session_start({"sessionKey": "agent:main:main"}, manager.context())
    finally:
        await services.runs.shutdown()
        services.close()
    [record] = [r for r in caplog.records if r.getMessage().startswith("plugin raises:")]
    assert record.levelno == level
    assert record.getMessage().startswith("plugin raises: session_start hook failed: ")
    assert "\n" not in record.getMessage()
    assert (record.exc_info is not None) is traced
