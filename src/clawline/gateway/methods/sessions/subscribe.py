"""Session event subscriptions.

- ``sessions.subscribe {afterSeq?, bootId?}`` / ``sessions.unsubscribe {}``: ``sessions.changed``
  and ``session.message`` for every session, on this connection;
- ``sessions.messages.subscribe {key, afterSeq?, bootId?}`` /
  ``sessions.messages.unsubscribe {key}``: the ``session.message`` stream of one session.

With ``afterSeq`` (clawline's extension) the events after that sequence number which the new
subscription selects are replayed first, in order. The replay is made ready first (on a stream
shared by several gateway instances that may read the store); then the subscription change and
the replay's delivery happen with no ``await`` in between, so the live stream continues
exactly where the replay ends: no gap and no duplicate. ``bootId`` (from
``hello-ok.server.bootId``) guards against replaying from another stream.
"""

from __future__ import annotations

from clawline.gateway.bus import Replay
from clawline.gateway.frames import GatewayError
from clawline.gateway.methods.sessions.common import required_key
from clawline.gateway.methods.system import deliver_replay, prepare_replay
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import ADMIN, READ
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

APPROVALS = "operator.approvals"

_REPLAY = {"afterSeq": P.integer(min=0), "bootId": P.string(max_len=64)}
_KEY = P.string(required=True, min_len=1, max_len=512)


def _stream_position(call: Call, replayed: int | None) -> JSONObject:
    bus = call.gateway.bus
    out: JSONObject = {"lastSeq": bus.last_seq, "bootId": bus.boot_id}
    if replayed is not None:
        out["replayed"] = replayed
    return out


async def _replay_if_asked(call: Call) -> Replay | None:
    """The replay after ``afterSeq`` made ready, if asked (raises on a stale position)."""
    after_seq = call.params.get("afterSeq")
    if after_seq is None:
        return None
    return await prepare_replay(call, after_seq, call.params.get("bootId"))


def _deliver(call: Call, replay: Replay | None) -> int | None:
    """Deliver ``replay`` (call after the subscription change, with no ``await`` since the
    replay was made ready; raises when it can no longer be, leaving the caller to undo it)."""
    return None if replay is None else deliver_replay(call, replay)


@methods.method("sessions.subscribe", scope=READ, schema=_REPLAY)
async def sessions_subscribe(call: Call) -> JSON:
    replay = await _replay_if_asked(call)
    connection = call.connection
    before = connection.subscribed_sessions
    # The replay selects events by the connection's subscriptions, so they change first.
    connection.subscribed_sessions = True
    try:
        replayed = _deliver(call, replay)
    except BaseException:
        connection.subscribed_sessions = before
        raise
    return {"subscribed": True, **_stream_position(call, replayed)}


@methods.method("sessions.unsubscribe", scope=READ, schema={})
async def sessions_unsubscribe(call: Call) -> JSON:
    call.connection.subscribed_sessions = False
    return {"subscribed": False}


MESSAGES = {
    "key": _KEY,
    "agentId": P.string(min_len=1, max_len=128),
    # OpenClaw's opt-in to approval events; clawline has no approvals, so there are none to add.
    "includeApprovals": P("boolean", choices=(True,)),
    **_REPLAY,
}


def _may_review_approvals(call: Call) -> bool:
    """OpenClaw's rule: admin, or ``operator.approvals`` on a paired device."""
    info = call.connection.info
    if info is None:
        return False
    if ADMIN in info.scopes:
        return True
    return APPROVALS in info.scopes and info.device_id is not None


@methods.method("sessions.messages.subscribe", scope=READ, schema=MESSAGES)
async def sessions_messages_subscribe(call: Call) -> JSON:
    key = required_key(call)
    approvals = bool(call.params.get("includeApprovals"))
    if approvals and not _may_review_approvals(call):
        raise GatewayError(
            "sessions.messages.subscribe includeApprovals requires a paired device and gateway "
            "scope: operator.approvals"
        )
    replay = await _replay_if_asked(call)
    keys = call.connection.message_keys
    added = key not in keys
    keys.add(key)
    try:
        replayed = _deliver(call, replay)
    except BaseException:
        if added:
            keys.discard(key)
        raise
    result: JSONObject = {"subscribed": True, "key": key, **_stream_position(call, replayed)}
    if approvals:
        result["approvalReplay"] = []
    return result


@methods.method(
    "sessions.messages.unsubscribe",
    scope=READ,
    schema={"key": P.string(required=True, min_len=1)},
)
async def sessions_messages_unsubscribe(call: Call) -> JSON:
    key = required_key(call)
    call.connection.message_keys.discard(key)
    return {"subscribed": False, "key": key}
