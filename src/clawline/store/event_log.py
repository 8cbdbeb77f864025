"""The event log: the one numbered stream of gateway events that every gateway instance on a
store shares.

Several gateway processes may serve one PostgreSQL schema. A client connected to any of them must
receive every event any of them published, in one order and with one numbering, and a client
that reconnects to another instance with the last number it saw must be able to resume there.
So the numbering cannot be a process's: it is the store's. Every instance appends the events it
publishes to the log, and every instance — the publisher included — reads the log back in
sequence order and sends what it reads (:mod:`clawline.gateway.bus`, shared mode).

What a log guarantees:

- :meth:`EventLog.append` numbers a batch with the next consecutive sequence numbers and commits
  it in one transaction; batches commit in the order of their numbers. So a reader that has
  seen number N never later sees a row below N appear, and the numbers in the log have no holes
  except at the front, where :meth:`EventLog.prune` removed the oldest rows.
- :meth:`EventLog.read_after` returns the rows after a number, in ascending order.
- :meth:`EventLog.prune` is the retention: rows older than a time go, but never the newest ones
  (and never the very newest, which carries the stream's position).
- :meth:`EventLog.doorbell` rings when rows were committed, so readers need not poll hard. A
  ring can be lost (a reconnect), so a reader still reads now and then without one.

The log stores what it is given and no more: the payload is JSON text, the audience a name. It
knows nothing of the wire protocol. A store served by one process alone (SQLite) has no log
(:meth:`Store.event_log <clawline.store.base.Store.event_log>` is ``None``): that process's
bus numbers its events in memory.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event as an instance appends it (the log gives it its number)."""

    instance_id: str
    """The gateway instance that published it."""
    name: str
    audience: str
    session_key: str | None
    drop_if_slow: bool
    payload: str
    """The payload as JSON text, exactly as it goes on the wire."""
    ts: int
    """When it was published (epoch ms); what the retention goes by."""


@dataclass(frozen=True, slots=True)
class LoggedEvent(EventRecord):
    """An event read back from the log, with its number in the shared stream."""

    seq: int


class LogBounds(NamedTuple):
    oldest: int
    """The lowest number still kept."""
    newest: int
    """The highest number given so far."""


class EventLog(abc.ABC):
    """The shared event stream of a store (module docstring). The sync methods block: run them
    on the store's workers."""

    @abc.abstractmethod
    def stream_id(self) -> str:
        """The stream's id: the same for every instance on the store, for the store's life
        (clients resume with it as ``bootId``)."""

    @abc.abstractmethod
    def append(self, records: Sequence[EventRecord]) -> list[int]:
        """Number ``records`` with the next consecutive numbers, in order, and commit them in
        one transaction; their numbers."""

    @abc.abstractmethod
    def read_after(self, seq: int, limit: int) -> list[LoggedEvent]:
        """Up to ``limit`` rows numbered above ``seq``, lowest first."""

    @abc.abstractmethod
    def bounds(self) -> LogBounds | None:
        """The lowest and highest number kept (``None``: nothing was ever appended)."""

    @abc.abstractmethod
    def prune(self, older_than_ts: int, keep_at_least: int) -> int:
        """Delete the rows published before ``older_than_ts`` (epoch ms), except the newest
        ``keep_at_least`` rows (at least one is always kept); how many were deleted."""

    @abc.abstractmethod
    def doorbell(self) -> AsyncGenerator[int | None, None]:
        """Yield ``None`` once listening (read now: rows committed before that rang no one),
        then the newest number of each commit as it is announced. Runs until the listening
        connection fails (a :class:`~clawline.errors.StoreUnavailable`); close it with
        ``contextlib.aclosing``."""
