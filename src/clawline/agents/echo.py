"""The built-in echo runner: answers ``echo: <message>``, streamed word by word.

It stands in for a real agent turn (model provider and tools) until one exists, and gives tests
a run whose speed they choose: ``runtime.runs.runner = EchoRunner(delay_ms=300)``.
"""

from __future__ import annotations

import asyncio

from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.stream import word_chunks
from clawline.config import DEFAULT_ECHO_DELAY_MS


class EchoRunner:
    """Streams ``echo: <message>`` one word at a time, pausing ``delay_ms`` before each."""

    def __init__(self, delay_ms: int = DEFAULT_ECHO_DELAY_MS) -> None:
        if delay_ms < 0:
            raise ValueError("delay_ms must be >= 0")
        self.delay_ms = delay_ms

    async def run(self, ctx: RunContext) -> RunOutput:
        reply = f"echo: {ctx.message}"
        for chunk in word_chunks(reply):
            await asyncio.sleep(self.delay_ms / 1000)
            await ctx.emit_text(chunk)
        return RunOutput(text=reply, stop_reason="stop")

    def __repr__(self) -> str:
        return f"EchoRunner(delay_ms={self.delay_ms})"
