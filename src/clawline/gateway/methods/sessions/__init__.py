"""The ``sessions.*`` gateway methods, gathered from their modules:

- :mod:`.listing`: ``sessions.list``;
- :mod:`.lookup`: ``sessions.resolve``, ``sessions.preview``;
- :mod:`.write`: ``sessions.create``, ``sessions.patch``, ``sessions.delete``,
  ``sessions.reset``;
- :mod:`.describe`: ``sessions.describe``, ``sessions.branches.list``;
- :mod:`.subscribe`: ``sessions.subscribe``, ``sessions.unsubscribe``,
  ``sessions.messages.subscribe``, ``sessions.messages.unsubscribe``;
- :mod:`.common`: what they share (with the chat and agent methods too): listing defaults,
  webchat refusals, the required session key, the main session check, model resolution.

See docs/gateway-sessions.md.
"""

from __future__ import annotations

from clawline.gateway.methods.sessions import describe, listing, lookup, subscribe, write
from clawline.gateway.registry import MethodRegistry

methods = MethodRegistry()
for _module in (listing, lookup, describe, write, subscribe):
    methods.include(_module.methods)
