"""The channel methods: ``channels.status`` and ``send`` (docs/channels.md).

``channels.status`` answers
``{channels: [{channel, accountId, threads, connected, lastEventAt, outbox}]}`` — one row per
adapter and account with pending messages (at least the adapter's default account):
``connected`` is ``null`` for a channel that keeps no connection (the web chat, the webhook),
``lastEventAt`` ``null`` before the first inbound message, ``outbox`` the pending messages.

``send {channel, to, message, accountId?, threadId?, sessionKey?, idempotencyKey}`` queues an
explicit message to a conversation in the channel outbox — delivered, retried and given up like
a reply — and answers ``{id, status: "queued"}`` (``"duplicate"`` for an idempotency key already
queued to that conversation). A channel this gateway has no adapter for is refused.
"""

from __future__ import annotations

from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ, WRITE
from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.types import JSON, JSONObject

methods = MethodRegistry()


@methods.method("channels.status", scope=READ, schema={})
async def channels_status(call: Call) -> JSON:
    gateway = call.gateway
    depth = await gateway.workers.run(gateway.store.outbox.pending_counts)
    rows: list[JSONObject] = []
    for channel in gateway.channels.ids():
        adapter = gateway.channels.get(channel)
        if adapter is None:
            continue
        status = adapter.status()
        accounts = sorted({account for name, account in depth if name == channel}) or ["default"]
        for account in accounts:
            rows.append(
                {
                    "channel": channel,
                    "accountId": account,
                    "threads": adapter.capabilities(account).adapter_available,
                    "connected": status.connected,
                    "lastEventAt": status.last_event_at,
                    "outbox": depth.get((channel, account), 0),
                }
            )
    return {"channels": rows}


_ID = P.string(min_len=1, max_len=512)
SEND = {
    "channel": P.string(required=True, min_len=1, max_len=64),
    "to": P.string(required=True, min_len=1, max_len=512),
    "message": P.string(required=True, min_len=1, max_len=100_000),
    "accountId": _ID,
    "threadId": _ID,
    "sessionKey": _ID,
    "idempotencyKey": P.string(required=True, min_len=1, max_len=256),
}


@methods.method("send", scope=WRITE, schema=SEND)
async def send(call: Call) -> JSON:
    gateway = call.gateway
    params = call.params
    channel = params["channel"].strip().lower()
    if gateway.channels.get(channel) is None or channel == "webchat":
        raise GatewayError(f"unknown channel: {channel} (configured: {_configured(call)})")
    target = OutboxTarget(
        channel, params.get("accountId") or "default", params["to"], params.get("threadId")
    )
    now = gateway.clock.now_ms()
    item = OutboxItem(
        target=target,
        text=params["message"],
        kind="send",
        dedupe_key=f"send:{params['idempotencyKey']}@{target.describe()}",
        created_at=now,
        session_key=params.get("sessionKey"),
        next_attempt_at=now,
    )

    def queue() -> OutboxItem | None:
        with gateway.catalog.transaction() as work:
            return work.queue_outbox(item)

    queued = await gateway.workers.run(queue)
    if queued is None:
        return {"status": "duplicate"}
    return {"id": queued.id, "status": "queued"}


def _configured(call: Call) -> str:
    names = [name for name in call.gateway.channels.ids() if name != "webchat"]
    return ", ".join(names) or "none"
