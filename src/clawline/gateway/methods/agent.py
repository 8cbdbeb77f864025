"""``agent`` and ``agent.wait`` (docs/gateway-chat.md).

``agent`` answers twice with the same request id: first
``{runId, status:"accepted", acceptedAt}`` (sent through ``call.ack``), then, when the run has
ended, ``{runId, status:"ok", summary:"completed", result}`` — or a failure frame, code
``UNAVAILABLE``, carrying the payload ``{runId, status:"error", summary}``. It dedupes under
``agent:<idempotencyKey>``: a repeat while the run is active gets both frames too (the second
when the run ends); a repeat after it ended gets both frames from the cached outcome at once.
"""

from __future__ import annotations

import asyncio

from clawline import keys
from clawline.agents.messages import MAX_IDEMPOTENCY_KEY
from clawline.errors import SessionNotFound
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.methods.chat import send_through_runs
from clawline.gateway.methods.sessions.common import required_key
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH
from clawline.pairing.scopes import WRITE
from clawline.records.outbox import WEBCHAT_CHANNEL, OutboxTarget, origin_target
from clawline.types import JSON

methods = MethodRegistry()

AGENT_WAIT_DEFAULT_MS = 30_000
_SHORT = 1024
_TEXT = P.string(max_len=_SHORT)

AGENT = {
    "message": P.string(required=True),
    "idempotencyKey": P.string(required=True, min_len=1, max_len=MAX_IDEMPOTENCY_KEY),
    "agentId": P.string(min_len=1, max_len=64),
    "provider": _TEXT,
    "model": _TEXT,
    "to": _TEXT,
    "replyTo": _TEXT,
    "sessionId": P.string(min_len=1, max_len=128),
    "sessionKey": P.string(min_len=1, max_len=MAX_KEY_LENGTH),
    "thinking": P.string(max_len=64),
    "deliver": P.boolean(),
    "attachments": P.array(P.object()),
    "channel": _TEXT,
    "replyChannel": _TEXT,
    "accountId": _TEXT,
    "replyAccountId": _TEXT,
    "threadId": _TEXT,
    "groupId": _TEXT,
    "groupChannel": _TEXT,
    "groupSpace": _TEXT,
    "timeout": P.integer(min=0),
    "bestEffortDeliver": P.boolean(),
    "lane": P.string(max_len=64),
    "extraSystemPrompt": P.string(),
    "bootstrapContextMode": P.string(choices=("full", "lightweight")),
    "bootstrapContextRunKind": P.string(choices=("default", "heartbeat", "cron")),
    "internalEvents": P.array(),
    "inputProvenance": P.anything(),
    "label": P.string(max_len=512),
}
WAIT = {
    "runId": P.string(required=True, min_len=1, max_len=MAX_IDEMPOTENCY_KEY),
    "timeoutMs": P.integer(min=0),
}


async def _session_key(call: Call) -> str:
    """``sessionKey``; else the session holding ``sessionId``; else the main session of
    ``agentId`` (the default agent when absent)."""
    gateway = call.gateway
    params = call.params
    agent_id = params.get("agentId")
    if agent_id is not None:
        if not keys.is_valid_agent_id(agent_id):
            raise GatewayError(f"invalid agentId: {agent_id} (use [a-z0-9][a-z0-9_-]{{0,63}})")
        agent_id = agent_id.lower()
    if params.get("sessionKey") is not None:
        key = required_key(call, "sessionKey")
        if agent_id is not None and keys.agent_id_of(key) != agent_id:
            raise GatewayError(
                f"agent session key agent ({keys.agent_id_of(key)}) does not match "
                f"agentId ({agent_id})"
            )
        return key
    session_id = params.get("sessionId")
    if session_id is not None:
        entries = await gateway.workers.run(gateway.store.by_session_id, session_id)
        if not entries:
            raise SessionNotFound(f"No session found: {session_id}")
        if len(entries) > 1:
            found = ", ".join(entry.key for entry in entries)
            raise GatewayError(f"Multiple sessions found for sessionId: {session_id} ({found})")
        return entries[0].key
    catalog = gateway.catalog
    return keys.main_session_key(agent_id or catalog.default_agent_id, catalog.main_key)


async def _delivery(call: Call, key: str) -> OutboxTarget | None:
    """Where the run's reply goes besides the transcript (``deliver: true``): the conversation
    ``channel``/``to``/``accountId``/``threadId`` name — remembered as the session's origin —
    else the session's own origin (its ``lastChannel``…); the web chat needs no delivery."""
    params = call.params
    if not params.get("deliver"):
        return None
    gateway = call.gateway
    channel = (params.get("replyChannel") or params.get("channel") or "").strip().lower()
    to = (params.get("replyTo") or params.get("to") or "").strip()
    if channel and to and channel != WEBCHAT_CHANNEL:
        account = (params.get("replyAccountId") or params.get("accountId") or "").strip()
        thread = (params.get("threadId") or "").strip() or None
        target = OutboxTarget(channel, account or "default", to, thread)
        origin: dict[str, JSON] = {
            "lastChannel": target.channel,
            "lastTo": target.to,
            "lastAccountId": target.account_id,
            "lastThreadId": target.thread_id,
        }
        await gateway.workers.run(gateway.catalog.patch, key, origin)
        return target
    entry = await gateway.workers.run(gateway.catalog.get, key)
    return None if entry is None else origin_target(entry.extra)


@methods.method("agent", scope=WRITE, schema=AGENT)
async def agent(call: Call) -> JSON:
    params = call.params
    key = await _session_key(call)
    delivery = await _delivery(call, key)
    timeout_s = params.get("timeout")
    ack = await send_through_runs(
        call,
        session_key=key,
        message=params["message"],
        idempotency_key=params["idempotencyKey"],
        origin="agent",
        timeout_ms=None if timeout_s is None else timeout_s * 1000,
        extra_system_prompt=params.get("extraSystemPrompt"),
        lane=params.get("lane"),
        deliver=bool(params.get("deliver", False)),
        delivery=delivery,
        attachments=params.get("attachments"),
        thinking=params.get("thinking"),
    )
    await call.ack({"runId": ack.run_id, "status": "accepted", "acceptedAt": ack.accepted_at})
    # Shielded: a client that disconnects must not cancel the run's outcome for others.
    outcome = await asyncio.shield(ack.done)
    if outcome.ok:
        return outcome.response()
    raise GatewayError(
        outcome.summary,
        ErrorCode.UNAVAILABLE,
        payload={"runId": outcome.run_id, "status": "error", "summary": outcome.summary},
    )


@methods.method("agent.wait", scope=WRITE, schema=WAIT)
async def agent_wait(call: Call) -> JSON:
    """``{runId, status:"ok"|"error"|"timeout", startedAt?, endedAt?, error?}``."""
    timeout_ms = call.params.get("timeoutMs", AGENT_WAIT_DEFAULT_MS)
    return await call.gateway.runs.wait(call.params["runId"], timeout_ms)
