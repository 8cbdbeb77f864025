"""``[tools.fs]``: parsed with the agent sections and read by every workspace file access."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.config import (
    ConfigError,
    Settings,
    XWorkmateSettings,
    parse_agents_config,
)
from clawline.runtime import Runtime
from clawline.xworkmate.export import ExportOptions


def _xworkmate_settings(state_dir: Path, raw: dict[str, Any]) -> XWorkmateSettings:
    """The XWorkmate plugin's settings as its ``startup`` hook parses them, from the plugin
    host of a runtime on ``raw``."""
    runtime = Runtime.open(Settings(state_dir=state_dir, raw=raw))
    try:
        host = runtime.plugin_host
        return host.settings.plugins.xworkmate.effective(
            state_dir=host.state_dir, allow_hardlinks=host.allow_hardlinks, env={}
        )
    finally:
        runtime.close()


def test_hard_links_are_refused_by_default(tmp_path: Path) -> None:
    assert parse_agents_config({}, tmp_path).fs.allow_hardlinks is False
    assert _xworkmate_settings(tmp_path, {}).allow_hardlinks is False


def test_allow_hardlinks_reaches_the_agents_and_the_xworkmate_plugin(tmp_path: Path) -> None:
    raw: dict[str, Any] = {"tools": {"fs": {"allowHardlinks": True}}}
    assert parse_agents_config(raw, tmp_path).fs.allow_hardlinks is True
    config = _xworkmate_settings(tmp_path, raw)
    assert config.allow_hardlinks is True
    assert ExportOptions.from_params({}, config, []).allow_hardlinks is True


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tools": {"fs": {"allowHardlinks": "yes"}}}, "config: tools.fs.allowHardlinks must be"),
        ({"tools": {"fs": "on"}}, "config: tools.fs must be a table"),
    ],
)
def test_a_bad_value_names_the_key(tmp_path: Path, raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agents_config(raw, tmp_path)
    assert str(caught.value).startswith(message)
