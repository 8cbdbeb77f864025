"""The agent-to-agent exchange after a ``sessions_send`` (docs/collaboration.md): ping-pong turns
and the announce step.

Once the target has answered round 1 (``reply``), and when the requester is another session,
up to ``maxPingPongTurns`` (0..5) steps alternate between the two sessions, **starting on the
requester** with the target's reply as its incoming message. Each step is a run on lane
``nested`` whose ``extraSystemPrompt`` starts ``Agent-to-agent reply step:``; the exchange stops
at an empty reply or one that is exactly ``REPLY_SKIP``. Then the target runs the announce step
(message ``Agent-to-agent announce step.``); its reply, unless ``ANNOUNCE_SKIP`` or
``NO_REPLY``, is *delivered*: appended to the target's transcript as an assistant message
marked ``a2aAnnounce: true`` (published as ``session.message``) and, when the target has a
channel origin, queued in the channel outbox to that conversation in the same transaction.
Nothing is delivered when round 1 produced no reply.

Replies are the outcome text of the very run a step started, never "the newest assistant
message" of the session, so a reply cannot be taken from another run (OpenClaw #76443).

Steps on the requester bypass its session queue (``RunManager.send(bypass_queue=True)``): the
requester is usually still inside the turn that called ``sessions_send``, and a step queued
behind that turn would wait for it, and it for the step (OpenClaw PR #101521). Steps on the
target queue normally. The exchange runs as a background task of the run manager, so a
gateway shutdown cancels it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.agents.messages import MESSAGE_EVENT, assistant_message
from clawline.agents.run import RunOutcome
from clawline.agents.scaffolding import visible_text
from clawline.agents.steps import (
    A2A_CONTEXT_PREFIX,
    ANNOUNCE_SKIP,
    ANNOUNCE_STEP_MESSAGE,
    NO_REPLY,
    REPLY_SKIP,
    REPLY_STEP_PREFIX,
    is_token,
)
from clawline.clock import wait_for
from clawline.records.outbox import OutboxItem, origin_target

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.collab")

ANNOUNCE_PROMPT_PREFIX = "Agent-to-agent announce step:"
FIRE_AND_FORGET_STEP_TIMEOUT_MS = 30_000
"""Step timeout when the send did not wait (``timeoutSeconds: 0``)."""
MAX_ROUND_ONE_WAIT_MS = 60_000
"""How long a fire-and-forget exchange waits for round 1 before it gives up."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One ``sessions_send`` whose exchange goes on after the tool answered."""

    requester_key: str
    requester_channel: str
    target_key: str
    target_display: str
    target_channel: str
    message: str
    """The original request."""
    step_timeout_ms: int
    max_turns: int
    round_one_reply: str | None = None
    round_one_run_id: str | None = None
    """Fire-and-forget: the run whose reply is round 1 (waited for here)."""


# --- prompts -----------------------------------------------------------------------------------


def _session_lines(exchange: Exchange, *, with_target_channel: bool) -> list[str]:
    lines = [
        f"Agent 1 (requester) session: {exchange.requester_key}.",
        f"Agent 1 (requester) channel: {exchange.requester_channel}.",
        f"Agent 2 (target) session: {exchange.target_display}.",
    ]
    if with_target_channel:
        lines.append(f"Agent 2 (target) channel: {exchange.target_channel}.")
    return lines


def message_context(requester_key: str, requester_channel: str, target_display: str) -> str:
    """The round-1 ``extraSystemPrompt`` on the target."""
    return "\n".join(
        [
            A2A_CONTEXT_PREFIX,
            f"Agent 1 (requester) session: {requester_key}.",
            f"Agent 1 (requester) channel: {requester_channel}.",
            f"Agent 2 (target) session: {target_display}.",
        ]
    )


def reply_context(exchange: Exchange, *, on_requester: bool, turn: int) -> str:
    current = "Agent 1 (requester)" if on_requester else "Agent 2 (target)"
    return "\n".join(
        [
            REPLY_STEP_PREFIX,
            f"Current agent: {current}.",
            f"Turn {turn} of {exchange.max_turns}.",
            *_session_lines(exchange, with_target_channel=True),
            f'If you want to stop the ping-pong, reply exactly "{REPLY_SKIP}".',
        ]
    )


def announce_context(exchange: Exchange, round_one: str | None, latest: str | None) -> str:
    return "\n".join(
        [
            ANNOUNCE_PROMPT_PREFIX,
            *_session_lines(exchange, with_target_channel=True),
            f"Original request: {exchange.message}",
            f"Round 1 reply: {round_one}" if round_one else "Round 1 reply: (not available).",
            f"Latest reply: {latest}" if latest else "Latest reply: (not available).",
            f'If you want to remain silent, reply exactly "{ANNOUNCE_SKIP}". Any other reply will '
            "be posted to the target channel. After this reply, the agent-to-agent conversation "
            "is over.",
        ]
    )


# --- steps -------------------------------------------------------------------------------------


def reply_of(outcome: RunOutcome | None) -> str | None:
    """The reply of a run that ended ``done``, as the other agent should read it."""
    if outcome is None or not outcome.ok:
        return None
    return visible_text(outcome.text) or None


async def run_step(
    session_key: str,
    message: str,
    extra_system_prompt: str,
    timeout_ms: int,
    *,
    runs: RunManager,
    bypass_queue: bool = False,
) -> str | None:
    """Run one nested step and return its reply, or ``None`` when it failed, timed out or
    answered nothing."""
    try:
        ack = await runs.send(
            session_key=session_key,
            message=message,
            idempotency_key=str(uuid.uuid4()),
            origin="agent",
            timeout_ms=timeout_ms,
            extra_system_prompt=extra_system_prompt,
            lane="nested",
            deliver=False,
            bypass_queue=bypass_queue,
        )
    except Exception as error:
        log.warning("agent-to-agent step on %s not started: %s", session_key, error)
        return None
    try:
        outcome = await wait_for(runs.clock, asyncio.shield(ack.done), timeout_ms / 1000)
    except TimeoutError:
        log.info("agent-to-agent step %s on %s: no reply in time", ack.run_id, session_key)
        return None
    return reply_of(outcome)


async def _round_one(runs: RunManager, exchange: Exchange) -> str | None:
    if exchange.round_one_reply or exchange.round_one_run_id is None:
        return exchange.round_one_reply
    wait_ms = min(exchange.step_timeout_ms, MAX_ROUND_ONE_WAIT_MS)
    outcome = await runs.wait_outcome(exchange.round_one_run_id, wait_ms)
    return reply_of(outcome)


async def _ping_pong(runs: RunManager, exchange: Exchange, latest: str) -> str:
    current, other = exchange.requester_key, exchange.target_key
    incoming = latest
    for turn in range(1, exchange.max_turns + 1):
        on_requester = current == exchange.requester_key
        reply = await run_step(
            current,
            incoming,
            reply_context(exchange, on_requester=on_requester, turn=turn),
            exchange.step_timeout_ms,
            runs=runs,
            bypass_queue=on_requester,
        )
        if not reply or is_token(reply, REPLY_SKIP):
            break
        latest = incoming = reply
        current, other = other, current
    return latest


def _store_announce(catalog: SessionCatalog, target_key: str, text: str) -> None:
    data = assistant_message(text, stop_reason="stop", extra={"a2aAnnounce": True})
    with catalog.transaction() as work:
        event = work.append(target_key, MESSAGE_EVENT, data)
        entry = work.tx.get(catalog.canonical(target_key))
        if entry is None:
            return
        target = origin_target(entry.extra)
        if target is None:
            return
        work.queue_outbox(
            OutboxItem(
                target=target,
                text=text,
                kind="announce",
                dedupe_key=f"announce:{entry.session_id}:{event.seq}@{target.describe()}",
                created_at=event.ts,
                session_key=entry.key,
                next_attempt_at=event.ts,
            )
        )


async def deliver_announce(
    target_key: str, text: str, *, catalog: SessionCatalog, workers: StoreWorkers
) -> None:
    """Post an announce reply to the target's channel: its transcript, and — when the target
    has a channel origin (``lastChannel``…) — the channel outbox, in one transaction."""
    await workers.run(_store_announce, catalog, target_key, text)


async def run_exchange(
    exchange: Exchange, *, runs: RunManager, catalog: SessionCatalog, workers: StoreWorkers
) -> None:
    """Ping-pong, then the announce step (module docstring). Failures are logged only."""
    try:
        round_one = await _round_one(runs, exchange)
        if not round_one:
            return
        latest = round_one
        if exchange.max_turns > 0 and exchange.requester_key != exchange.target_key:
            latest = await _ping_pong(runs, exchange, round_one)
        announce = await run_step(
            exchange.target_key,
            ANNOUNCE_STEP_MESSAGE,
            announce_context(exchange, round_one, latest),
            exchange.step_timeout_ms,
            runs=runs,
        )
        if announce and not is_token(announce, ANNOUNCE_SKIP) and not is_token(announce, NO_REPLY):
            await deliver_announce(
                exchange.target_key, announce.strip(), catalog=catalog, workers=workers
            )
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("agent-to-agent exchange with %s failed", exchange.target_key)
