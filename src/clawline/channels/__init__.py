"""Channels: adapters that tell clawline about conversations and threads (docs/collaboration.md).

- :mod:`clawline.channels.base`: the adapter protocol, capabilities, hook events and results;
- :mod:`clawline.channels.planning`: choosing the conversation a spawn binds, the refusal texts;
- :mod:`clawline.channels.registry`: the adapter registry (``runtime.channels``) and hooks;
- :mod:`clawline.channels.webchat`: the built-in ``webchat`` adapter;
- :mod:`clawline.channels.plugin`: the built-in plugin that registers it.

Test adapters (threads and no threads) are in :mod:`clawline.testing.channels`. The binding
rules, routing and expiry over the store are in :mod:`clawline.collab.threads` and
:mod:`clawline.collab.bindings`.
"""

from __future__ import annotations

from clawline.channels.base import (
    BindingCapabilities,
    BindingTarget,
    ChannelAdapter,
    ChannelContext,
    ConversationRef,
    Placement,
    SpawningError,
    SpawningOk,
    SpawningResult,
    SubagentEnded,
    SubagentSpawning,
)
from clawline.channels.registry import ChannelRegistry, default_channel_registry
from clawline.channels.webchat import WEBCHAT, WebchatAdapter

__all__ = [
    "WEBCHAT",
    "BindingCapabilities",
    "BindingTarget",
    "ChannelAdapter",
    "ChannelContext",
    "ChannelRegistry",
    "ConversationRef",
    "Placement",
    "SpawningError",
    "SpawningOk",
    "SpawningResult",
    "SubagentEnded",
    "SubagentSpawning",
    "WebchatAdapter",
    "default_channel_registry",
]
