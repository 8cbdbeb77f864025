"""The built-in echo runner: answers ``echo: <message>``, streamed word by word.

It stands in for a real agent turn (model provider and tools) until one exists, and gives tests
a run whose speed they choose: ``runtime.runs.runner = EchoRunner(delay_ms=300)``.
"""

from __future__ import annotations

import asyncio
import re

from clawline.agents.runner import RunContext, RunOutput
from clawline.config import DEFAULT_ECHO_DELAY_MS

_WORD_START = re.compile(r"(?<=\s)(?=\S)")


def echo_chunks(text: str) -> list[str]:
    """``text`` cut before each word that follows whitespace; the chunks join to ``text``."""
    return [chunk for chunk in _WORD_START.split(text) if chunk]


class EchoRunner:
    """Streams ``echo: <message>`` one word at a time, pausing ``delay_ms`` before each."""

    def __init__(self, delay_ms: int = DEFAULT_ECHO_DELAY_MS) -> None:
        if delay_ms < 0:
            raise ValueError("delay_ms must be >= 0")
        self.delay_ms = delay_ms

    async def run(self, ctx: RunContext) -> RunOutput:
        reply = f"echo: {ctx.message}"
        for chunk in echo_chunks(reply):
            await asyncio.sleep(self.delay_ms / 1000)
            await ctx.emit_text(chunk)
        return RunOutput(text=reply, stop_reason="stop")

    def __repr__(self) -> str:
        return f"EchoRunner(delay_ms={self.delay_ms})"
