"""What kind of turn a run is: a plain message, an agent-to-agent step, a completion event.

The collaboration code builds these turns (:mod:`clawline.collab`); models, and the offline
model in particular, recognise them with :func:`classify_turn`. The markers are the documented
prefixes, so the code writing a step and the code reading it agree through these constants:

==============================  ============================================================
:data:`A2A_CONTEXT_PREFIX`      first line of a ``sessions_send`` round-1 ``extraSystemPrompt``
:data:`REPLY_STEP_PREFIX`       first line of a ping-pong step's ``extraSystemPrompt``
:data:`ANNOUNCE_STEP_MESSAGE`   the message of the announce step on the target
:data:`COMPLETION_EVENT_MARKER` a line of a rendered task-completion event
:data:`SUBAGENT_TASK_PREFIX`    starts the task line of a spawned child's first message
==============================  ============================================================
"""

from __future__ import annotations

import enum

A2A_CONTEXT_PREFIX = "Agent-to-agent message context:"
REPLY_STEP_PREFIX = "Agent-to-agent reply step:"
ANNOUNCE_STEP_MESSAGE = "Agent-to-agent announce step."
COMPLETION_EVENT_MARKER = "[Internal task completion event]"
INTERNAL_CONTEXT_BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
SUBAGENT_TASK_PREFIX = "[Subagent Task]:"

REPLY_SKIP = "REPLY_SKIP"
"""A ping-pong reply that stops the exchange."""
ANNOUNCE_SKIP = "ANNOUNCE_SKIP"
"""An announce-step reply (or a child's final text) that suppresses the announce."""
NO_REPLY = "NO_REPLY"
"""The silent reply."""
SILENT_TOKENS = frozenset({REPLY_SKIP, ANNOUNCE_SKIP, NO_REPLY})


class TurnKind(enum.Enum):
    MESSAGE = "message"
    """An ordinary message (a user's, or a spawned child's task)."""
    A2A_MESSAGE = "a2a_message"
    """Round 1 of ``sessions_send`` on the target: answered like a message."""
    REPLY_STEP = "reply_step"
    """A ping-pong step: reply, or ``REPLY_SKIP`` to stop."""
    ANNOUNCE_STEP = "announce_step"
    """The announce step on the target: a reply to post, or ``ANNOUNCE_SKIP``."""
    COMPLETION = "completion"
    """One or more children's task-completion events delivered to their requester."""


def _has_line(text: str | None, prefix: str) -> bool:
    if not text:
        return False
    return any(line.strip().startswith(prefix) for line in text.splitlines())


def classify_turn(message: str, extra_system_prompt: str | None = None) -> TurnKind:
    """Classify a turn from its message and its ``extraSystemPrompt`` (or a whole system
    prompt that contains it). First match wins: announce step, reply step, completion event,
    agent-to-agent message, plain message."""
    if message.strip().startswith(ANNOUNCE_STEP_MESSAGE) or _has_line(
        extra_system_prompt, ANNOUNCE_STEP_MESSAGE
    ):
        return TurnKind.ANNOUNCE_STEP
    if _has_line(extra_system_prompt, REPLY_STEP_PREFIX) or message.strip().startswith(
        REPLY_STEP_PREFIX
    ):
        return TurnKind.REPLY_STEP
    if COMPLETION_EVENT_MARKER in message:
        return TurnKind.COMPLETION
    if _has_line(extra_system_prompt, A2A_CONTEXT_PREFIX):
        return TurnKind.A2A_MESSAGE
    return TurnKind.MESSAGE


def is_token(text: str, token: str) -> bool:
    """Whether a reply is exactly ``token`` once trimmed (OpenClaw's rule for skip tokens)."""
    return text.strip() == token


def subagent_task(message: str) -> str | None:
    """The task of a spawned child's first message (everything after ``[Subagent Task]:``),
    or ``None`` when the message is not one."""
    index = message.find(SUBAGENT_TASK_PREFIX)
    if index < 0:
        return None
    return message[index + len(SUBAGENT_TASK_PREFIX) :].strip()
