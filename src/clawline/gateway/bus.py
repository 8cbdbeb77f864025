"""The event bus: one numbered stream per gateway process, replay, and bounded fan-out.

Every broadcast event gets the next sequence number of the process's stream. The bus keeps the
most recent events (bounded by count and bytes), so a client that reconnects can ask for
everything after the last number it saw and receive exactly the events it missed that its
subscriptions select; if those are no longer retained, or the process restarted (a new
``boot_id``), it is told so and re-lists instead.

The replay buffer keeps each event as its encoded wire frame plus the few fields subscribers
route by (audience, session key), never the payload objects it was published with: a payload
of nested dicts costs several times its JSON text, so a byte cap that counted the frame but kept
the objects would hold far more memory than it says. The byte cap counts what an entry really
keeps alive (:meth:`Event.retained_size`); a replayed event decodes its payload from the frame
when someone asks for it.

Delivery never blocks the publisher: each subscriber owns a bounded queue and decides itself
what to drop when it falls behind (see :mod:`clawline.gateway.connection`).

The bus is not thread-safe by design: publish, attach and detach run on the event loop.
"""

from __future__ import annotations

import enum
import itertools
import sys
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from typing import Protocol, cast

import orjson

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.errors import NotFound
from clawline.types import JSON

DEFAULT_RETAINED_EVENTS = 10_000
DEFAULT_RETAINED_BYTES = 64 * 1024 * 1024
_DEQUE_SLOT = 8
"""The retained deque's pointer to an entry."""


class EventsNotRetained(NotFound):
    """The events after the requested sequence number are no longer kept."""


class Audience(enum.Enum):
    """Who may receive an event."""

    OPERATORS = "operators"
    """Every authenticated connection (``chat``, ``agent``, ``presence``, …)."""
    SESSIONS = "sessions"
    """Connections that called ``sessions.subscribe`` (``sessions.changed``)."""
    SESSION_STREAM = "session-stream"
    """``sessions.subscribe`` connections and those subscribed to the event's session
    (``session.message``, ``session.tool``, ``session.update``)."""


class Event:
    """A published event. Its wire frame is encoded once and shared by every subscriber.

    A retained copy (:meth:`retained`) holds only the frame and the routing fields; its
    :attr:`payload` is decoded from the frame on each access."""

    __slots__ = (
        "_frame",
        "_payload",
        "audience",
        "drop_if_slow",
        "name",
        "seq",
        "session_key",
        "ts",
    )

    def __init__(
        self,
        seq: int,
        name: str,
        payload: Mapping[str, JSON] | None,
        ts: int,
        *,
        audience: Audience,
        session_key: str | None,
        drop_if_slow: bool,
        frame: str | None = None,
    ) -> None:
        self.seq = seq
        self.name = name
        self._payload = payload
        self.ts = ts
        self.audience = audience
        self.session_key = session_key
        self.drop_if_slow = drop_if_slow
        self._frame = frame

    @property
    def payload(self) -> Mapping[str, JSON]:
        if self._payload is not None:
            return self._payload
        decoded = orjson.loads(self.frame())["payload"]
        return cast("Mapping[str, JSON]", decoded)

    def frame(self) -> str:
        """``{"type":"event","event":…,"payload":…,"seq":…}`` as JSON text."""
        if self._frame is None:
            self._frame = orjson.dumps(
                {"type": "event", "event": self.name, "payload": self._payload, "seq": self.seq}
            ).decode()
        return self._frame

    def retained(self) -> Event:
        """This event without its payload objects: what the replay buffer keeps."""
        return Event(
            self.seq,
            self.name,
            None,
            self.ts,
            audience=self.audience,
            session_key=self.session_key,
            drop_if_slow=self.drop_if_slow,
            frame=self.frame(),
        )

    def retained_size(self) -> int:
        """Bytes a retained copy keeps alive: itself, its frame, the numbers and the session
        key it owns once the published event is gone, and its slot in the buffer. The event
        name is not counted: names are string constants shared by every event."""
        size = (
            sys.getsizeof(self)
            + sys.getsizeof(self.frame())
            + sys.getsizeof(self.seq)
            + sys.getsizeof(self.ts)
            + _DEQUE_SLOT
        )
        if self.session_key is not None:
            size += sys.getsizeof(self.session_key)
        return size

    def __repr__(self) -> str:
        return f"Event(seq={self.seq}, name={self.name!r}, session_key={self.session_key!r})"


class Subscriber(Protocol):
    def wants(self, event: Event) -> bool:
        """Whether this subscriber's subscriptions select ``event``."""
        ...

    def deliver(self, event: Event) -> None:
        """Queue ``event`` without blocking (dropping it is the subscriber's call)."""
        ...


class EventBus:
    """Numbered, replayable, non-blocking fan-out of events to subscribers."""

    def __init__(
        self,
        *,
        clock: Clock = SYSTEM_CLOCK,
        retained_events: int = DEFAULT_RETAINED_EVENTS,
        retained_bytes: int = DEFAULT_RETAINED_BYTES,
    ) -> None:
        self.boot_id = str(uuid.uuid4())
        self._clock = clock
        self._seq = 0
        self._retained: deque[Event] = deque()
        """Retained copies (:meth:`Event.retained`), oldest first."""
        self._retained_bytes = 0
        self._evicted_seq = 0
        """The highest sequence number discarded from retention (0: none yet)."""
        self._max_events = retained_events
        self._max_bytes = retained_bytes
        self._subscribers: dict[int, Subscriber] = {}
        self._taps: list[Callable[[Event], None]] = []

    @property
    def last_seq(self) -> int:
        return self._seq

    @property
    def oldest_retained_seq(self) -> int | None:
        return self._retained[0].seq if self._retained else None

    @property
    def retained_bytes(self) -> int:
        """What the replay buffer holds, as counted against its byte cap."""
        return self._retained_bytes

    def tap(self, callback: Callable[[Event], None]) -> None:
        """Call ``callback`` for every published event (in-process observers, tests)."""
        self._taps.append(callback)

    def publish(
        self,
        name: str,
        payload: Mapping[str, JSON],
        *,
        audience: Audience = Audience.OPERATORS,
        session_key: str | None = None,
        drop_if_slow: bool = False,
        retain: bool = True,
    ) -> Event:
        """Number ``payload`` as the next event and hand it to every interested subscriber."""
        self._seq += 1
        event = Event(
            self._seq,
            name,
            payload,
            self._clock.now_ms(),
            audience=audience,
            session_key=session_key,
            drop_if_slow=drop_if_slow,
        )
        if retain:
            self._retain(event)
        for subscriber in list(self._subscribers.values()):
            if subscriber.wants(event):
                subscriber.deliver(event)
        for callback in self._taps:
            callback(event)
        return event

    def _retain(self, event: Event) -> None:
        copy = event.retained()
        self._retained.append(copy)
        self._retained_bytes += copy.retained_size()
        while self._retained and (
            len(self._retained) > self._max_events or self._retained_bytes > self._max_bytes
        ):
            dropped = self._retained.popleft()
            self._retained_bytes -= dropped.retained_size()
            self._evicted_seq = dropped.seq

    def attach(self, subscriber: Subscriber) -> None:
        self._subscribers[id(subscriber)] = subscriber

    def detach(self, subscriber: Subscriber) -> None:
        self._subscribers.pop(id(subscriber), None)

    def missed(
        self, subscriber: Subscriber, after_seq: int, boot_id: str | None = None
    ) -> list[Event]:
        """The retained events after ``after_seq`` that ``subscriber`` wants, oldest first.

        Raises :class:`EventsNotRetained` when ``boot_id`` names another process incarnation,
        when ``after_seq`` is ahead of the stream, or when events after it were already
        discarded. Because the bus runs on one event loop, delivering these and then attaching
        (with no ``await`` in between) leaves no gap and no duplicate.
        """
        if boot_id is not None and boot_id != self.boot_id:
            raise EventsNotRetained(
                f"events of gateway boot {boot_id} are gone (this gateway booted as "
                f"{self.boot_id}); list sessions again"
            )
        if after_seq < 0 or after_seq > self._seq:
            raise EventsNotRetained(
                f"no events after seq {after_seq}: the stream is at seq {self._seq}"
            )
        if after_seq < self._evicted_seq:
            raise EventsNotRetained(
                f"events after seq {after_seq} are no longer retained (oldest kept: "
                f"{self.oldest_retained_seq}); list sessions again"
            )
        # Unretained events (ticks, shutdown) leave holes in the numbering: skip by seq.
        newer = itertools.dropwhile(lambda event: event.seq <= after_seq, self._retained)
        return [event for event in newer if subscriber.wants(event)]
