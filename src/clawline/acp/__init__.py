"""The ACP bridge, ``clawline acp``: clawline as an ACP agent on stdio, bridged to a gateway.

``stdio_server`` serves the connection (over the ``ndjson`` transport, whose lines ``lines``
reads and ``jsonrpc_envelope`` checks); ``bridge_agent`` is the ACP agent it serves, with its
session table (``session_table``), ``session/list`` (``listing``, ``list_cursor``, ``meta``),
prompts (``prompt``), run updates (``run_updates``), ``session/load`` replays (``replay``),
strict checks (``strict``) and JSON-RPC errors (``rpc_errors``); ``upstream`` is its gateway
connection. See docs/design-acp.md.
"""
