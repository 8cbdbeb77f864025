"""``health`` and ``events.replay``."""

from __future__ import annotations

from clawline.gateway.bus import EventsNotRetained
from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.types import JSON

methods = MethodRegistry()


@methods.method("health", scope=None, schema={})
async def health(call: Call) -> JSON:
    bus = call.gateway.bus
    return {
        "ok": True,
        "status": "live",
        "ts": call.gateway.clock.now_ms(),
        "bootId": bus.boot_id,
        "lastSeq": bus.last_seq,
        "store": call.gateway.store.backend,
    }


def replay_missed(call: Call, after_seq: int, boot_id: str | None) -> int:
    """Queue, on this connection, the retained events after ``after_seq`` it would have
    received; return how many. Must run without an ``await`` before the caller's
    subscription change takes effect, so no live event slips in between."""
    bus = call.gateway.bus
    try:
        missed = bus.missed(call.connection, after_seq, boot_id)
    except EventsNotRetained as error:
        raise GatewayError(
            error.message,
            details={
                "bootId": bus.boot_id,
                "lastSeq": bus.last_seq,
                "oldestSeq": bus.oldest_retained_seq,
                "errorType": error.category.__name__,
                "errorClass": type(error).__name__,
            },
        ) from None
    for event in missed:
        call.connection.deliver_replayed(event)
    return len(missed)


@methods.method(
    "events.replay",
    scope=READ,
    schema={"afterSeq": P.integer(required=True, min=0), "bootId": P.string(max_len=64)},
)
async def events_replay(call: Call) -> JSON:
    """Send again, in order, the events after ``afterSeq`` that this connection's current
    subscriptions select (clawline's extension for reconnecting clients)."""
    count = replay_missed(call, call.params["afterSeq"], call.params.get("bootId"))
    bus = call.gateway.bus
    return {"replayed": count, "lastSeq": bus.last_seq, "bootId": bus.boot_id}
