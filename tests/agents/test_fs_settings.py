"""``[tools.fs]``: parsed with the agent sections and read by every workspace file access."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.agents.settings import AgentsConfig
from clawline.config import ConfigError, Settings
from clawline.plugins.xworkmate.export import ExportOptions
from clawline.plugins.xworkmate.settings import plugin_settings


def test_hard_links_are_refused_by_default(tmp_path: Path) -> None:
    assert AgentsConfig.from_raw({}, tmp_path).fs.allow_hardlinks is False
    assert plugin_settings(Settings(state_dir=tmp_path)).allow_hardlinks is False


def test_allow_hardlinks_reaches_the_agents_and_the_xworkmate_plugin(tmp_path: Path) -> None:
    raw: dict[str, Any] = {"tools": {"fs": {"allowHardlinks": True}}}
    assert AgentsConfig.from_raw(raw, tmp_path).fs.allow_hardlinks is True
    config = plugin_settings(Settings(state_dir=tmp_path, raw=raw))
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
        AgentsConfig.from_raw(raw, tmp_path)
    assert str(caught.value).startswith(message)
