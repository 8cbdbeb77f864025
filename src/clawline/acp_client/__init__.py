"""The ACP client stack: talking to any ACP agent from the client side (docs/acp-client.md).

``link`` connects to an agent (a spawned process or a connection you have) and initialises it;
``walk`` walks its ``session/list`` pages; ``family`` rebuilds a session's family from them. A
client library: it imports the ACP SDK and clawline's base modules, nothing of the domain.
"""
