"""The gateway's projection of domain events into OpenClaw frames.

The gateway subscribes :class:`WireProjection` to the runtime's :class:`~clawline.events.
DomainEvents`; it turns each event into the frames OpenClaw clients expect and publishes them
on the gateway's :class:`~clawline.gateway.bus.EventBus` (numbered, replayable, fanned out).
This module alone knows those shapes:

- :class:`~clawline.events.SessionChanged` → ``sessions.changed`` (the session's listing row
  flattened into the payload and under ``session``; ``reason``, ``phase``, ``runId``, ``ts``);
- :class:`~clawline.events.MessageAppended` → ``session.message`` (the message with ``id`` and
  ``seq``), then ``sessions.changed {phase:"message"}``; an injected message also as the
  ``chat`` ``final`` of its one-off run;
- runs → ``agent`` (``lifecycle`` ``start``/``end``/``error``, ``assistant`` deltas, ``tool``),
  ``chat`` (``delta`` throttled to one per :data:`CHAT_DELTA_INTERVAL_MS` per run — the first
  at once, later ones in the interval folded into one trailing delta —, then ``final``,
  ``aborted`` or ``error``) and ``session.update`` (every delta, then ``completed``). Each run
  numbers its ``chat`` payloads 1, 2, … and, separately, its ``agent`` payloads;
- :class:`~clawline.events.TaskChanged` → ``task`` ``{action:"upserted", task}`` with OpenClaw's
  task summary (:mod:`clawline.tasks.summary`), to the requester session's stream
  (drop-if-slow).

Events are projected in the order they were published, by one task (:meth:`run`), because a
listing row needs a store read (its children and derived title, on a store worker). What queued
up while the last batch was projected is projected together, its rows read in one store call
with a constant number of queries (a burst of spawns costs a few reads, not one per event, and a
request waiting for its events is not held up by a queue of reads). The row is as of the event:
its entry is the one the event carries (as committed), and the session's run state and ``ts``
are taken when the event is published. :meth:`caught_up` waits until everything published so far
is on the bus and delivered by it (a bus shared by several gateway instances delivers an event
once it has read it back from the store): the connection awaits it before it answers a request,
so the events a request caused reach the client before its response, as they did when methods
published them themselves.

Deltas (``chat`` delta, ``agent`` assistant, ``session.update`` delta) and the session events
are *drop-if-slow*; lifecycle and terminal events never are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from clawline.clock import Clock
from clawline.events import (
    DomainEvent,
    MessageAppended,
    RunEnded,
    RunStarted,
    RunText,
    RunTool,
    SessionChanged,
    TaskChanged,
)
from clawline.gateway.bus import Audience, EventBus
from clawline.records.session import SessionEntry
from clawline.records.transcript import message_json
from clawline.sessions.listing_rows import RowBuilder, RowOptions
from clawline.store.base import Store
from clawline.store.workers import StoreWorkers
from clawline.tasks.summary import task_summary
from clawline.types import JSON, JSONObject

log = logging.getLogger("clawline.gateway")

CHAT_DELTA_INTERVAL_MS = 150
PROJECTION_BATCH = 500
"""The most queued events projected with one store call for their rows."""


class _NoRow:
    """The row of a session event could not be read: the event is not published."""


_NO_ROW = _NoRow()


def _always(key: str) -> bool:
    return True


def _never(key: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Queued:
    event: DomainEvent
    active: bool
    """Whether the event's session had a queued or running run when it was published."""
    ts: int


@dataclass(slots=True)
class _RunFrames:
    """Per-run numbering and the ``chat`` delta throttle."""

    chat_seq: int = 0
    agent_seq: int = 0
    text: str = ""
    published_len: int = -1
    last_delta_at: float | None = None
    trailing: asyncio.TimerHandle | None = None

    def stop_trailing(self) -> None:
        if self.trailing is not None:
            self.trailing.cancel()
            self.trailing = None


class WireProjection:
    """Domain events → OpenClaw frames on ``bus`` (module docstring)."""

    def __init__(
        self,
        *,
        bus: EventBus,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        is_active: Callable[[str], bool],
        delta_interval_ms: int = CHAT_DELTA_INTERVAL_MS,
    ) -> None:
        self._bus = bus
        self._store = store
        self._workers = workers
        self._clock = clock
        self._is_active = is_active
        self._interval = delta_interval_ms / 1000
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._runs: dict[str, _RunFrames] = {}
        self._received = 0
        self._projected = 0
        self._progress = asyncio.Condition()

    # --- the subscriber and its task -----------------------------------------------------------

    def __call__(self, event: DomainEvent) -> None:
        """The :class:`~clawline.events.DomainEvents` subscriber: queue ``event``, with the
        run state of its session and the time, as they are now."""
        self._received += 1
        active = False
        if isinstance(event, SessionChanged | MessageAppended):
            active = self._is_active(event.session_key)
        self._queue.put_nowait(_Queued(event, active, self._clock.now_ms()))

    async def run(self) -> None:
        """Project queued events in order, until cancelled (the gateway owns this task): what
        has queued up meanwhile (at most :data:`PROJECTION_BATCH`) at a time, with the rows of
        all of it read in one store call."""
        while True:
            batch = [await self._queue.get()]
            while len(batch) < PROJECTION_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            rows = await self._rows(batch)
            for index, queued in enumerate(batch):
                try:
                    self._project(queued, rows.get(index, _NO_ROW))
                except Exception:
                    log.exception("projecting %s failed", type(queued.event).__name__)
            async with self._progress:
                self._projected += len(batch)
                self._progress.notify_all()

    async def caught_up(self) -> None:
        """Wait until every event received so far is projected onto the bus, and the bus has
        delivered it (on a shared stream: once read back from the store)."""
        target = self._received
        if self._projected < target:
            async with self._progress:
                await self._progress.wait_for(lambda: self._projected >= target)
        await self._bus.caught_up()

    def close(self) -> None:
        """Drop the pending trailing deltas (the gateway is stopping)."""
        for frames in self._runs.values():
            frames.stop_trailing()
        self._runs.clear()

    # --- projecting ----------------------------------------------------------------------------

    def _project(self, queued: _Queued, row: JSONObject | _NoRow | None) -> None:
        event = queued.event
        if isinstance(event, SessionChanged):
            self._session_changed(event, queued, row)
        elif isinstance(event, MessageAppended):
            self._message_appended(event, queued, row)
        elif isinstance(event, RunText):
            self._run_text(event)
        elif isinstance(event, RunTool):
            self._agent(event.run_id, event.session_key, "tool", event.data)
        elif isinstance(event, RunStarted):
            self._agent(
                event.run_id,
                event.session_key,
                "lifecycle",
                {"phase": "start", "startedAt": event.started_at},
            )
        elif isinstance(event, RunEnded):
            self._run_ended(event)
        elif isinstance(event, TaskChanged):
            self._bus.publish(
                "task",
                {"action": "upserted", "task": task_summary(event.task)},
                audience=Audience.SESSION_STREAM,
                session_key=event.task.requester_session_key,
                drop_if_slow=True,
            )

    # --- sessions ------------------------------------------------------------------------------

    async def _rows(self, batch: Sequence[_Queued]) -> dict[int, JSONObject | _NoRow | None]:
        """The listing rows the batch's session events need, by position in the batch (``None``
        for a session that is gone; :data:`_NO_ROW` when the store could not be read)."""
        wanted = [
            (index, queued)
            for index, queued in enumerate(batch)
            if isinstance(queued.event, MessageAppended)
            or (isinstance(queued.event, SessionChanged) and queued.event.deleted is None)
        ]
        if not wanted:
            return {}
        try:
            return await self._workers.run(self._rows_now, wanted)
        except Exception as error:  # a failing store must not stop the projection
            log.warning("%d session event(s) not published: %s", len(wanted), error)
            return {index: _NO_ROW for index, _ in wanted}

    def _rows_now(self, wanted: list[tuple[int, _Queued]]) -> dict[int, JSONObject | _NoRow | None]:
        """On a store worker: the rows of ``wanted``, each as of its event — the entry it
        carries (read now when it carries none) and its session's run state when published."""
        entries: dict[int, SessionEntry] = {}
        missing: list[tuple[int, str]] = []
        for index, queued in wanted:
            event = queued.event
            assert isinstance(event, SessionChanged | MessageAppended)
            if event.entry is not None:
                entries[index] = event.entry
            else:
                missing.append((index, event.session_key))
        if missing:
            found = self._store.get_many([key for _, key in missing])
            entries.update({index: found[key] for index, key in missing if key in found})
        out: dict[int, JSONObject | _NoRow | None] = {index: None for index, _ in wanted}
        active = {index for index, queued in wanted if queued.active}
        for running in (True, False):
            part = [index for index in entries if (index in active) is running]
            if not part:
                continue
            builder = RowBuilder(self._store, _always if running else _never)
            rows = builder.build([entries[i] for i in part], RowOptions(derived_titles=True))
            out.update(zip(part, rows, strict=True))
        return out

    @staticmethod
    def _payload(key: str, row: JSONObject | None, fields: dict[str, JSON], ts: int) -> JSONObject:
        payload: JSONObject = dict(row) if row is not None else {}
        payload.update({name: value for name, value in fields.items() if value is not None})
        payload["sessionKey"] = key
        payload["ts"] = ts
        if row is not None:
            payload["session"] = row
        return payload

    def _session_changed(
        self, event: SessionChanged, queued: _Queued, row: JSONObject | _NoRow | None
    ) -> None:
        key = event.session_key
        if isinstance(row, _NoRow):
            if event.deleted is None:
                return  # its row could not be read (logged)
            row = None
        fields: dict[str, JSON] = {
            "reason": event.reason,
            "phase": event.phase,
            "runId": event.run_id,
        }
        self._bus.publish(
            "sessions.changed",
            self._payload(key, row, fields, queued.ts),
            audience=Audience.SESSIONS,
            session_key=key,
            drop_if_slow=True,
        )

    def _message_appended(
        self, event: MessageAppended, queued: _Queued, row: JSONObject | _NoRow | None
    ) -> None:
        key = event.session_key
        if isinstance(row, _NoRow):
            return  # its row could not be read (logged)
        message = message_json(event.event)
        fields: dict[str, JSON] = {
            "messageId": message["id"],
            "messageSeq": event.event.seq,
            "runId": event.run_id,
        }
        self._bus.publish(
            "session.message",
            self._payload(key, row, {**fields, "message": message}, queued.ts),
            audience=Audience.SESSION_STREAM,
            session_key=key,
            drop_if_slow=True,
        )
        self._bus.publish(
            "sessions.changed",
            self._payload(key, row, {**fields, "phase": "message"}, queued.ts),
            audience=Audience.SESSIONS,
            session_key=key,
            drop_if_slow=True,
        )
        if event.inject_run_id is not None:
            frames = _RunFrames()
            self._chat(
                frames,
                event.inject_run_id,
                key,
                "final",
                message=message,
                stopReason="injected",
            )

    # --- runs ----------------------------------------------------------------------------------

    def _frames(self, run_id: str) -> _RunFrames:
        frames = self._runs.get(run_id)
        if frames is None:
            frames = self._runs[run_id] = _RunFrames()
        return frames

    def _agent(
        self,
        run_id: str,
        key: str,
        stream: str,
        data: Mapping[str, JSON],
        *,
        droppable: bool = False,
    ) -> None:
        frames = self._frames(run_id)
        frames.agent_seq += 1
        payload: JSONObject = {
            "runId": run_id,
            "seq": frames.agent_seq,
            "stream": stream,
            "ts": self._clock.now_ms(),
            "data": dict(data),
            "sessionKey": key,
        }
        self._bus.publish(
            "agent",
            payload,
            audience=Audience.OPERATORS,
            session_key=key,
            drop_if_slow=droppable,
        )

    def _chat(self, frames: _RunFrames, run_id: str, key: str, state: str, **fields: JSON) -> None:
        frames.chat_seq += 1
        payload: JSONObject = {
            "runId": run_id,
            "sessionKey": key,
            "seq": frames.chat_seq,
            "state": state,
        }
        payload.update({name: value for name, value in fields.items() if value is not None})
        self._bus.publish(
            "chat",
            payload,
            audience=Audience.OPERATORS,
            session_key=key,
            drop_if_slow=state == "delta",
        )

    def _session_update(self, run_id: str, key: str, kind: str, delta: str, **extra: JSON) -> None:
        payload: JSONObject = {
            "sessionId": key,
            "sessionKey": key,
            "turnId": run_id,
            "runId": run_id,
            "delta": delta,
            "event": kind,
            **extra,
        }
        self._bus.publish(
            "session.update",
            payload,
            audience=Audience.SESSION_STREAM,
            session_key=key,
            drop_if_slow=kind == "delta",
        )

    def _run_text(self, event: RunText) -> None:
        frames = self._frames(event.run_id)
        frames.text = event.text
        key = event.session_key
        self._agent(
            event.run_id,
            key,
            "assistant",
            {"text": event.text, "delta": event.delta},
            droppable=True,
        )
        self._session_update(event.run_id, key, "delta", event.delta)
        loop = asyncio.get_running_loop()
        now = loop.time()
        if frames.last_delta_at is None or now - frames.last_delta_at >= self._interval:
            self._chat_delta(frames, event.run_id, key)
        elif frames.trailing is None:
            wait = frames.last_delta_at + self._interval - now
            frames.trailing = loop.call_later(wait, self._chat_delta, frames, event.run_id, key)

    def _chat_delta(self, frames: _RunFrames, run_id: str, key: str) -> None:
        frames.trailing = None
        if len(frames.text) == frames.published_len or self._runs.get(run_id) is not frames:
            return
        frames.last_delta_at = asyncio.get_running_loop().time()
        frames.published_len = len(frames.text)
        message: JSONObject = {
            "role": "assistant",
            "content": [{"type": "text", "text": frames.text}],
            "timestamp": self._clock.now_ms(),
        }
        self._chat(frames, run_id, key, "delta", message=message)

    def _run_ended(self, event: RunEnded) -> None:
        run_id, key = event.run_id, event.session_key
        frames = self._runs.pop(run_id, None) or _RunFrames()
        frames.stop_trailing()
        if event.started_at is None:  # aborted while queued: nothing else was told of it
            self._chat(frames, run_id, key, "aborted", stopReason="aborted")
            return
        usage = dict(event.usage) if event.usage is not None else None
        if event.status == "done":
            self._chat(
                frames,
                run_id,
                key,
                "final",
                message=event.message,
                stopReason=event.stop_reason,
                usage=usage,
            )
        elif event.status == "killed":
            self._chat(frames, run_id, key, "aborted", message=event.message, stopReason="aborted")
        else:
            self._chat(
                frames,
                run_id,
                key,
                "error",
                message=event.message,
                errorMessage=event.error,
                errorKind="timeout" if event.status == "timeout" else "unknown",
                stopReason=event.stop_reason,
            )
        self._session_update(run_id, key, "completed", "", status=event.status)
        self._runs[run_id] = frames  # the lifecycle event continues the run's agent numbering
        if event.status == "failed":
            data: JSONObject = {
                "phase": "error",
                "startedAt": event.started_at,
                "endedAt": event.ended_at,
                "error": event.error,
            }
        else:
            data = {
                "phase": "end",
                "startedAt": event.started_at,
                "endedAt": event.ended_at,
                "aborted": event.status in ("killed", "timeout"),
                "stopReason": event.stop_reason,
            }
        self._agent(run_id, key, "lifecycle", data)
        del self._runs[run_id]
