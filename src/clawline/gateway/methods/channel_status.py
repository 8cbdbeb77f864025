"""``channels.status``: every channel adapter this gateway runs, how it is doing, its outbox.

``{channels: [{channel, accountId, threads, connected, lastEventAt, outbox}]}`` — one row per
adapter and account with pending messages (at least the adapter's default account):
``connected`` is ``null`` for a channel that keeps no connection (the web chat, the webhook),
``lastEventAt`` ``null`` before the first inbound message, ``outbox`` the pending messages.
"""

from __future__ import annotations

from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
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
