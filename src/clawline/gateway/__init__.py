"""The OpenClaw-compatible gateway: WebSocket protocol, methods, events and the HTTP routes."""
