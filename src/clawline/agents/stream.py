"""The events of one run: ``chat`` (reference §8.3) and ``agent`` (§8.4).

Both go to every operator connection. Each stream numbers its own payloads: the ``seq`` of a
run's ``chat`` payloads counts 1, 2, … and so does the ``seq`` of its ``agent`` payloads.

Assistant text arrives in deltas. Every delta is an ``agent`` event (stream ``assistant``,
``data:{text, delta}``); ``chat`` deltas carry the assistant message so far and are throttled
to one per :data:`CHAT_DELTA_INTERVAL_MS` per run: the first delta goes out at once, later
ones within the interval are folded into one trailing delta. Deltas are *drop-if-slow* (the
final message carries everything); lifecycle and terminal events never are.

``session.update`` (clawline's transcript push, docs/plugins.md) goes to the connections
subscribed to the session (``sessions.messages.subscribe {key}``, or ``sessions.subscribe``):
``{sessionId: <session key>, sessionKey, turnId: <run id>, runId, delta, event: "delta"}`` for
every delta of assistant text (drop-if-slow, like ``chat`` deltas), then once ``event:
"completed"`` (``delta: ""``, ``status``: the run's terminal status) when the run ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from clawline.clock import Clock
from clawline.events import Audience, EventBus
from clawline.types import JSON, JSONObject

__all__ = ["CHAT_DELTA_INTERVAL_MS", "RunStream"]

CHAT_DELTA_INTERVAL_MS = 150


class RunStream:
    def __init__(
        self,
        bus: EventBus,
        clock: Clock,
        *,
        run_id: str,
        session_key: str,
        delta_interval_ms: int = CHAT_DELTA_INTERVAL_MS,
    ) -> None:
        self._bus = bus
        self._clock = clock
        self.run_id = run_id
        self.session_key = session_key
        self._interval = delta_interval_ms / 1000
        self._chat_seq = 0
        self._agent_seq = 0
        self.text = ""
        """The assistant text streamed so far."""
        self._published_len = -1
        self._last_delta_at: float | None = None
        self._trailing: asyncio.TimerHandle | None = None
        self.closed = False

    # --- agent stream --------------------------------------------------------------------

    def agent(self, stream: str, data: Mapping[str, JSON], *, droppable: bool = False) -> None:
        self._agent_seq += 1
        payload: JSONObject = {
            "runId": self.run_id,
            "seq": self._agent_seq,
            "stream": stream,
            "ts": self._clock.now_ms(),
            "data": dict(data),
            "sessionKey": self.session_key,
        }
        self._bus.publish(
            "agent",
            payload,
            audience=Audience.OPERATORS,
            session_key=self.session_key,
            drop_if_slow=droppable,
        )

    def lifecycle(self, phase: str, **data: JSON) -> None:
        self.agent("lifecycle", {"phase": phase, **data})

    def tool(self, data: Mapping[str, JSON]) -> None:
        if not self.closed:
            self.agent("tool", data)

    # --- chat stream ---------------------------------------------------------------------

    def chat(self, state: str, **fields: JSON) -> None:
        self._chat_seq += 1
        payload: JSONObject = {
            "runId": self.run_id,
            "sessionKey": self.session_key,
            "seq": self._chat_seq,
            "state": state,
        }
        payload.update({name: value for name, value in fields.items() if value is not None})
        self._bus.publish(
            "chat",
            payload,
            audience=Audience.OPERATORS,
            session_key=self.session_key,
            drop_if_slow=state == "delta",
        )

    def partial_message(self) -> JSONObject:
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": self.text}],
            "timestamp": self._clock.now_ms(),
        }

    def assistant(self, delta: str) -> None:
        """Record a delta of assistant text and publish it (``chat`` deltas throttled)."""
        if self.closed or not delta:
            return
        self.text += delta
        self.agent("assistant", {"text": self.text, "delta": delta}, droppable=True)
        self._session_update("delta", delta)
        now = asyncio.get_running_loop().time()
        if self._last_delta_at is None or now - self._last_delta_at >= self._interval:
            self._publish_delta()
        elif self._trailing is None:
            wait = self._last_delta_at + self._interval - now
            self._trailing = asyncio.get_running_loop().call_later(wait, self._publish_delta)

    def _publish_delta(self) -> None:
        self._trailing = None
        if self.closed or len(self.text) == self._published_len:
            return
        self._last_delta_at = asyncio.get_running_loop().time()
        self._published_len = len(self.text)
        self.chat("delta", message=self.partial_message())

    def completed(self, status: str) -> None:
        """The run has ended with ``status`` (``done``, ``failed``, ``killed``, ``timeout``)."""
        self._session_update("completed", "", status=status)

    def _session_update(self, event: str, delta: str, **extra: JSON) -> None:
        payload: JSONObject = {
            "sessionId": self.session_key,
            "sessionKey": self.session_key,
            "turnId": self.run_id,
            "runId": self.run_id,
            "delta": delta,
            "event": event,
            **extra,
        }
        self._bus.publish(
            "session.update",
            payload,
            audience=Audience.SESSION_STREAM,
            session_key=self.session_key,
            drop_if_slow=event == "delta",
        )

    def close(self) -> None:
        """No more deltas (a pending trailing delta is dropped: the terminal event follows)."""
        self.closed = True
        if self._trailing is not None:
            self._trailing.cancel()
            self._trailing = None
