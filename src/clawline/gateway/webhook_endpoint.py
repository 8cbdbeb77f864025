"""``POST /channels/webhook``: the webhook channel's inbound endpoint (docs/channels.md).

The body (at most :data:`MAX_BODY_BYTES`) goes to the adapter
(:meth:`~clawline.channels.webhook.WebhookChannel.inbound`: the bearer token, compared in
constant time, and the fields), then to the inbox, which routes it and starts its run. Answers:
``202 {"ok": true, "sessionKey", "runId", "status"}``; ``401`` without the right token; ``400``
for a malformed body; ``404`` when ``[channels.webhook]`` is not configured or has no inbound
token. The reply arrives later, as an outbound POST from the outbox.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clawline.channels.inbox import InboundRefused
from clawline.channels.webhook import WEBHOOK, WebhookChannel, WebhookUnauthorized
from clawline.errors import ClawlineError, InvalidInput

if TYPE_CHECKING:
    from clawline.channels.inbox import ChannelInbox
    from clawline.channels.registry import ChannelRegistry

MAX_BODY_BYTES = 1024 * 1024


def _refused(status: int, error: str) -> JSONResponse:
    return JSONResponse({"ok": False, "error": error}, status_code=status)


async def read_body(request: Request) -> bytes | None:
    """The request body, ``None`` once it passes :data:`MAX_BODY_BYTES` (read no further)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def webhook_routes(inbox: ChannelInbox, channels: ChannelRegistry) -> list[Route]:
    async def receive(request: Request) -> JSONResponse:
        adapter = channels.get(WEBHOOK)
        if not isinstance(adapter, WebhookChannel) or not adapter.accepts_inbound:
            return _refused(404, "the webhook channel does not take inbound messages here")
        raw = await read_body(request)
        if raw is None:
            return _refused(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        try:
            message = adapter.inbound(request.headers.get("authorization"), body)
        except WebhookUnauthorized as error:
            return _refused(401, str(error))
        except InboundRefused as error:
            return _refused(400, str(error))
        try:
            routed = await inbox.receive(message)
        except ClawlineError as error:
            status = 400 if isinstance(error, InvalidInput) else 503
            return _refused(status, str(error))
        answer = {
            "ok": True,
            "sessionKey": routed.session_key,
            "runId": routed.run_id,
            "status": routed.status,
        }
        return JSONResponse(answer, status_code=202)

    return [Route("/channels/webhook", receive, methods=["POST"])]
