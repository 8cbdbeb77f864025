"""The plugin takes its host and parses ``[plugins.xworkmate]`` once, in ``startup``: before that
its methods answer ``UNAVAILABLE``, and a refused configuration is logged at start-up and then
answered by every method (the agent tool answers the same state)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from clawline.config import ConfigError, Settings
from clawline.errors import CATEGORY_CODES, Unavailable
from clawline.plugins import MethodCall, MethodRegistrar
from clawline.plugins.methods import MethodHandler
from clawline.runtime import Runtime
from clawline.xworkmate import make_plugin
from clawline.xworkmate.constants import METHOD_NAMES, PLUGIN_ID
from clawline.xworkmate.plugin import XWorkmatePlugin
from clawline.xworkmate.state import NOT_STARTED, XWorkmateNotStarted
from tests.xworkmate.xworkmate_support import prepare_params

BAD_MAX_FILES = "config: plugins.xworkmate.maxFiles must be a positive integer"


@dataclass(frozen=True)
class Request:
    """A request as the plugin API describes it (a :class:`MethodCall`): the plugin's handlers
    need no gateway."""

    method: str
    request_id: str = "r1"
    params: dict[str, Any] = field(default_factory=prepare_params)


def _call(method: str) -> MethodCall:
    return Request(method)


class Methods:
    """A :class:`MethodRegistrar` that keeps what the plugin registers, without a gateway."""

    def __init__(self) -> None:
        self.handlers: dict[str, MethodHandler] = {}

    def add(
        self, name: str, handler: MethodHandler, *, scope: str | None, schema: Any = None
    ) -> None:
        self.handlers[name] = handler

    def method(self, name: str, *, scope: str | None, schema: Any = None) -> Any:
        raise NotImplementedError  # the plugin uses add

    def names(self) -> list[str]:
        return list(self.handlers)


async def test_before_startup_the_methods_are_unavailable(tmp_path: Path) -> None:
    plugin = make_plugin()
    methods = Methods()
    assert isinstance(methods, MethodRegistrar)
    plugin.register_gateway_methods(methods)
    assert methods.names() == list(METHOD_NAMES)
    with pytest.raises(XWorkmateNotStarted, match=NOT_STARTED):
        plugin.state()
    for name in METHOD_NAMES:
        with pytest.raises(XWorkmateNotStarted) as caught:
            await methods.handlers[name](_call(name))
        # answered by the gateway from the error's category: UNAVAILABLE
        assert (caught.value.category, caught.value.message) == (Unavailable, NOT_STARTED)
        assert CATEGORY_CODES[caught.value.category] == "UNAVAILABLE"

    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        plugin.startup(runtime.plugin_host)
        assert plugin.state().host is runtime.plugin_host
        plugin.shutdown(runtime.plugin_host)
        with pytest.raises(XWorkmateNotStarted):
            plugin.state()
    finally:
        runtime.close()


def test_a_refused_plugin_configuration_stops_start_up_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """The plugin's section is checked with the rest of config.toml, when the settings are
    made: a bad value is one line naming the key, and no runtime (no store) is opened."""
    raw = {"plugins": {"enabled": ["clawline.xworkmate"], "xworkmate": {"maxFiles": 0}}}
    with pytest.raises(ConfigError) as refused:
        Settings(state_dir=tmp_path / "state", raw=raw)
    assert refused.value.problems == (BAD_MAX_FILES,)
    assert not (tmp_path / "state").exists()
    openclaw = {"plugins": {"entries": {PLUGIN_ID: {"config": {"snapshotMaxFiles": "9"}}}}}
    with pytest.raises(ConfigError, match=r"^config: plugins\.xworkmate\.snapshotMaxFiles "):
        Settings(state_dir=tmp_path / "state", raw=openclaw)


def test_the_plugin_is_enabled_by_its_new_module_path_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``clawline.xworkmate`` loads the plugin; the old ``clawline.plugins.xworkmate`` is
    reported as not loaded and the runtime is built without it."""
    old, new = "clawline.plugins.xworkmate", "clawline.xworkmate"
    raw: dict[str, Any] = {"plugins": {"enabled": [old, new], "entry_points": False}}
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state", raw=raw))
    try:
        [failure] = runtime.plugins.failures
        assert (failure.name, failure.source) == (old, "config")
        assert failure.error.startswith("ModuleNotFoundError: No module named")
        [loaded] = [p for p in runtime.plugins.plugins() if p.name == PLUGIN_ID]
        assert (loaded.source, loaded.origin) == ("config", new)
        assert isinstance(runtime.plugins.get(PLUGIN_ID), XWorkmatePlugin)
    finally:
        runtime.close()
    assert any(
        f"plugin {old} (config) could not be loaded" in r.getMessage() for r in caplog.records
    )
