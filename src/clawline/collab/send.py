"""``sessions_send``: message another session and (by default) wait for its reply
(docs/collaboration.md).

Arguments ``{sessionKey?, label? (1..512), agentId? (1..64, with label), message,
timeoutSeconds? >= 0 (default 30)}``. Checks, first failure wins, each answered
``{runId, status:"error"|"forbidden", error, sessionKey?}`` with a fresh ``runId``:

1. the schema (``message required``, ``timeoutSeconds must be a number >= 0``, …);
2. ``Provide either sessionKey or label (not both).``;
3. with ``label`` and an ``agentId`` of another agent: ``Agent-to-agent messaging is
   disabled. …`` / ``Agent-to-agent messaging denied by tools.agentToAgent.allow.``; then the
   label lookup: ``No session found with label: <label>``;
4. ``Either sessionKey or label is required`` (``agentId`` alone names nothing);
5. a sessionId-shaped ``sessionKey`` that matches nothing: ``Session not found: <id> (use the
   full sessionKey from sessions_list)``;
6. the visibility guard for ``send`` (:mod:`clawline.collab.policy`).

The message becomes a run on the target (``origin:"agent"``, lane ``nested``, not delivered,
``extraSystemPrompt`` = ``Agent-to-agent message context:`` and the session lines).

- ``timeoutSeconds: 0``: ``{runId, status:"accepted", sessionKey, delivery:{status:"pending",
  mode:"announce"}}``; round 1, the ping-pong and the announce step go on in the background.
- otherwise wait up to ``timeoutSeconds`` for *that* run: ``{runId, status:"ok", reply,
  sessionKey, delivery}``, then the exchange goes on in the background
  (:mod:`clawline.collab.a2a`); ``{runId, status:"timeout", error, sessionKey}`` when the run
  has not ended in time (it keeps running; no exchange follows); ``{runId, status:"error",
  error, sessionKey}`` when it failed (``error`` is the run's error, else ``agent error``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.run import RunOutcome
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.clock import wait_for
from clawline.collab.a2a import (
    FIRE_AND_FORGET_STEP_TIMEOUT_MS,
    Exchange,
    message_context,
    reply_of,
    run_exchange,
)
from clawline.collab.policy import (
    a2a_allowed,
    a2a_denied_message,
    a2a_disabled_message,
    load_guard,
)
from clawline.collab.targets import Target, TargetError, resolve_label, resolve_reference
from clawline.collab.tool_args import (
    ArgumentError,
    ToolRefusal,
    optional_int,
    optional_string,
    required_string,
)
from clawline.errors import ClawlineError
from clawline.sessions.labels import MAX_LABEL_LENGTH
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.config import AgentsConfig
    from clawline.records.session import SessionEntry
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

DEFAULT_TIMEOUT_SECONDS = 30
INTERNAL_CHANNEL = "webchat"
"""The channel of a session that names none (the gateway's own, as in OpenClaw)."""

_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "sessionKey": {"type": "string", "description": "Target session key (or sessionId)."},
        "label": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_LABEL_LENGTH,
            "description": "Target session label (instead of sessionKey).",
        },
        "agentId": {
            "type": "string",
            "minLength": 1,
            "maxLength": 64,
            "description": "Agent whose sessions the label is looked up in.",
        },
        "message": {"type": "string", "description": "The message to send."},
        "timeoutSeconds": {
            "type": "number",
            "minimum": 0,
            "description": "Seconds to wait for the reply (0 = fire-and-forget; default 30).",
        },
    },
    "required": ["message"],
}


def channel_of(entry: SessionEntry | None) -> str:
    if entry is not None:
        for name in ("channel", "lastChannel"):
            value = entry.extra.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return INTERNAL_CHANNEL


def _result(details: JSONObject, *, is_error: bool = False) -> ToolResult:
    return ToolResult({"runId": str(uuid.uuid4()), **details}, is_error=is_error)


class SessionsSendTool:
    """``sessions_send`` (module docstring): runs on ``runs``; ``config`` gives the visibility,
    the agent-to-agent policy and ``maxPingPongTurns``."""

    spec = ToolSpec(
        name="sessions_send",
        description=(
            "Send a message into another session. Use sessionKey or label to identify the "
            "target. Waits up to timeoutSeconds for the reply (0 = fire-and-forget)."
        ),
        parameters=_SCHEMA,
    )

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        runs: RunManager,
        config: AgentsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._runs = runs
        self._config = config

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        try:
            message = required_string(args, "message")
            timeout_s = optional_int(args, "timeoutSeconds", minimum=0)
            session_key = optional_string(args, "sessionKey")
            label = optional_string(args, "label", min_len=1, max_len=MAX_LABEL_LENGTH)
            agent_id = optional_string(args, "agentId", min_len=1, max_len=64)
        except ArgumentError as error:
            return _result({"status": "error", "error": str(error)}, is_error=True)
        config = self._config
        try:
            target = await self._target(ctx, config, session_key, label, agent_id)
        except ToolRefusal as refusal:
            details: JSONObject = {"status": refusal.status, "error": refusal.error}
            if refusal.session_key is not None:
                details["sessionKey"] = refusal.session_key
            return _result(details, is_error=True)
        timeout_s = DEFAULT_TIMEOUT_SECONDS if timeout_s is None else timeout_s
        return await self._send(ctx, config, target, message, timeout_s)

    async def _target(
        self,
        ctx: ToolContext,
        config: AgentsConfig,
        session_key: str | None,
        label: str | None,
        agent_id: str | None,
    ) -> Target:
        catalog, workers = self._catalog, self._workers
        if session_key and label:
            raise ToolRefusal("Provide either sessionKey or label (not both).")
        requester = catalog.canonical(ctx.session_key)
        if label:
            requested_agent = None if agent_id is None else keys.sanitize_agent_id(agent_id)
            requester_agent = keys.agent_id_of(requester)
            if requested_agent is not None and requested_agent != requester_agent:
                policy = config.agent_to_agent
                if not policy.enabled:
                    raise ToolRefusal(a2a_disabled_message("send"), "forbidden")
                if not a2a_allowed(policy, requester_agent, requested_agent):
                    raise ToolRefusal(a2a_denied_message("send"), "forbidden")
            try:
                target = await workers.run(resolve_label, catalog, label, requested_agent)
            except (TargetError, ClawlineError) as error:
                raise ToolRefusal(str(error)) from None
        elif session_key:
            try:
                target = await workers.run(resolve_reference, catalog, session_key)
            except TargetError as error:
                raise ToolRefusal(str(error), error.status) from None
        else:
            raise ToolRefusal("Either sessionKey or label is required")
        guard = await load_guard(
            "send", requester, config=config, store=self._store, workers=workers
        )
        access = guard.check(target.key)
        if not access.allowed:
            raise ToolRefusal(access.error or "forbidden", access.status, target.display)
        return target

    async def _send(
        self,
        ctx: ToolContext,
        config: AgentsConfig,
        target: Target,
        message: str,
        timeout_s: int,
    ) -> ToolResult:
        requester = self._catalog.canonical(ctx.session_key)
        requester_channel = channel_of(ctx.entry)
        run_id = str(uuid.uuid4())
        try:
            ack = await self._runs.send(
                session_key=target.key,
                message=message,
                idempotency_key=run_id,
                origin="agent",
                extra_system_prompt=message_context(requester, requester_channel, target.display),
                lane="nested",
                deliver=False,
                # A message to the requester's own session must not queue behind the very
                # turn that is waiting for it.
                bypass_queue=target.key == requester,
            )
        except ClawlineError as error:
            details: JSONObject = {
                "runId": run_id,
                "status": "error",
                "error": str(error),
                "sessionKey": target.display,
            }
            return ToolResult(details, is_error=True)
        exchange = Exchange(
            requester_key=requester,
            requester_channel=requester_channel,
            target_key=target.key,
            target_display=target.display,
            target_channel=channel_of(target.entry),
            message=message,
            step_timeout_ms=timeout_s * 1000 or FIRE_AND_FORGET_STEP_TIMEOUT_MS,
            max_turns=config.max_ping_pong_turns,
        )
        delivery: JSONObject = {"status": "pending", "mode": "announce"}
        if timeout_s == 0:
            self._start_exchange(dataclasses.replace(exchange, round_one_run_id=ack.run_id))
            return ToolResult(
                {
                    "runId": ack.run_id,
                    "status": "accepted",
                    "sessionKey": target.display,
                    "delivery": delivery,
                }
            )
        try:
            outcome: RunOutcome | None = await wait_for(
                self._runs.clock, asyncio.shield(ack.done), timeout_s
            )
        except TimeoutError:
            outcome = None
        if outcome is None or outcome.status == "timeout":
            reason = (
                f"No reply within {timeout_s}s; the run goes on in {target.display}."
                if outcome is None
                else (outcome.error or "timeout")
            )
            details = {
                "runId": ack.run_id,
                "status": "timeout",
                "error": reason,
                "sessionKey": target.display,
            }
            return ToolResult(details, is_error=True)
        if not outcome.ok:
            details = {
                "runId": ack.run_id,
                "status": "error",
                "error": outcome.error or "agent error",
                "sessionKey": target.display,
            }
            return ToolResult(details, is_error=True)
        reply = reply_of(outcome)
        if reply:
            self._start_exchange(dataclasses.replace(exchange, round_one_reply=reply))
        return ToolResult(
            {
                "runId": ack.run_id,
                "status": "ok",
                "reply": reply,
                "sessionKey": target.display,
                "delivery": delivery,
            }
        )

    def _start_exchange(self, exchange: Exchange) -> None:
        runs = self._runs
        exchanging = run_exchange(exchange, runs=runs, catalog=self._catalog, workers=self._workers)
        runs.spawn_background(exchanging, name=f"a2a {exchange.target_key}")
