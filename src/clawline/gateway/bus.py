"""The event bus: one numbered stream of events, replay, and bounded fan-out.

Every broadcast event gets the next sequence number of the stream. The bus keeps the most
recent events (bounded by count and bytes), so a client that reconnects can ask for everything
after the last number it saw and receive exactly the events it missed that its subscriptions
select; if those are no longer retained, or the stream is another one (another ``boot_id``), it
is told so and re-lists instead.

The replay buffer keeps each event as its encoded wire frame plus the few fields subscribers
route by (audience, session key), never the payload objects it was published with: a payload
of nested dicts costs several times its JSON text, so a byte cap that counted the frame but kept
the objects would hold far more memory than it says. The byte cap counts what an entry really
keeps alive (:meth:`Event.retained_size`); a replayed event decodes its payload from the frame
when someone asks for it.

Delivery never blocks the publisher: each subscriber owns a bounded queue and decides itself
what to drop when it falls behind (see :mod:`clawline.gateway.connection`).

The stream is the process's or the store's:

- **In memory** (a store one gateway process serves alone: SQLite), :meth:`EventBus.publish`
  numbers the event and hands it out at once. ``boot_id`` is made when the process starts, so a
  restarted gateway is a new stream.
- **Shared** (several gateway instances on one PostgreSQL schema; the bus is given the store's
  :class:`~clawline.store.event_log.EventLog`), the stream is the store's, one for every
  instance. Publishing queues a retained event for the log; one writer task appends what has
  queued, a batch per transaction (what is published while a write is in flight forms the next
  batch). One reader task reads the log after the last number delivered here whenever the log's
  doorbell rings — and every :data:`POLL_INTERVAL_S` without a ring, so a lost notification
  only delays — and delivers every row, this instance's and the others', in ``seq`` order. An
  event reaches the subscribers here only once read back, so every instance sends the same
  frames, with the same ``seq``, in the same order. ``boot_id`` is the stream's id, the same on
  every instance, and ``last_seq`` the highest number delivered here, so a client resumes on
  whichever instance it reaches: what left this instance's window is read from the log
  (:meth:`EventBus.replay_from`), up to the log's retention (:meth:`EventBus.prune`).
  :meth:`EventBus.caught_up` waits until what was published here was read back and delivered.

  Unretained events (``tick``, ``shutdown``) belong to one instance, not to the shared stream:
  they go out at once and carry no ``seq`` (the protocol's event frame has ``seq`` optional).
  Numbering them would either write every instance's ticks into the shared log or give them a
  number an event of the log already has, and a client that orders and de-duplicates by
  ``seq`` would lose that event. In memory they keep taking a number of their own, as before.

The bus is not thread-safe by design: publish, attach and detach run on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import sys
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol, cast

import orjson

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.errors import NotFound, StoreUnavailable, Unavailable
from clawline.failure_log import log_failure
from clawline.store.event_log import EventLog, EventRecord, LogBounds, LoggedEvent
from clawline.store.workers import StoreWorkers
from clawline.types import JSON

log = logging.getLogger("clawline.gateway")

DEFAULT_RETAINED_EVENTS = 10_000
DEFAULT_RETAINED_BYTES = 64 * 1024 * 1024
_DEQUE_SLOT = 8
"""The retained deque's pointer to an entry."""

POLL_INTERVAL_S = 1.0
"""Shared mode: how often the reader reads the log when the doorbell did not ring."""
WRITE_BATCH = 500
READ_BATCH = 500
MAX_UNWRITTEN = 100_000
"""Shared mode: events waiting for the log beyond this many are dropped (and logged): the store
is not taking writes, and memory must not grow without bound meanwhile."""
MAX_REPLAY_EVENTS = DEFAULT_RETAINED_EVENTS
MAX_REPLAY_BYTES = DEFAULT_RETAINED_BYTES
"""Shared mode: what one replay may read from the log, beyond the window in memory (counted as
:meth:`Event.retained_size`); a client further behind lists again."""
CAUGHT_UP_TIMEOUT_S = 10.0
"""Shared mode: how long :meth:`EventBus.caught_up` waits for the log before it gives up (and
logs): a response then goes out before events the store could not take."""
REACH_TIMEOUT_S = 5.0
"""Shared mode: how long a replay waits for this instance to read up to a ``seq`` a client
already saw on another instance."""
RETRY_MIN_S = 0.05
RETRY_MAX_S = 2.0
DOORBELL_RETRY_MAX_S = 5.0


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


def _logged_event(row: LoggedEvent) -> Event | None:
    """The event a row of the log stands for; its frame is built around the stored payload
    text, so every instance sends the very same frame. ``None`` (logged) for an audience this
    version does not know."""
    try:
        audience = Audience(row.audience)
    except ValueError:
        log.warning("event %d (%s) skipped: unknown audience %r", row.seq, row.name, row.audience)
        return None
    name = orjson.dumps(row.name).decode()
    frame = f'{{"type":"event","event":{name},"payload":{row.payload},"seq":{row.seq}}}'
    return Event(
        row.seq,
        sys.intern(row.name),  # as with published events, the names are shared strings
        None,
        row.ts,
        audience=audience,
        session_key=row.session_key,
        drop_if_slow=row.drop_if_slow,
        frame=frame,
    )


class _Shared(NamedTuple):
    """What a shared bus works with."""

    log: EventLog
    workers: StoreWorkers
    instance_id: str


class Subscriber(Protocol):
    def wants(self, event: Event) -> bool:
        """Whether this subscriber's subscriptions select ``event``."""
        ...

    def deliver(self, event: Event) -> None:
        """Queue ``event`` without blocking (dropping it is the subscriber's call)."""
        ...


class Replay:
    """A replay made ready by :meth:`EventBus.replay_from`: what it had to read from the log,
    and the number after which the bus's window takes over.

    Select from it (:meth:`select`) with no ``await`` after it was made ready: the replay then
    ends exactly where the live stream continues for the subscriber."""

    __slots__ = ("_bus", "_fetched", "_upto")

    def __init__(self, bus: EventBus, fetched: list[Event], upto: int) -> None:
        self._bus = bus
        self._fetched = fetched
        self._upto = upto

    def select(self, subscriber: Subscriber) -> list[Event]:
        """The events of the replay that ``subscriber`` wants, oldest first."""
        return self._bus._selected(self._fetched, self._upto, subscriber)


class EventBus:
    """Numbered, replayable, non-blocking fan-out of events to subscribers (module docstring).

    Given ``event_log`` (with this instance's ``instance_id`` and the store's ``workers``), the
    bus is in shared mode; :meth:`open` and :meth:`run` then bring the stream up."""

    def __init__(
        self,
        *,
        clock: Clock = SYSTEM_CLOCK,
        retained_events: int = DEFAULT_RETAINED_EVENTS,
        retained_bytes: int = DEFAULT_RETAINED_BYTES,
        event_log: EventLog | None = None,
        instance_id: str = "",
        workers: StoreWorkers | None = None,
        poll_interval_s: float = POLL_INTERVAL_S,
    ) -> None:
        if event_log is not None and (workers is None or not instance_id):
            raise ValueError("a shared event bus needs the store's workers and an instance id")
        self.boot_id = str(uuid.uuid4())
        self._clock = clock
        self._seq = 0
        """In memory: the last number given. Shared: the highest number delivered here."""
        self._retained: deque[Event] = deque()
        """Retained copies (:meth:`Event.retained`), oldest first."""
        self._retained_bytes = 0
        self._evicted_seq = 0
        """The window holds every retained event numbered above this (0: from the start): the
        highest number discarded from it, or (shared) the stream's position when it opened."""
        self._max_events = retained_events
        self._max_bytes = retained_bytes
        self._subscribers: dict[int, Subscriber] = {}
        self._taps: list[Callable[[Event], None]] = []
        # --- shared mode ---
        self._shared = (
            _Shared(event_log, workers, instance_id)
            if event_log is not None and workers is not None
            else None
        )
        self._poll_s = poll_interval_s
        self._opened = False
        self._unwritten: list[EventRecord] = []
        self._queued = 0
        """Retained events published here and queued for the log, ever."""
        self._settled = 0
        """Of those, how many the writer is done with (appended, or given up on)."""
        self._written_seq = 0
        """The highest number the log gave an event published here."""
        self._dropped = 0
        self._write_wanted = asyncio.Event()
        self._rung = asyncio.Event()
        self._progress = asyncio.Condition()
        """Notified when the writer settled a batch and when the reader delivered rows."""
        self._log_oldest: int | None = None
        """The oldest number the log kept when last looked at."""
        self._failing: set[str] = set()

    @property
    def shared(self) -> bool:
        """Whether the stream is the store's event log (module docstring)."""
        return self._shared is not None

    @property
    def last_seq(self) -> int:
        return self._seq

    @property
    def oldest_retained_seq(self) -> int | None:
        """The oldest number a replay can still start from (shared: the log's, as last seen,
        or the window's if that is older)."""
        known = [self._retained[0].seq] if self._retained else []
        if self._log_oldest is not None:
            known.append(self._log_oldest)
        return min(known) if known else None

    @property
    def retained_bytes(self) -> int:
        """What the replay buffer holds, as counted against its byte cap."""
        return self._retained_bytes

    def tap(self, callback: Callable[[Event], None]) -> None:
        """Call ``callback`` for every event handed out here (in-process observers, tests);
        shared: the log's events as they are read back, numbered, every instance's."""
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
        """Number ``payload`` as the next event and hand it to every interested subscriber.

        Shared: a retained event is queued for the log and handed out once read back (the
        event returned is not numbered yet: its ``seq`` is 0); an unretained one goes out at
        once, without a ``seq`` in its frame (module docstring)."""
        ts = self._clock.now_ms()
        local = self._shared is None
        if local:
            self._seq += 1
        event = Event(
            self._seq if local or not retain else 0,
            name,
            payload,
            ts,
            audience=audience,
            session_key=session_key,
            drop_if_slow=drop_if_slow,
            frame=None
            if local or retain
            else orjson.dumps({"type": "event", "event": name, "payload": payload}).decode(),
        )
        if self._shared is not None and retain:
            self._queue_for_log(
                EventRecord(
                    instance_id=self._shared.instance_id,
                    name=name,
                    audience=audience.value,
                    session_key=session_key,
                    drop_if_slow=drop_if_slow,
                    payload=orjson.dumps(payload).decode(),
                    ts=ts,
                )
            )
            return event
        if retain:
            self._retain(event.retained())
        self._fan_out(event)
        return event

    def _fan_out(self, event: Event) -> None:
        for subscriber in list(self._subscribers.values()):
            if subscriber.wants(event):
                subscriber.deliver(event)
        for callback in self._taps:
            callback(event)

    def _retain(self, copy: Event) -> None:
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

    # --- replay --------------------------------------------------------------------------------

    async def missed(
        self, subscriber: Subscriber, after_seq: int, boot_id: str | None = None
    ) -> list[Event]:
        """The retained events after ``after_seq`` that ``subscriber`` wants, oldest first:
        :meth:`replay_from`, then :meth:`Replay.select` at once. A caller that changes the
        subscriber's subscriptions for the replay does so between the two."""
        replay = await self.replay_from(after_seq, boot_id)
        return replay.select(subscriber)

    async def replay_from(self, after_seq: int, boot_id: str | None = None) -> Replay:
        """Make ready a replay of the events after ``after_seq``.

        Raises :class:`EventsNotRetained` when ``boot_id`` names another stream, when
        ``after_seq`` is ahead of the stream, or when events after it were already discarded
        (shared: also when more than :data:`MAX_REPLAY_EVENTS` / :data:`MAX_REPLAY_BYTES` would
        have to be read from the log). In memory nothing here awaits; shared, what left the
        window is read from the log, and a ``seq`` another instance already sent but this one
        has not read yet is waited for (at most :data:`REACH_TIMEOUT_S`, then
        :class:`~clawline.errors.Unavailable`). Because the bus runs on one event loop,
        selecting from the replay and attaching (with no ``await`` in between) leaves no gap
        and no duplicate.
        """
        if boot_id is not None and boot_id != self.boot_id:
            raise EventsNotRetained(
                f"events of gateway boot {boot_id} are gone (this gateway booted as "
                f"{self.boot_id}); list sessions again"
            )
        if after_seq < 0:
            raise self._ahead(after_seq, self._seq)
        shared = self._shared
        if shared is None:
            if after_seq > self._seq:
                raise self._ahead(after_seq, self._seq)
            if after_seq < self._evicted_seq:
                raise self._gone(after_seq)
            return Replay(self, [], after_seq)
        if after_seq > self._seq:
            await self._reach(after_seq)
        if self._evicted_seq - after_seq > MAX_REPLAY_EVENTS:
            await self._look_at_bounds()
            raise self._gone(after_seq)
        fetched: list[Event] = []
        size = 0
        upto = after_seq
        while upto < self._evicted_seq:  # the window starts later: read up to it from the log
            limit = min(READ_BATCH, self._evicted_seq - upto)
            rows = await shared.workers.run(shared.log.read_after, upto, limit)
            # The log's numbers have no holes but the pruned front (clawline.store.event_log).
            if not rows or any(row.seq != upto + 1 + n for n, row in enumerate(rows)):
                await self._look_at_bounds()
                raise self._gone(after_seq)
            for row in rows:
                event = _logged_event(row)
                if event is not None:
                    fetched.append(event)
                    size += event.retained_size()
            if len(fetched) > MAX_REPLAY_EVENTS or size > MAX_REPLAY_BYTES:
                raise self._gone(after_seq)
            upto = rows[-1].seq
        return Replay(self, fetched, upto)

    def _selected(self, fetched: list[Event], upto: int, subscriber: Subscriber) -> list[Event]:
        if upto < self._evicted_seq:  # an await between replay_from and select: a caller's bug
            raise EventsNotRetained(
                f"events after seq {upto} left the replay window before they were replayed;"
                " ask again"
            )
        older = [event for event in fetched if subscriber.wants(event)]
        # Unretained events (ticks, shutdown) leave holes in the numbering: skip by seq.
        newer = itertools.dropwhile(lambda event: event.seq <= upto, self._retained)
        return [*older, *(event for event in newer if subscriber.wants(event))]

    def _ahead(self, after_seq: int, at: int) -> EventsNotRetained:
        return EventsNotRetained(f"no events after seq {after_seq}: the stream is at seq {at}")

    def _gone(self, after_seq: int) -> EventsNotRetained:
        return EventsNotRetained(
            f"events after seq {after_seq} are no longer retained (oldest kept: "
            f"{self.oldest_retained_seq}); list sessions again"
        )

    async def _reach(self, after_seq: int) -> None:
        """Wait until this instance has delivered ``after_seq``, which a client saw on
        another instance (this one reads a moment later); refuse a number never given."""
        bounds = await self._look_at_bounds()
        newest = bounds.newest if bounds is not None else 0
        if after_seq > newest:
            raise self._ahead(after_seq, newest)
        self._rung.set()
        try:
            async with asyncio.timeout(REACH_TIMEOUT_S):
                async with self._progress:
                    await self._progress.wait_for(lambda: self._seq >= after_seq)
        except TimeoutError:
            raise Unavailable(
                f"this gateway has not read the event stream up to seq {after_seq} yet (it is"
                f" at seq {self._seq}); try again"
            ) from None

    # --- shared mode: the stream's tasks -------------------------------------------------------

    async def open(self) -> None:
        """Shared: take the stream's id and position from the log, so ``boot_id`` and
        ``last_seq`` are the stream's from the first client on (``serve()`` awaits this before
        it serves). In memory: nothing."""
        shared = self._shared
        if shared is None or self._opened:
            return
        self.boot_id = await shared.workers.run(shared.log.stream_id)
        bounds = await self._look_at_bounds()
        if bounds is not None and self._seq == 0:
            self._seq = self._evicted_seq = bounds.newest
        self._opened = True

    async def run(self) -> None:
        """Shared: write, read and listen until cancelled (``serve()`` runs this for the
        gateway's life). In memory: returns at once."""
        shared = self._shared
        if shared is None:
            return
        await self.open()
        async with asyncio.TaskGroup() as group:
            group.create_task(self._write_loop(shared), name="event log writer")
            group.create_task(self._read_loop(shared), name="event log reader")
            group.create_task(self._listen_loop(shared), name="event log doorbell")

    async def caught_up(self) -> None:
        """Wait until the events published here so far were delivered here: at once in
        memory; shared, once written to the log and read back (at most
        :data:`CAUGHT_UP_TIMEOUT_S`, then logged)."""
        if self._shared is None:
            return
        target = self._queued
        if self._settled >= target and self._seq >= self._written_seq:
            return
        try:
            async with asyncio.timeout(CAUGHT_UP_TIMEOUT_S):
                async with self._progress:
                    await self._progress.wait_for(lambda: self._settled >= target)
                    written = self._written_seq
                    await self._progress.wait_for(lambda: self._seq >= written)
        except TimeoutError:
            log.warning(
                "events published here were not read back from the event log in %g s",
                CAUGHT_UP_TIMEOUT_S,
            )

    async def prune(self, *, retention_ms: int, keep_at_least: int) -> int:
        """Shared: delete the log's events older than ``retention_ms`` but the newest
        ``keep_at_least``; how many went. In memory: nothing (the window is the retention)."""
        shared = self._shared
        if shared is None:
            return 0
        older_than = self._clock.now_ms() - retention_ms
        removed = await shared.workers.run(shared.log.prune, older_than, keep_at_least)
        await self._look_at_bounds()
        return removed

    async def _look_at_bounds(self) -> LogBounds | None:
        shared = self._shared
        if shared is None:
            return None
        bounds = await shared.workers.run(shared.log.bounds)
        self._log_oldest = bounds.oldest if bounds is not None else None
        return bounds

    def _queue_for_log(self, record: EventRecord) -> None:
        if len(self._unwritten) >= MAX_UNWRITTEN:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                log.error(
                    "dropped %s: %d events are waiting for the event log (%d dropped so far)",
                    record.name,
                    len(self._unwritten),
                    self._dropped,
                )
            return
        self._unwritten.append(record)
        self._queued += 1
        self._write_wanted.set()

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    def _failed(self, part: str, error: BaseException) -> None:
        """Log the first failure of an outage of ``part`` (it retries meanwhile)."""
        if part not in self._failing:
            self._failing.add(part)
            log_failure(log, error, f"{part} failed (retrying)")

    def _works(self, part: str) -> None:
        if part in self._failing:
            self._failing.discard(part)
            log.info("%s works again", part)

    async def _write_loop(self, shared: _Shared) -> None:
        delay = RETRY_MIN_S
        while True:
            if not self._unwritten:
                self._write_wanted.clear()
                await self._write_wanted.wait()
                continue
            batch = self._unwritten[:WRITE_BATCH]
            seqs: list[int] = []
            try:
                seqs = await shared.workers.run(shared.log.append, batch)
            except StoreUnavailable as error:  # the store is away: the same batch, later
                self._failed("writing to the event log", error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
                continue
            except Exception:  # refused for good: trying again would stall the stream
                log.exception("%d events were not written to the event log", len(batch))
            self._works("writing to the event log")
            delay = RETRY_MIN_S
            del self._unwritten[: len(batch)]
            self._settled += len(batch)
            if seqs:
                self._written_seq = seqs[-1]
                self._rung.set()  # read them back now rather than at the notification
            await self._notify()

    async def _read_loop(self, shared: _Shared) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll_s):
                    await self._rung.wait()
            self._rung.clear()
            try:
                await self._read_new(shared)
            except Exception as error:
                self._failed("reading the event log", error)
            else:
                self._works("reading the event log")

    async def _read_new(self, shared: _Shared) -> None:
        while True:
            rows = await shared.workers.run(shared.log.read_after, self._seq, READ_BATCH)
            if rows:
                self._deliver_logged(rows)
                await self._notify()
            if len(rows) < READ_BATCH:
                return

    def _deliver_logged(self, rows: Sequence[LoggedEvent]) -> None:
        if rows[0].seq != self._seq + 1:
            # This instance fell further behind than the retention: replays from before the
            # hole are refused from now on.
            log.warning(
                "events %d to %d of the shared stream were pruned before this gateway read them",
                self._seq + 1,
                rows[0].seq - 1,
            )
            self._retained.clear()
            self._retained_bytes = 0
            self._evicted_seq = rows[0].seq - 1
            self._log_oldest = rows[0].seq
        elif self._log_oldest is None:  # the log was empty when last looked at
            self._log_oldest = rows[0].seq
        for row in rows:
            self._seq = row.seq
            event = _logged_event(row)
            if event is not None:
                self._retain(event)
                self._fan_out(event)

    async def _listen_loop(self, shared: _Shared) -> None:
        delay = RETRY_MIN_S
        while True:
            try:
                async with contextlib.aclosing(shared.log.doorbell()) as rings:
                    async for newest in rings:
                        self._works("the event log doorbell")
                        delay = RETRY_MIN_S
                        if newest is None or newest > self._seq:
                            self._rung.set()
            except Exception as error:  # the reader's poll carries on meanwhile
                self._failed("the event log doorbell", error)
            await asyncio.sleep(delay)
            delay = min(delay * 2, DOORBELL_RETRY_MAX_S)
