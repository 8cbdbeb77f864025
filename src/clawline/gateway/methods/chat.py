"""``chat.send``, ``chat.history``, ``chat.abort`` and ``chat.inject`` (docs/gateway-chat.md).

The methods are thin: they check params and scopes and call the run manager
(:mod:`clawline.agents.run_manager`), which writes the transcript and publishes the ``chat``,
``agent``, ``session.message`` and ``sessions.changed`` events. See docs/gateway-chat.md.
"""

from __future__ import annotations

from typing import Any

from clawline.agents.chat_history import (
    HISTORY_BUDGET_BYTES,
    HISTORY_DEFAULT_LIMIT,
    HISTORY_DEFAULT_MAX_CHARS,
    HISTORY_MAX_CHARS,
    HISTORY_MAX_LIMIT,
    history_messages,
)
from clawline.agents.inject import MAX_INJECT_LABEL
from clawline.agents.messages import MAX_IDEMPOTENCY_KEY
from clawline.agents.run import RunsClosed, SendAck
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.methods.sessions.common import refuse_blank_key, required_key
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH
from clawline.pairing.scopes import ADMIN, READ, WRITE, has_scope
from clawline.records.session import SessionEntry
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_KEY = P.string(required=True, min_len=1, max_len=MAX_KEY_LENGTH)
_SHORT = 1024

SEND = {
    "sessionKey": _KEY,
    "message": P.string(required=True),
    "idempotencyKey": P.string(required=True, min_len=1, max_len=MAX_IDEMPOTENCY_KEY),
    "thinking": P.string(max_len=64),
    "deliver": P.boolean(),
    "sessionId": P.string(max_len=_SHORT),
    "originatingChannel": P.string(max_len=_SHORT),
    "originatingTo": P.string(max_len=_SHORT),
    "originatingAccountId": P.string(max_len=_SHORT),
    "originatingThreadId": P.string(max_len=_SHORT),
    "attachments": P.array(P.object()),
    "timeoutMs": P.integer(min=0),
    "systemInputProvenance": P.anything(),
    "systemProvenanceReceipt": P.anything(),
}
HISTORY_MIN_BYTES = 1024
"""OpenClaw's lower bound of ``maxBytes``."""
MAX_INPUT_RUN_IDS = 50
"""The most run ids one ``chat.history {inputRunIds}`` asks about (OpenClaw's cap)."""
HISTORY = {
    "sessionKey": _KEY,
    "limit": P.integer(min=1, max=HISTORY_MAX_LIMIT),
    "maxChars": P.integer(min=1, max=HISTORY_MAX_CHARS),
    "maxBytes": P.integer(min=HISTORY_MIN_BYTES),
    "sessionId": P.string(max_len=_SHORT),
    "inputRunIds": P.array(
        P.string(min_len=1, max_len=MAX_IDEMPOTENCY_KEY), max_len=MAX_INPUT_RUN_IDS
    ),
}
ABORT = {"sessionKey": _KEY, "runId": P.string(min_len=1, max_len=MAX_IDEMPOTENCY_KEY)}
INJECT = {
    "sessionKey": _KEY,
    "message": P.string(required=True),
    "label": P.string(max_len=MAX_INJECT_LABEL),
}

PROVENANCE_FIELDS = ("systemInputProvenance", "systemProvenanceReceipt")


def refuse_provenance(call: Call, fields: tuple[str, ...] = PROVENANCE_FIELDS) -> None:
    """System provenance may only be claimed by admin connections (OpenClaw's text)."""
    info = call.connection.info
    claimed = any(call.params.get(name) is not None for name in fields)
    if claimed and (info is None or not has_scope(info.scopes, ADMIN)):
        raise GatewayError("system provenance fields require admin scope")


async def send_through_runs(call: Call, **kwargs: Any) -> SendAck:
    """``runs.send`` with a shutting-down manager answered as ``UNAVAILABLE``."""
    try:
        return await call.gateway.runs.send(**kwargs)
    except RunsClosed as error:
        raise GatewayError(error.message, ErrorCode.UNAVAILABLE, retryable=True) from None


@methods.method("chat.send", scope=WRITE, schema=SEND)
async def chat_send(call: Call) -> JSON:
    """``{runId, status:"started"}``; ``in_flight`` for a key whose run is still active; the
    cached terminal response for a key whose run ended in the last five minutes."""
    params = call.params
    refuse_blank_key(call, "sessionKey")
    refuse_provenance(call)
    ack = await send_through_runs(
        call,
        session_key=params["sessionKey"],
        message=params["message"],
        idempotency_key=params["idempotencyKey"],
        origin="chat",
        timeout_ms=params.get("timeoutMs"),
        deliver=bool(params.get("deliver", False)),
        attachments=params.get("attachments"),
        thinking=params.get("thinking"),
    )
    return ack.to_json()


async def read_history(
    call: Call, key: str, *, limit: int | None = None, max_bytes: int | None = None
) -> tuple[JSONObject, SessionEntry | None]:
    """The ``chat.history`` answer for the canonical ``key`` and the session's entry (``None``
    for an unknown session). ``max_bytes`` caps the encoded messages below the 6 MiB budget;
    the oldest messages are dropped first."""
    gateway = call.gateway
    entry = await gateway.workers.run(gateway.catalog.get, key)
    result: JSONObject = {"sessionKey": key, "sessionId": None, "messages": []}
    if entry is not None:
        budget = HISTORY_BUDGET_BYTES if max_bytes is None else min(max_bytes, HISTORY_BUDGET_BYTES)
        result["sessionId"] = entry.session_id
        messages = await gateway.workers.run(
            history_messages,
            gateway.store,
            entry.session_id,
            limit=HISTORY_DEFAULT_LIMIT if limit is None else limit,
            max_chars=call.params.get("maxChars", HISTORY_DEFAULT_MAX_CHARS),
            budget=budget,
        )
        for message in messages:
            # OpenClaw's clients find the message a send made by its key; a run's id is its key
            run_id = message.get("runId")
            if message.get("role") == "user" and isinstance(run_id, str):
                message.setdefault("idempotencyKey", run_id)
        result["messages"] = messages
    for name in ("thinkingLevel", "fastMode", "verboseLevel"):
        result[name] = entry.extra.get(name) if entry is not None else None
    return result, entry


@methods.method("chat.history", scope=READ, schema=HISTORY)
async def chat_history(call: Call) -> JSON:
    """The last ``limit`` messages of the session (unknown session: no messages); with
    ``inputRunIds``, OpenClaw's (empty) pending-input receipts too."""
    key = required_key(call, "sessionKey")
    result, _ = await read_history(
        call, key, limit=call.params.get("limit"), max_bytes=call.params.get("maxBytes")
    )
    if call.params.get("inputRunIds") is not None:
        # OpenClaw's receipts are for messages queued as pending inputs; clawline writes every
        # accepted message to the transcript at once (found by its idempotencyKey), so none
        # is pending.
        result["inputReceipts"] = []
        result["inputConsumptions"] = []
    return result


@methods.method("chat.abort", scope=WRITE, schema=ABORT)
async def chat_abort(call: Call) -> JSON:
    """Abort ``runId`` of the session, else every queued and running run of it."""
    refuse_blank_key(call, "sessionKey")
    run_ids = await call.gateway.runs.abort(call.params["sessionKey"], call.params.get("runId"))
    return {"ok": True, "aborted": bool(run_ids), "runIds": list(run_ids)}


@methods.method("chat.inject", scope=WRITE, schema=INJECT)
async def chat_inject(call: Call) -> JSON:
    """Append an assistant message without running the agent."""
    refuse_blank_key(call, "sessionKey")
    params = call.params
    stored = await call.gateway.runs.inject(
        params["sessionKey"], params["message"], params.get("label")
    )
    return {"ok": True, "messageId": stored["id"]}
