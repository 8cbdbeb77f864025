"""Plugins installed as distributions: the ``clawline`` entry-point group, found on
``sys.path`` through a real ``.dist-info`` directory."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.plugins import PluginManager
from tests.plugins.plugin_support import connected, plugin_gateway, run_to_end, wait_for

PLAIN_PLUGIN = """
from clawline.plugins import hookimpl

SEEN = []


@hookimpl
def agent_end(event, ctx):
    SEEN.append((ctx.plugin_id, event["runId"], event["output"]))
"""


def _install(site: Path, entry_points: str) -> None:
    """A distribution ``clawline-sample-plugins`` with ``entry_points`` under ``[clawline]``."""
    info = site / "clawline_sample_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: clawline-sample-plugins\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[clawline]\n" + textwrap.dedent(entry_points))
    (site / "ep_plain_plugin.py").write_text(PLAIN_PLUGIN)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.delitem(sys.modules, "ep_plain_plugin", raising=False)
    return directory


def test_entry_points_are_loaded_named_and_reported(site: Path) -> None:
    _install(
        site,
        """
        plainly = ep_plain_plugin
        sample = tests.plugins.feature_plugin
        skipped = tests.plugins.sample_plugins:recorder
        broken = ep_missing_module:plugin
        """,
    )
    raw = {"plugins": {"disabled": ["skipped"]}}
    manager = PluginManager.from_settings(Settings(state_dir=site, raw=raw))
    loaded = {p.name: (p.source, p.origin, p.hooks) for p in manager.plugins()}
    assert loaded["plainly"] == ("entry point", "ep_plain_plugin", ("agent_end",))
    # A plugin's PLUGIN_ID names it, whatever the entry point is called.
    assert loaded["feature"][:2] == ("entry point", "tests.plugins.feature_plugin")
    assert "skipped" not in loaded
    assert "recorder" not in loaded
    assert [(f.name, f.source) for f in manager.failures] == [("broken", "entry point")]
    assert manager.failures[0].error.startswith("ModuleNotFoundError")


def test_entry_points_can_be_switched_off(site: Path) -> None:
    _install(site, "plainly = ep_plain_plugin\n")
    raw = {"plugins": {"entry_points": False}}
    manager = PluginManager.from_settings(Settings(state_dir=site, raw=raw))
    assert manager.plugins() == []  # the built-ins are the runtime's: nothing was found here
    assert manager.failures == []


async def test_an_entry_point_plugin_hears_of_runs_in_a_gateway(site: Path, tmp_path: Path) -> None:
    _install(site, "plainly = ep_plain_plugin\n")
    settings = Settings(state_dir=tmp_path / "state")
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        module = importlib.import_module("ep_plain_plugin")
        await run_to_end(client, "main", "hi", "ep-1")
        await wait_for(lambda: module.SEEN)
        assert module.SEEN == [("plainly", "ep-1", "echo: hi")]
        assert "plainly" in [p.name for p in gw.runtime.plugins.plugins()]
