"""The ``webhook`` channel: inbound HTTP POSTs, outbound HTTP POSTs — a channel without threads.

It is the smallest real adapter, and the worked example of docs/channels.md:

- **inbound**: the gateway serves ``POST /channels/webhook``
  (:mod:`clawline.gateway.webhook_endpoint`). The request carries
  ``Authorization: Bearer <inboundToken>`` and a JSON object
  ``{"to", "from", "text", "messageId", "chat"?: "direct"|"group", "accountId"?}``;
  :meth:`WebhookChannel.inbound` checks both and makes the
  :class:`~clawline.channels.base.InboundMessage` the inbox routes.
- **outbound**: :meth:`WebhookChannel.send` POSTs ``{"id", "channel", "accountId", "to",
  "text", "kind", "sessionKey"?, "runId"?}`` to ``[channels.webhook] url`` with
  ``Idempotency-Key: clawline-outbox-<id>`` (a receiver that keeps the key drops the repeat a
  crash between sending and marking can cause) and ``Authorization: Bearer <token>`` when one
  is configured. 2xx: delivered (the answer's ``id``, if any, is kept); 429 (``Retry-After``),
  5xx, timeouts and connection errors: tried again later; 404, 410 and other 4xx: given up.
- **no threads**: its binding capabilities are ``{adapterAvailable: false}`` and its
  ``subagent_spawning`` hook refuses its own conversations, so ``sessions_spawn thread=true``
  (sub-agent or ACP) answers ``Thread bindings are unavailable for webhook.`` — as a channel
  without thread support does in OpenClaw (WeChat: ``… for openclaw-weixin.``).
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import httpx

from clawline.channels.base import (
    UNAVAILABLE,
    BindingCapabilities,
    ChannelAdapter,
    ChannelFeatures,
    ChannelStatus,
    DeliveryFailed,
    InboundMessage,
    SpawningError,
    SpawningResult,
    SubagentSpawning,
    TargetGone,
)
from clawline.channels.inbox import InboundRefused
from clawline.channels.thread_bindings.planning import unavailable_text
from clawline.config import DEFAULT_ACCOUNT_ID
from clawline.errors import InvalidInput

if TYPE_CHECKING:
    from clawline.config import WebhookChannelConfig
    from clawline.records.outbox import OutboxItem

WEBHOOK = "webhook"


class WebhookUnauthorized(InvalidInput):
    """An inbound POST without the configured bearer token (or with another one)."""


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    try:
        return max(float(value), 0.0) if value else None
    except ValueError:
        return None


class WebhookChannel(ChannelAdapter):
    """The webhook channel adapter (module docstring)."""

    id = WEBHOOK
    default_placement = "current"
    features = ChannelFeatures(formatting="plain")

    def __init__(
        self,
        config: WebhookChannelConfig,
        *,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        environment = os.environ if env is None else env
        self._url = config.url
        self._token = config.outbound_token(environment)
        self._inbound_token = config.inbound_secret(environment)
        self._client = httpx.AsyncClient(timeout=config.timeout_seconds, transport=transport)
        self._last_event_at: int | None = None

    def status(self) -> ChannelStatus:
        return ChannelStatus(connected=None, last_event_at=self._last_event_at)

    def capabilities(self, account_id: str) -> BindingCapabilities:
        return UNAVAILABLE

    @property
    def has_subagent_spawning_hook(self) -> bool:
        return True

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        """A sub-agent spawned with ``thread=true`` from a webhook conversation is answered the
        way a channel plugin without threads answers it in OpenClaw (its WeChat plugin:
        ``Thread bindings are unavailable for openclaw-weixin.``)."""
        if event.requester is None or event.requester.channel != WEBHOOK:
            return None
        return SpawningError(unavailable_text(WEBHOOK))

    # --- inbound --------------------------------------------------------------------------------

    @property
    def accepts_inbound(self) -> bool:
        """Whether an inbound token is configured (without one every POST is refused)."""
        return self._inbound_token is not None

    def inbound(self, authorization: str | None, body: object) -> InboundMessage:
        """The message of an inbound POST; :class:`WebhookUnauthorized` without the token,
        :class:`~clawline.channels.inbox.InboundRefused` for a malformed body."""
        given = (authorization or "").removeprefix("Bearer ").strip()
        expected = self._inbound_token
        if expected is None or not hmac.compare_digest(given.encode(), expected.encode()):
            raise WebhookUnauthorized("unauthorized: webhook token missing or wrong")
        self._last_event_at = time.time_ns() // 1_000_000
        if not isinstance(body, Mapping):
            raise InboundRefused("inbound message: the body must be a JSON object")
        fields: dict[str, Any] = {}
        for key, name in (("to", "to"), ("from", "sender"), ("text", "text")):
            value = body.get(key)
            if not isinstance(value, str):
                raise InboundRefused(f"inbound message: {key} must be a string")
            fields[name] = value
        message_id = body.get("messageId")
        if isinstance(message_id, int) and not isinstance(message_id, bool):
            message_id = str(message_id)
        if not isinstance(message_id, str):
            raise InboundRefused("inbound message: messageId must be a string")
        chat = body.get("chat", "direct")
        if chat not in ("direct", "group"):
            raise InboundRefused('inbound message: chat must be "direct" or "group"')
        account = body.get("accountId", DEFAULT_ACCOUNT_ID)
        if not isinstance(account, str):
            raise InboundRefused("inbound message: accountId must be a string")
        return InboundMessage(
            channel=WEBHOOK,
            account_id=account,
            message_id=message_id,
            chat=chat,
            **fields,
        )

    # --- outbound -------------------------------------------------------------------------------

    async def send(self, item: OutboxItem) -> str | None:
        if self._url is None:
            raise TargetGone("channels.webhook.url is not configured: replies cannot be sent")
        body: dict[str, Any] = {
            "id": item.id,
            "channel": WEBHOOK,
            "accountId": item.target.account_id,
            "to": item.target.to,
            "text": item.text,
            "kind": item.kind,
        }
        if item.session_key is not None:
            body["sessionKey"] = item.session_key
        if item.run_id is not None:
            body["runId"] = item.run_id
        headers = {"Idempotency-Key": f"clawline-outbox-{item.id}"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            response = await self._client.post(self._url, json=body, headers=headers)
        except httpx.HTTPError as error:
            raise DeliveryFailed(f"webhook POST failed: {type(error).__name__}") from error
        status = response.status_code
        if 200 <= status < 300:
            try:
                answer = response.json()
            except ValueError:
                return None
            remote = answer.get("id") if isinstance(answer, dict) else None
            return str(remote) if isinstance(remote, str | int) else None
        reason = f"webhook answered {status} {response.reason_phrase}".strip()
        if status == 429 or status >= 500 or status == 408:
            raise DeliveryFailed(reason, retry_after_s=_retry_after(response))
        raise TargetGone(reason)

    async def aclose(self) -> None:
        await self._client.aclose()
