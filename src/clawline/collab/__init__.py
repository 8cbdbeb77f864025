"""Collaboration between sessions: agent-to-agent messages and the session tools.

- :mod:`clawline.collab.policy`: ``tools.agentToAgent`` and ``tools.sessions.visibility``;
- :mod:`clawline.collab.send`: ``sessions_send`` (and :mod:`clawline.collab.a2a`, the
  ping-pong and announce step that follow it);
- :mod:`clawline.collab.session_tools`: ``sessions_list``, ``sessions_history``,
  ``sessions_yield``;
- :mod:`clawline.collab.spawn`: ``sessions_spawn``; :mod:`clawline.collab.subagents_tool`:
  ``subagents``; :mod:`clawline.collab.subagents` (run records), :mod:`clawline.collab.announce`
  (the durable completion inbox), :mod:`clawline.collab.recovery`, :mod:`clawline.collab.sweepers`.

Every part is built by the runtime with the parts it uses (:mod:`clawline.runtime`).
:class:`~clawline.collab.tools.CollabTools` builds the session tools;
:class:`~clawline.collab.plugin.CollabPlugin` registers them (the built-in ``register_tools``
hook) and :class:`~clawline.collab.tool_host.CollabToolHost` gives plugin tools the same
behaviour (``ToolContext.host``).
"""
