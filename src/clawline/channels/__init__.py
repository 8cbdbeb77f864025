"""Channels: adapters that tell clawline about conversations and threads (docs/collaboration.md).

- :mod:`clawline.channels.base`: the adapter protocol, capabilities, hook events and results;
- :mod:`clawline.channels.registry`: the adapter registry (``runtime.channels``) and hooks;
- :mod:`clawline.channels.webchat`: the built-in ``webchat`` adapter;
- :mod:`clawline.channels.webhook`, :mod:`clawline.channels.matrix` and
  :mod:`clawline.channels.telegram`: the ``webhook``, ``matrix`` and ``telegram`` adapters, built
  when their ``[channels.*]`` table exists (Matrix needs the ``matrix`` extra, Telegram the
  ``telegram`` one);
- :mod:`clawline.channels.inbox`, :mod:`clawline.channels.outbox_delivery`: inbound routing and
  outbound delivery; :mod:`clawline.channels.commands`: ``/focus``, ``/unfocus``,
  ``/subagents`` for every adapter;
- :mod:`clawline.channels.connections`: which adapters' connections this gateway runs (one
  instance per channel on a shared store);
- :mod:`clawline.channels.plugin`: the built-in plugin that registers it (and a registry of just
  the built-in adapters);
- :mod:`clawline.channels.thread_bindings`: thread bindings — choosing the conversation a spawn
  binds, planning ``sessions_spawn thread=true``, and the living bindings' routing, delivery,
  unbinding and expiry over the store.

Test adapters (threads and no threads) are in :mod:`clawline.testing.channels`.
"""

from __future__ import annotations

from clawline.channels.base import (
    WEBCHAT,
    BindingCapabilities,
    BindingTarget,
    ChannelAdapter,
    ChannelContext,
    ChannelFeatures,
    ConversationRef,
    DeliveryFailed,
    Placement,
    SpawningError,
    SpawningOk,
    SpawningResult,
    SubagentEnded,
    SubagentSpawning,
    TargetGone,
    split_message,
)
from clawline.channels.plugin import default_channel_registry
from clawline.channels.registry import ChannelRegistry
from clawline.channels.webchat import WebchatAdapter

__all__ = [
    "WEBCHAT",
    "BindingCapabilities",
    "BindingTarget",
    "ChannelAdapter",
    "ChannelContext",
    "ChannelFeatures",
    "ChannelRegistry",
    "ConversationRef",
    "DeliveryFailed",
    "Placement",
    "SpawningError",
    "SpawningOk",
    "SpawningResult",
    "SubagentEnded",
    "SubagentSpawning",
    "TargetGone",
    "WebchatAdapter",
    "default_channel_registry",
    "split_message",
]
