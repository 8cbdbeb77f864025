"""clawline's own channel adapters as a built-in plugin: :class:`ChannelsPlugin` (``webchat``),
and :func:`default_channel_registry`, a registry holding just them.

The runtime builds it and adds it to the plugin manager with source ``builtin``; its
``register_channels`` is ``tryfirst``, so ``webchat`` is registered before any plugin's adapter
and keeps its name.
"""

from __future__ import annotations

from clawline.channels.registry import ChannelRegistry
from clawline.channels.webchat import WebchatAdapter
from clawline.plugins.hookspecs import hookimpl


class ChannelsPlugin:
    """Registers the built-in ``webchat`` adapter."""

    PLUGIN_ID = "clawline.channels"

    @hookimpl(tryfirst=True)
    def register_channels(self, channels: ChannelRegistry) -> None:
        channels.register(WebchatAdapter())


def default_channel_registry() -> ChannelRegistry:
    """The built-in adapters: ``webchat``."""
    return ChannelRegistry([WebchatAdapter()])
