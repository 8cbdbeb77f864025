"""``health`` and ``events.replay``."""

from __future__ import annotations

from clawline.gateway.bus import EventsNotRetained, Replay
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
        "instanceId": call.gateway.instance.instance_id,
    }


def _refusal(call: Call, error: EventsNotRetained) -> GatewayError:
    bus = call.gateway.bus
    return GatewayError(
        error.message,
        details={
            "bootId": bus.boot_id,
            "lastSeq": bus.last_seq,
            "oldestSeq": bus.oldest_retained_seq,
            "errorType": error.category.__name__,
            "errorClass": type(error).__name__,
        },
    )


async def prepare_replay(call: Call, after_seq: int, boot_id: str | None) -> Replay:
    """The replay of the events after ``after_seq`` made ready (a shared stream may read the
    store for it); refused as a :class:`GatewayError` when they are gone."""
    try:
        return await call.gateway.bus.replay_from(after_seq, boot_id)
    except EventsNotRetained as error:
        raise _refusal(call, error) from None


def deliver_replay(call: Call, replay: Replay) -> int:
    """Queue, on this connection, the events of ``replay`` its subscriptions select; return
    how many. Call it with no ``await`` after :func:`prepare_replay` returned, and make the
    subscription change it replays for in between, so no live event slips in between."""
    try:
        missed = replay.select(call.connection)
    except EventsNotRetained as error:
        raise _refusal(call, error) from None
    for event in missed:
        call.connection.deliver_replayed(event)
    return len(missed)


async def replay_missed(call: Call, after_seq: int, boot_id: str | None) -> int:
    """Queue, on this connection, the retained events after ``after_seq`` it would have
    received (by its current subscriptions); return how many."""
    return deliver_replay(call, await prepare_replay(call, after_seq, boot_id))


@methods.method(
    "events.replay",
    scope=READ,
    schema={"afterSeq": P.integer(required=True, min=0), "bootId": P.string(max_len=64)},
)
async def events_replay(call: Call) -> JSON:
    """Send again, in order, the events after ``afterSeq`` that this connection's current
    subscriptions select (clawline's extension for reconnecting clients)."""
    count = await replay_missed(call, call.params["afterSeq"], call.params.get("bootId"))
    bus = call.gateway.bus
    return {"replayed": count, "lastSeq": bus.last_seq, "bootId": bus.boot_id}
