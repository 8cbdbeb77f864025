"""What one run tells while it runs: its streamed text and its tool activity.

:class:`RunStream` keeps the assistant text streamed so far (the run's reply when the runner
returns none of its own, and the partial message of a run cut short) and publishes each step as
a domain event — :class:`~clawline.events.RunStarted`, :class:`~clawline.events.RunText`,
:class:`~clawline.events.RunTool`. The run's end (:class:`~clawline.events.RunEnded`) is
published by the run's execution once its message is stored. How these become ``agent``,
``chat`` and ``session.update`` frames is the gateway's business
(:mod:`clawline.gateway.projection`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from clawline.clock import Clock
from clawline.events import DomainEvents, RunStarted, RunText, RunTool
from clawline.types import JSON, JSONObject

_WORD_START = re.compile(r"(?<=\s)(?=\S)")


def word_chunks(text: str) -> list[str]:
    """``text`` cut before each word that follows whitespace; the chunks join to ``text`` (how
    the echo runner and the offline model stream a reply)."""
    return [chunk for chunk in _WORD_START.split(text) if chunk]


class RunStream:
    def __init__(
        self, events: DomainEvents, clock: Clock, *, run_id: str, session_key: str
    ) -> None:
        self._events = events
        self._clock = clock
        self.run_id = run_id
        self.session_key = session_key
        self.text = ""
        """The assistant text streamed so far."""
        self.closed = False

    def started(self, started_at: int) -> None:
        self._events.publish(RunStarted(self.run_id, self.session_key, started_at))

    def assistant(self, delta: str) -> None:
        """Record a delta of assistant text and publish it."""
        if self.closed or not delta:
            return
        self.text += delta
        self._events.publish(RunText(self.run_id, self.session_key, self.text, delta))

    def tool(self, data: Mapping[str, JSON]) -> None:
        if not self.closed:
            self._events.publish(RunTool(self.run_id, self.session_key, dict(data)))

    def partial_message(self) -> JSONObject:
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": self.text}],
            "timestamp": self._clock.now_ms(),
        }

    def close(self) -> None:
        """No more text or tool activity: the run is ending."""
        self.closed = True
