"""The turn-kind recogniser the collaboration code and the models share."""

from __future__ import annotations

import pytest

from clawline.agents.steps import (
    ANNOUNCE_SKIP,
    REPLY_SKIP,
    TurnKind,
    classify_turn,
    is_token,
    subagent_task,
)

A2A = "Agent-to-agent message context:\nAgent 1 (requester) session: agent:main:main"
REPLY = (
    "Agent-to-agent reply step:\nCurrent agent: Agent 2 (target)\nTurn 2 of 5.\n"
    'If you want to stop the ping-pong, reply exactly "REPLY_SKIP".'
)
EVENT = (
    "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nOpenClaw runtime context (internal):\n\n"
    "[Internal task completion event]\nsource: subagent\nstatus: completed successfully"
)


@pytest.mark.parametrize(
    ("message", "prompt", "kind"),
    [
        ("hello", None, TurnKind.MESSAGE),
        ("hello", "You are helpful.", TurnKind.MESSAGE),
        ("hello", A2A, TurnKind.A2A_MESSAGE),
        ("the target's reply", REPLY, TurnKind.REPLY_STEP),
        ("the target's reply", f"Base prompt.\n\n{REPLY}", TurnKind.REPLY_STEP),
        ("Agent-to-agent announce step.", "Original request: …", TurnKind.ANNOUNCE_STEP),
        ("  Agent-to-agent announce step.\nmore", None, TurnKind.ANNOUNCE_STEP),
        (EVENT, None, TurnKind.COMPLETION),
        (EVENT, A2A, TurnKind.COMPLETION),
        ("mentions Agent-to-agent reply step: inline", None, TurnKind.MESSAGE),
    ],
)
def test_classify_turn(message: str, prompt: str | None, kind: TurnKind) -> None:
    assert classify_turn(message, prompt) is kind


def test_tokens_match_exactly_once_trimmed() -> None:
    assert is_token("  REPLY_SKIP\n", REPLY_SKIP)
    assert not is_token("REPLY_SKIP please", REPLY_SKIP)
    assert not is_token("announce_skip", ANNOUNCE_SKIP)


def test_subagent_task_is_the_text_after_the_marker() -> None:
    message = "[Subagent Context] You are a subagent.\n\n[Subagent Task]: do it\nline two"
    assert subagent_task(message) == "do it\nline two"
    assert subagent_task("no marker") is None
