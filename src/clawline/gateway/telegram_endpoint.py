"""``POST /channels/telegram``: the Telegram channel's webhook (docs/channels.md, "Telegram").

Telegram POSTs each update as JSON with ``X-Telegram-Bot-Api-Secret-Token``; the adapter
(:class:`~clawline.channels.telegram.TelegramChannel`) compares it with the configured secret in
constant time and hands the update on (a command is answered, a text message goes to the
inbox). Answers: ``200 {"ok": true}`` once the update is handled (Telegram sends it again
after anything else); ``401`` without the right secret; ``400`` for a body that is no update;
``413`` for one over :data:`MAX_BODY_BYTES`; ``404`` unless ``[channels.telegram]`` is in webhook
mode with a secret.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clawline.channels.inbox import InboundRefused
from clawline.gateway.webhook_endpoint import MAX_BODY_BYTES, read_body

if TYPE_CHECKING:
    from clawline.channels.registry import ChannelRegistry


def _refused(status: int, error: str) -> JSONResponse:
    return JSONResponse({"ok": False, "error": error}, status_code=status)


def telegram_routes(channels: ChannelRegistry) -> list[Route]:
    async def receive(request: Request) -> JSONResponse:
        # python-telegram-bot is the telegram extra: imported only when a request comes
        from clawline.channels.telegram import (
            SECRET_HEADER,
            TELEGRAM,
            TelegramChannel,
            TelegramUnauthorized,
        )

        adapter = channels.get(TELEGRAM)
        if not isinstance(adapter, TelegramChannel) or not adapter.accepts_webhook:
            return _refused(404, "the telegram channel does not take webhook updates here")
        try:
            adapter.check_secret(request.headers.get(SECRET_HEADER))
        except TelegramUnauthorized as error:
            return _refused(401, str(error))
        raw = await read_body(request)
        if raw is None:
            return _refused(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw)
        except ValueError:
            return _refused(400, "telegram update: the body must be JSON")
        try:
            await adapter.receive_webhook(body)
        except InboundRefused as error:
            return _refused(400, str(error))
        return JSONResponse({"ok": True})

    return [Route("/channels/telegram", receive, methods=["POST"])]
