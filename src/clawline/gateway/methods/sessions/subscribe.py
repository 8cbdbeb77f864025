"""Session event subscriptions.

- ``sessions.subscribe {afterSeq?, bootId?}`` / ``sessions.unsubscribe {}``: ``sessions.changed``
  and ``session.message`` for every session, on this connection;
- ``sessions.messages.subscribe {key, afterSeq?, bootId?}`` /
  ``sessions.messages.unsubscribe {key}``: the ``session.message`` stream of one session.

With ``afterSeq`` (clawline's extension) the events after that sequence number which the new
subscription selects are replayed first, in order. Replay and the subscription change happen
with no ``await`` in between, so the live stream continues exactly where the replay ends: no
gap and no duplicate. ``bootId`` (from ``hello-ok.server.bootId``) guards against replaying
from another gateway incarnation.
"""

from __future__ import annotations

from clawline.gateway.methods.sessions.common import required_key
from clawline.gateway.methods.system import replay_missed
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_REPLAY = {"afterSeq": P.integer(min=0), "bootId": P.string(max_len=64)}
_KEY = P.string(required=True, min_len=1, max_len=512)


def _stream_position(call: Call, replayed: int | None) -> JSONObject:
    bus = call.gateway.bus
    out: JSONObject = {"lastSeq": bus.last_seq, "bootId": bus.boot_id}
    if replayed is not None:
        out["replayed"] = replayed
    return out


def _replay_if_asked(call: Call) -> int | None:
    """Replay after ``afterSeq`` (call after the subscription change; raises on a stale
    position, leaving the caller to undo it)."""
    after_seq = call.params.get("afterSeq")
    if after_seq is None:
        return None
    return replay_missed(call, after_seq, call.params.get("bootId"))


@methods.method("sessions.subscribe", scope=READ, schema=_REPLAY)
async def sessions_subscribe(call: Call) -> JSON:
    connection = call.connection
    before = connection.subscribed_sessions
    # The replay selects events by the connection's subscriptions, so they change first.
    connection.subscribed_sessions = True
    try:
        replayed = _replay_if_asked(call)
    except BaseException:
        connection.subscribed_sessions = before
        raise
    return {"subscribed": True, **_stream_position(call, replayed)}


@methods.method("sessions.unsubscribe", scope=READ, schema={})
async def sessions_unsubscribe(call: Call) -> JSON:
    call.connection.subscribed_sessions = False
    return {"subscribed": False}


@methods.method("sessions.messages.subscribe", scope=READ, schema={"key": _KEY, **_REPLAY})
async def sessions_messages_subscribe(call: Call) -> JSON:
    key = required_key(call)
    keys = call.connection.message_keys
    added = key not in keys
    keys.add(key)
    try:
        replayed = _replay_if_asked(call)
    except BaseException:
        if added:
            keys.discard(key)
        raise
    return {"subscribed": True, "key": key, **_stream_position(call, replayed)}


@methods.method(
    "sessions.messages.unsubscribe",
    scope=READ,
    schema={"key": P.string(required=True, min_len=1)},
)
async def sessions_messages_unsubscribe(call: Call) -> JSON:
    key = required_key(call)
    call.connection.message_keys.discard(key)
    return {"subscribed": False, "key": key}
