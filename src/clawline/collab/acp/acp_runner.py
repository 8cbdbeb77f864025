"""The runner of ACP children: one run = one ``session/prompt`` of the child's ACP session.

:class:`AcpRunner` serves the runs the router (:mod:`clawline.collab.acp.router`) sends it.
It takes the child's live agent process from the runtime
(:meth:`~clawline.collab.acp.children.AcpRuntime.acquire`, which reopens the ACP session when
there is none), hands the prompt's ``session/update`` notifications to the turn's output
(:mod:`clawline.collab.acp.updates`) and gives the process back when the turn ends (a oneshot
child's process is closed then). The run manager does the rest of the run, as for every session.

A turn of an agent-to-agent exchange (round 1 of ``sessions_send``, a reply step, the announce
step) carries its step instructions in the run's ``extraSystemPrompt``; ACP has no system
prompt, so they open the prompt text, above the message (:func:`prompt_text`) — the child can
then answer ``REPLY_SKIP`` or ``ANNOUNCE_SKIP`` as a native child does.

An aborted or timed-out run sends ``session/cancel`` and waits up to the runtime's
``cancel_wait_s`` for the agent's answer; an agent that does not answer in time counts as broken
and its process is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.steps import TurnKind, classify_turn
from clawline.collab.acp.updates import TurnOutput
from clawline.config import ACP_DISPATCH_DISABLED
from clawline.errors import AcpAgentError

if TYPE_CHECKING:
    from clawline.collab.acp.child_agent import AgentProcess
    from clawline.collab.acp.children import AcpRuntime

_STOP_REASONS = {
    "end_turn": "stop",
    "max_tokens": "length",
    "max_turn_requests": "length",
    "cancelled": "aborted",
}


_STEP_TURNS = (TurnKind.A2A_MESSAGE, TurnKind.REPLY_STEP, TurnKind.ANNOUNCE_STEP)


def prompt_text(message: str, extra_system_prompt: str | None) -> str:
    """What an ACP child is prompted with: the message, after the step instructions of an
    agent-to-agent turn (module docstring)."""
    if extra_system_prompt and classify_turn(message, extra_system_prompt) in _STEP_TURNS:
        return f"{extra_system_prompt.strip()}\n\n{message}"
    return message


class AcpRunner:
    """One run of an ACP child = one ``session/prompt`` (see the module docstring)."""

    def __init__(self, *, acp: AcpRuntime) -> None:
        self._acp = acp

    async def run(self, ctx: RunContext) -> RunOutput:
        acp = self._acp
        if not acp.config.dispatch_enabled:
            raise AcpAgentError(ACP_DISPATCH_DISABLED)
        child = await acp.acquire(ctx.session_key)
        process = child.process
        output = TurnOutput(ctx, acp.relay_of(ctx.run_id))
        broken = False
        process.client.listen(output.push)
        try:
            prompt = process.prompt(prompt_text(ctx.message, ctx.extra_system_prompt))
            try:
                stop_reason = await asyncio.shield(prompt)
            except asyncio.CancelledError:
                broken = not await _cancel_turn(process, prompt, acp.cancel_wait_s)
                raise
            except AcpAgentError:
                broken = not process.alive
                raise
            process.client.listen(None)
            await output.finish()
        finally:
            process.client.listen(None)
            await output.abandon()
            acp.release(child, broken=broken)
        return RunOutput(stop_reason=_STOP_REASONS.get(stop_reason, stop_reason))


async def _cancel_turn(process: AgentProcess, prompt: asyncio.Task[str], wait_s: float) -> bool:
    """``session/cancel``, then wait for the prompt's answer; whether it came in time."""
    await process.cancel()
    done, _ = await asyncio.wait({prompt}, timeout=wait_s)
    if not done:
        prompt.cancel()
    with contextlib.suppress(BaseException):
        await prompt
    return bool(done)
