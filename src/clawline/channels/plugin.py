"""clawline's own channel adapters as a built-in plugin: :class:`ChannelsPlugin` (``webchat``,
``webhook`` when ``[channels.webhook]`` exists, ``matrix`` and ``telegram`` when their tables
do), and :func:`default_channel_registry`, a registry holding just the always-present ones.

The runtime builds it and adds it to the plugin manager with source ``builtin``; its
``register_channels`` is ``tryfirst``, so ``webchat`` is registered before any plugin's adapter
and keeps its name.
"""

from __future__ import annotations

from clawline.channels.base import ChannelAdapter
from clawline.channels.registry import ChannelRegistry
from clawline.channels.webchat import WebchatAdapter
from clawline.channels.webhook import WebhookChannel
from clawline.config import (
    ChannelsConfig,
    ConfigError,
    MatrixChannelConfig,
    TelegramChannelConfig,
)
from clawline.plugins.hookspecs import hookimpl


class ChannelsPlugin:
    """Registers the built-in adapters: ``webchat`` always, the configured ones besides (with no
    channel configured nothing else is built, so nothing else starts)."""

    PLUGIN_ID = "clawline.channels"

    def __init__(self, config: ChannelsConfig | None = None) -> None:
        self._config = config or ChannelsConfig()

    @hookimpl(tryfirst=True)
    def register_channels(self, channels: ChannelRegistry) -> None:
        channels.register(WebchatAdapter())
        if self._config.webhook is not None:
            channels.register(WebhookChannel(self._config.webhook))
        if self._config.telegram is not None:
            channels.register(_telegram_channel(self._config.telegram))
        if self._config.matrix is not None:
            channels.register(_matrix_channel(self._config.matrix))


def _matrix_channel(config: MatrixChannelConfig) -> ChannelAdapter:
    """The Matrix adapter, imported only when configured: matrix-nio is the ``matrix`` extra."""
    try:
        from clawline.channels.matrix import MatrixChannel  # the optional extra, when configured
    except ImportError as error:
        raise ConfigError(
            "[channels.matrix] needs matrix-nio: pip install 'clawline[matrix]'"
        ) from error
    return MatrixChannel(config)


def _telegram_channel(config: TelegramChannelConfig) -> ChannelAdapter:
    """The Telegram adapter, imported only when configured: python-telegram-bot is the
    ``telegram`` extra (and costs a seventh of a second at every start of the CLI)."""
    try:
        from clawline.channels.telegram import TelegramChannel
    except ImportError as error:
        raise ConfigError(
            "[channels.telegram] needs python-telegram-bot: pip install 'clawline[telegram]'"
        ) from error
    return TelegramChannel(config)


def default_channel_registry() -> ChannelRegistry:
    """The built-in adapters: ``webchat``."""
    return ChannelRegistry([WebchatAdapter()])
