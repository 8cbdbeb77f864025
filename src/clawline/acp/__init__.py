"""clawline and the Agent Client Protocol (ACP v1): the bridge (agent side) and the client side
(session families, listing). See docs/design-acp.md."""
