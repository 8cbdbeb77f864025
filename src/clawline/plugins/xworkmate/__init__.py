"""The XWorkmate multi-session plugin (OpenClaw's ``openclaw-multi-session-plugins``),
re-implemented for clawline: it maps XWorkmate app threads to sessions, gives every task run its
own artifact directory, and answers task-status and artifact queries (docs/xworkmate.md).

Enable it in config.toml::

    [plugins]
    enabled = ["clawline.plugins.xworkmate"]

This module is the plugin: its ``@hookimpl`` functions are the ones of
:mod:`clawline.plugins.xworkmate.plugin`.
"""

from __future__ import annotations

from clawline.plugins.xworkmate.constants import PLUGIN_ID
from clawline.plugins.xworkmate.plugin import (
    agent_end,
    register_gateway_methods,
    register_tools,
    session_start,
    startup,
)

__all__ = [
    "PLUGIN_ID",
    "agent_end",
    "register_gateway_methods",
    "register_tools",
    "session_start",
    "startup",
]
