"""The web chat over HTTP: ``/`` (the page) and ``/static/…`` (its files), with a strict
Content-Security-Policy.

Everything the page needs is in :data:`clawline.web.STATIC_DIR`; the policy allows scripts,
styles and data only from this origin (and the gateway WebSocket on it), no inline code, no
framing, no forms posting anywhere.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clawline.web import STATIC_DIR

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    )
)
"""``connect-src 'self'`` covers the WebSocket on the same host and port (CSP level 3)."""

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


class _SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response of the wrapped app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.decode("latin-1").lower() != "cache-control"
                ]
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _index(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers=SECURITY_HEADERS)


def web_routes() -> list[BaseRoute]:
    """``GET /`` and ``/static/…``; the gateway adds them before its WebSocket routes."""
    static = _SecurityHeaders(StaticFiles(directory=STATIC_DIR))
    return [Route("/", _index, methods=["GET", "HEAD"]), Mount("/static", app=static)]
