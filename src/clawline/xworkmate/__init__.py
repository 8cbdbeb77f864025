"""The XWorkmate multi-session plugin (OpenClaw's ``openclaw-multi-session-plugins``),
re-implemented for clawline: it maps XWorkmate app threads to sessions, gives every task run its
own artifact directory, and answers task-status and artifact queries (docs/xworkmate.md).

Enable it in config.toml::

    [plugins]
    enabled = ["clawline.xworkmate"]

This module is a plugin factory: :func:`make_plugin` gives each gateway its own
:class:`~clawline.xworkmate.plugin.XWorkmatePlugin`, which works through the
:class:`~clawline.plugins.host.PluginHost` its ``startup`` hook receives.
"""

from __future__ import annotations

from clawline.xworkmate.plugin import XWorkmatePlugin


def make_plugin() -> XWorkmatePlugin:
    """A fresh plugin object (the plugin loader calls it once per gateway)."""
    return XWorkmatePlugin()
