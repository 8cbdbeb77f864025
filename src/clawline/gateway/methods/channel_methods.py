"""The channel methods: ``channels.status`` and ``send`` (docs/channels.md).

``channels.status {probe?, timeoutMs?, channel?}`` answers
``{channels: [{channel, accountId, threads, connected, lastEventAt, outbox}]}`` — one row per
adapter and account with pending messages (at least the adapter's default account):
``connected`` is ``null`` for a channel that keeps no connection (the web chat, the webhook),
``lastEventAt`` ``null`` before the first inbound message, ``outbox`` the pending messages —
and beside it OpenClaw's keys, which its Control UI reads: ``ts``, ``channelOrder``,
``channelLabels``, ``channelAccounts`` (the same rows as account snapshots, by channel) and
``channelDefaultAccountId``. ``channel`` narrows the answer to one channel; ``probe`` and
``timeoutMs`` are accepted (clawline's status is always current, there is nothing to probe).

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


STATUS = {
    "probe": P.boolean(),
    "timeoutMs": P.integer(min=0),
    "channel": P.string(min_len=1, max_len=64),
}


def _account_snapshot(row: JSONObject) -> JSONObject:
    """One row as OpenClaw's ``ChannelAccountSnapshot`` (clawline's fields kept beside)."""
    snapshot: JSONObject = {
        "accountId": row["accountId"],
        "configured": True,
        "running": True,
        "lastInboundAt": row["lastEventAt"],
        **row,
    }
    if row["connected"] is None:
        del snapshot["connected"]
    return snapshot


@methods.method("channels.status", scope=READ, schema=STATUS)
async def channels_status(call: Call) -> JSON:
    gateway = call.gateway
    only = call.params.get("channel")
    depth = await gateway.workers.run(gateway.store.outbox.pending_counts)
    rows: list[JSONObject] = []
    for channel in gateway.channels.ids():
        adapter = gateway.channels.get(channel)
        if adapter is None or (only is not None and channel != only.strip().lower()):
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
    order = list(dict.fromkeys(str(row["channel"]) for row in rows))
    accounts_by_channel: dict[str, list[JSON]] = {name: [] for name in order}
    for row in rows:
        accounts_by_channel[str(row["channel"])].append(_account_snapshot(row))
    default_accounts: dict[str, JSON] = {
        name: "default"
        if any(row["accountId"] == "default" for row in rows if row["channel"] == name)
        else next(str(row["accountId"]) for row in rows if row["channel"] == name)
        for name in order
    }
    labels: dict[str, JSON] = {name: name for name in order}
    channels: list[JSON] = list(rows)
    return {
        "ts": gateway.clock.now_ms(),
        "channelOrder": list[JSON](order),
        "channelLabels": labels,
        "channelAccounts": dict[str, JSON](accounts_by_channel),
        "channelDefaultAccountId": default_accounts,
        # OpenClaw's ``channels`` is a summary per channel id; clawline's clients (the CLI) read
        # the per-account rows here, and the Control UI reads ``channelAccounts`` first.
        "channels": channels,
    }


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
