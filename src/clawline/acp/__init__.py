"""The ACP bridge, ``clawline acp``: clawline as an ACP agent on stdio, bridged to a gateway.

``server`` serves the connection (over the ``ndjson`` transport, whose lines ``lines`` reads and
``envelope`` checks); ``agent`` is the ACP agent it serves, with its session table
(``sessions``), ``session/list`` (``listing``, ``cursor``, ``meta``), prompts (``prompt``), run
streams (``stream``), ``session/load`` replays (``replay``), strict checks (``strict``) and
JSON-RPC errors (``errors``); ``upstream`` is its gateway connection. See docs/design-acp.md.
"""
