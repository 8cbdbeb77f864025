"""Thread bindings: a session bound to a conversation of a channel account
(docs/collaboration.md, "Thread bindings and channels").

- :mod:`~clawline.channels.thread_bindings.planning`: :func:`plan_binding`, the conversation a
  spawn binds, checked in OpenClaw's order, and the exact refusal texts (the adapters'
  ``subagent_spawning`` hooks use it too);
- :mod:`~clawline.channels.thread_bindings.planner`: :class:`ThreadPlanner`, the plan of a
  ``sessions_spawn`` with ``thread=true`` before anything is written, the requester's channel
  context, and :func:`bind_thread`, the write inside the spawn's transaction;
- :mod:`~clawline.channels.thread_bindings.living`: :class:`ThreadBindings`
  (``runtime.thread_bindings``), the bindings once they exist: inbound routing, completion
  delivery, unbinding and expiry.

The rows are kept by the store (``store.bindings``, :mod:`clawline.store._bindings_sql`); the
``threadBindings`` settings are parsed by :mod:`clawline.config`.

This package imports nothing at import time (the adapters import ``planning`` while the
channels package itself is loading); import the modules.
"""
