"""Domain events: what happened, told once it is committed.

The session catalog's writers, the run manager, the task registry and the collaboration parts
publish these typed events after their transaction commits (a run's streamed text as it
streams). They are the only way information travels up: the gateway projects them into
OpenClaw frames (:mod:`clawline.gateway.projection` — it alone knows the wire format), and
channel delivery, other instances and tracing subscribe to the same stream.

- **Typed**: the frozen dataclasses below, one per kind of fact; :data:`DomainEvent` is their
  union.
- **Ordered**: one stream per process. Subscribers see every event in publication order; an
  event published from a store worker (after its transaction committed) is handed to the event
  loop before the call that published it returns to its awaiting coroutine.
- **One publisher API**: :meth:`DomainEvents.publish`. Subscribers are called on the event
  loop, synchronously, and must not block: a subscriber queues what it has to do (the gateway
  projection has a queue and a task of its own). A subscriber that raises is logged; the others
  still hear of the event.

Events carry values (entries, transcript events, records), never wire payloads.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from clawline.records.collab import InboxItem, ThreadBinding
from clawline.records.session import SessionEntry
from clawline.records.task import TaskRecord
from clawline.records.transcript import TranscriptEvent
from clawline.types import JSON, JSONObject, SessionStatus

log = logging.getLogger("clawline.events")


# --- sessions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """A session was created, changed or deleted. ``reason`` says why (OpenClaw's
    ``sessions.changed`` reasons: ``create``, ``patch``, ``send``, ``delete``, ``reset``, …),
    ``phase`` where in a run (``start``, ``end``, ``error``)."""

    session_key: str
    reason: str
    phase: str | None = None
    run_id: str | None = None
    entry: SessionEntry | None = None
    """The entry as committed by the change (``None`` when the publisher has none at hand)."""
    deleted: SessionEntry | None = None
    """The entry as it was, when the session was deleted."""


@dataclass(frozen=True, slots=True)
class MessageAppended:
    """A message was appended to a session's transcript."""

    session_key: str
    event: TranscriptEvent
    run_id: str | None = None
    inject_run_id: str | None = None
    """``chat.inject``: the message also stands for the whole reply of this one-off run."""
    entry: SessionEntry | None = None
    """The session's entry as committed with the message."""


# --- runs --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    session_key: str
    started_at: int


@dataclass(frozen=True, slots=True)
class RunText:
    """Assistant text streamed by a run: ``delta`` appended, ``text`` so far."""

    run_id: str
    session_key: str
    text: str
    delta: str


@dataclass(frozen=True, slots=True)
class RunTool:
    """Tool activity of a run: ``{phase, name, toolCallId, args?, partialResult?, result?,
    isError?}``."""

    run_id: str
    session_key: str
    data: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class RunEnded:
    """A run ended with ``status`` (``done``, ``killed``, ``timeout``, ``failed``).

    ``started_at`` ``None``: it never started (aborted while queued). ``message`` is the
    assistant message of the run as clients see it (the stored one, or the partial text), when
    it has one.
    """

    run_id: str
    session_key: str
    status: SessionStatus
    stop_reason: str
    started_at: int | None
    ended_at: int
    message: JSONObject | None = None
    error: str | None = None
    usage: Mapping[str, JSON] | None = None


# --- tasks, completions, bindings, outbox -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskChanged:
    """A task record was created or changed (status, progress, delivery)."""

    task: TaskRecord


@dataclass(frozen=True, slots=True)
class CompletionQueued:
    """A child's completion was written to its requester's durable inbox."""

    item: InboxItem


@dataclass(frozen=True, slots=True)
class CompletionDelivered:
    """Inbox rows were delivered: appended to the requester's transcript at ``message_seq``
    (``None``: retired without delivery)."""

    requester_session_key: str
    item_ids: tuple[int, ...]
    message_seq: int | None


@dataclass(frozen=True, slots=True)
class BindingChanged:
    """A thread binding was made, refreshed, or ended (``binding.ended_at`` set)."""

    binding: ThreadBinding


@dataclass(frozen=True, slots=True)
class OutboxQueued:
    """Messages were queued in the channel outbox (the delivery loop wakes)."""

    item_ids: tuple[int, ...]


DomainEvent: TypeAlias = (
    SessionChanged
    | MessageAppended
    | RunStarted
    | RunText
    | RunTool
    | RunEnded
    | TaskChanged
    | CompletionQueued
    | CompletionDelivered
    | BindingChanged
    | OutboxQueued
)
Subscriber: TypeAlias = Callable[[DomainEvent], None]


class DomainEvents:
    """The process's stream of domain events (module docstring)."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self.published = 0
        """How many events subscribers have been given so far."""

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber(event)`` for every event from now on; returns the unsubscribe."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop subscribers live on (the first publish on a loop binds it too)."""
        self._loop = loop
        self._loop_thread = threading.get_ident()

    def publish(self, event: DomainEvent) -> None:
        """Tell every subscriber of ``event``: at once on the loop's thread, through the loop
        from any other thread (a store worker after a commit)."""
        if threading.get_ident() == self._loop_thread:
            self._dispatch(event)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            self.bind(running)
            self._dispatch(event)
        elif self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._dispatch, event)
        else:  # no loop has published or subscribed yet: nobody can be listening on one
            self._dispatch(event)

    def _dispatch(self, event: DomainEvent) -> None:
        self.published += 1
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("a domain event subscriber failed on %s", type(event).__name__)
