"""The plugin takes its host and parses ``[plugins.xworkmate]`` once, in ``startup``: before that
its methods answer ``UNAVAILABLE``, and a refused configuration is logged at start-up and then
answered by every method (the agent tool answers the same state)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from clawline.config import ConfigError, Settings
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.registry import Call, MethodRegistry
from clawline.plugins.xworkmate import PLUGIN_ID, XWorkmatePlugin, make_plugin
from clawline.plugins.xworkmate.constants import METHOD_NAMES
from clawline.plugins.xworkmate.state import NOT_STARTED, XWorkmateNotStarted
from clawline.runtime import Runtime
from tests.plugins.xworkmate_support import APP_KEY, SESSION, prepare_params, xworkmate_gateway

if TYPE_CHECKING:
    from clawline.gateway.app import Gateway
    from clawline.gateway.connection import Connection

BAD_MAX_FILES = "config: plugins.xworkmate.maxFiles must be a positive integer"


def _call(method: str) -> Call:
    """A request for ``method``; the plugin's handlers read only its params."""
    return Call(
        request_id="r1",
        method=method,
        params=prepare_params(),
        connection=cast("Connection", None),
        gateway=cast("Gateway", None),
    )


async def test_before_startup_the_methods_are_unavailable(tmp_path: Path) -> None:
    plugin = make_plugin()
    methods = MethodRegistry()
    plugin.register_gateway_methods(methods)
    assert methods.names() == list(METHOD_NAMES)
    with pytest.raises(XWorkmateNotStarted, match=NOT_STARTED):
        plugin.state()
    for name in METHOD_NAMES:
        with pytest.raises(GatewayError) as caught:
            await methods.get(name).handler(_call(name))
        assert (caught.value.code, caught.value.message) == (ErrorCode.UNAVAILABLE, NOT_STARTED)

    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        plugin.startup(runtime.plugin_host)
        assert plugin.state().host is runtime.plugin_host
        plugin.shutdown(runtime.plugin_host)
        with pytest.raises(XWorkmateNotStarted):
            plugin.state()
    finally:
        runtime.close()


async def test_a_refused_configuration_is_logged_at_startup_and_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="clawline.plugins")
    async with xworkmate_gateway(tmp_path, {"maxFiles": 0}) as xw:
        [logged] = [r for r in caplog.records if "startup hook failed" in r.getMessage()]
        assert BAD_MAX_FILES in logged.getMessage()
        refused = await xw.error("xworkmate.tasks.get", {"appThreadKey": APP_KEY})
        assert refused == {"code": "INVALID_REQUEST", "message": BAD_MAX_FILES}
        refused = await xw.error("xworkmate.session.prepare", prepare_params())
        assert refused == {"code": "INVALID_REQUEST", "message": BAD_MAX_FILES}
        runtime = xw.gw.runtime
        assert await runtime.call(runtime.catalog.get, SESSION) is None  # nothing written
        plugin = runtime.plugins.get(PLUGIN_ID)
        assert isinstance(plugin, XWorkmatePlugin)
        with pytest.raises(ConfigError, match="maxFiles"):
            plugin.state()  # what the agent tool answers too
