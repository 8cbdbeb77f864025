"""The ``sessions.*`` gateway methods, gathered from their modules:

- :mod:`.sessions_list`: ``sessions.list``;
- :mod:`.sessions_lookup`: ``sessions.resolve``, ``sessions.preview``;
- :mod:`.sessions_write`: ``sessions.create``, ``sessions.patch``, ``sessions.delete``,
  ``sessions.reset``;
- :mod:`.sessions_subscribe`: ``sessions.subscribe``, ``sessions.unsubscribe``,
  ``sessions.messages.subscribe``, ``sessions.messages.unsubscribe``.

See docs/gateway-sessions.md.
"""

from __future__ import annotations

from clawline.gateway.methods import (
    sessions_list,
    sessions_lookup,
    sessions_subscribe,
    sessions_write,
)
from clawline.gateway.registry import MethodRegistry

__all__ = ["methods"]

methods = MethodRegistry()
for _module in (sessions_list, sessions_lookup, sessions_write, sessions_subscribe):
    methods.include(_module.methods)
