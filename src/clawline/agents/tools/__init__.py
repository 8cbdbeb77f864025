"""Agent tools: the tool protocol, the registry and the workspace file tools."""
