"""The store interface every backend implements.

A store keeps session entries and transcripts. It knows SQL and indexes, not the catalog's
rules: the :class:`~clawline.sessions.catalog.SessionCatalog` validates changes and then writes
them through a :class:`StoreTransaction`, so every backend enforces the same rules.

Listing is ordered by ``(updatedAt desc, key desc)`` and paged by keyset: a page ends at a
:class:`Position` and the next page starts strictly after it. Rows that are not updated during a
walk are neither skipped nor repeated.
"""

from __future__ import annotations

import abc
import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, NamedTuple

from clawline.errors import StoreError
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent, TranscriptInfo
from clawline.store.cursor import Position
from clawline.types import JSONObject

if TYPE_CHECKING:  # collab imports this module
    from clawline.store.channel_cursors import ChannelCursorReads, ChannelCursorWrites
    from clawline.store.collab import (
        BindingReads,
        BindingWrites,
        InboxReads,
        InboxWrites,
        RunReads,
        RunWrites,
        TaskReads,
        TaskWrites,
    )
    from clawline.store.event_log import EventLog
    from clawline.store.idempotency import IdempotencyReads, IdempotencyWrites
    from clawline.store.instance_lock import InstanceLock
    from clawline.store.instances import (
        ClaimReads,
        ClaimWrites,
        HandoffReads,
        HandoffWrites,
        InstanceReads,
        InstanceWrites,
        RunOwnerReads,
        RunOwnerWrites,
        RunStopWrites,
    )
    from clawline.store.outbox import OutboxReads, OutboxWrites
    from clawline.store.pairing import PairingReads, PairingWrites

PATH_SEP = "\x1f"
"""Separator of stored lineage paths. Keys never contain control characters, and it sorts
below every character a key may hold, so a subtree is one index range."""

MAX_LINEAGE_PATH_BYTES = 2048
"""Bound on a stored lineage path (UTF-8 bytes); keeps it indexable in every backend."""

MAX_PAGE_SIZE = 10_000


def encode_path(path: Sequence[str]) -> str:
    return PATH_SEP.join(path)


def decode_path(stored: str) -> tuple[str, ...]:
    return tuple(stored.split(PATH_SEP))


@dataclass(frozen=True, slots=True)
class SessionQuery:
    """Filters of a listing. Cron run keys are never listed.

    - ``agent_id``: one agent's sessions;
    - ``updated_since``: rows with ``updatedAt >= updated_since``;
    - ``label``: exact label;
    - ``spawned_by``: direct children by ``spawnedBy`` or ``parentSessionKey``;
    - ``root``: members of one lineage tree (root included);
    - ``cwd``: rows whose ``spawnedCwd``, else ``spawnedWorkspaceDir``, equals it;
    - ``exclude_subagents``: drop ``subagent:`` keys;
    - ``exclude_cron``: drop cron session keys (``agent:<id>:cron:<job>``);
    - ``include_global`` / ``include_unknown``: include the literal buckets;
    - ``search``: case-insensitive substring of key, label, display name or session id;
    - ``status``: rows whose run status is exactly this (e.g. ``running``).
    """

    agent_id: str | None = None
    updated_since: int | None = None
    label: str | None = None
    spawned_by: str | None = None
    root: str | None = None
    cwd: str | None = None
    exclude_subagents: bool = False
    exclude_cron: bool = False
    include_global: bool = True
    include_unknown: bool = True
    search: str | None = None
    status: str | None = None

    def fingerprint(self) -> str:
        """A short digest of the filters, to bind a cursor to the query it came from."""
        # The text json.dumps(asdict(self), sort_keys=True, separators=(",", ":")) gives, built
        # without asdict's deep copy and without a new encoder per call: it is computed for
        # every page, and this way costs a third as much.
        filters = {name: getattr(self, name) for name in _QUERY_FIELDS}
        if self.status is not None:  # absent when unset: older cursors stay valid
            filters["status"] = self.status
        return hashlib.sha256(_CANONICAL_JSON.encode(filters).encode()).hexdigest()[:16]


_QUERY_FIELDS = tuple(field.name for field in fields(SessionQuery) if field.name != "status")
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


class ExtensionIndexRow(NamedTuple):
    """One row of the plugin-extension index: a top-level string field of an extension value
    (which fields are indexed: :mod:`clawline.store.extension_index`)."""

    plugin_id: str
    namespace: str
    field: str
    value: str


@dataclass(frozen=True, slots=True)
class Page:
    entries: list[SessionEntry]
    next: Position | None
    """Where the next page starts, or ``None`` when this was the last page."""


class StoreTransaction(abc.ABC):
    """Primitive reads and writes inside one transaction, used by the domain services (the
    catalog for sessions; the task registry and collaboration services for the rest).

    The collaboration tables are written through four objects bound to the same transaction
    (interfaces in :mod:`clawline.store.collab`).

    :meth:`after_commit` registers what to do once (and only if) the transaction has committed,
    on the thread that committed it — how the domain services publish their events.
    """

    tasks: TaskWrites
    runs: RunWrites
    inbox: InboxWrites
    bindings: BindingWrites
    idempotency: IdempotencyWrites
    """Run idempotency keys (:mod:`clawline.store.idempotency`)."""
    pairings: PairingWrites
    """Device pairings (:mod:`clawline.store.pairing`)."""
    outbox: OutboxWrites
    """The channel outbox (:mod:`clawline.store.outbox`)."""
    channel_cursors: ChannelCursorWrites
    """How far each channel account's inbound stream was read
    (:mod:`clawline.store.channel_cursors`)."""
    instances: InstanceWrites
    run_owners: RunOwnerWrites
    handoffs: HandoffWrites
    run_stops: RunStopWrites
    claims: ClaimWrites
    """The gateway instances, who answers for each run, the runs handed from one instance to
    another and the aborts sent after them, and what else each holds
    (:mod:`clawline.store.instances`)."""

    _committed: list[Callable[[], None]] | None = None

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after this transaction commits (never if it rolls back)."""
        if self._committed is None:
            self._committed = []
        self._committed.append(callback)

    def run_after_commit(self) -> None:
        """Called by the backend once the transaction has committed."""
        callbacks, self._committed = self._committed or [], None
        for callback in callbacks:
            callback()

    @abc.abstractmethod
    def get(self, key: str) -> SessionEntry | None:
        """The entry, locked for update until the transaction ends."""

    @abc.abstractmethod
    def key_for_label(self, agent_id: str, label: str) -> str | None: ...

    @abc.abstractmethod
    def trace_of_tree(self, root_key: str) -> str | None:
        """The trace id of any row whose root is ``root_key``."""

    @abc.abstractmethod
    def insert(self, entry: SessionEntry) -> None: ...

    @abc.abstractmethod
    def update(self, entry: SessionEntry) -> None: ...

    def touch(self, key: str, now: int) -> tuple[SessionEntry, SessionEntry] | None:
        """Move the session's ``updatedAt`` up to ``now`` (never back); ``(before, after)``,
        or ``None`` when there is no such session. A backend may do it without reading the
        row first (see the SQLite store)."""
        current = self.get(key)
        if current is None:
            return None
        if now <= current.updated_at:
            return current, current
        after = replace(current, updated_at=now)
        self.update(after)
        return current, after

    @abc.abstractmethod
    def delete(self, key: str) -> bool: ...

    @abc.abstractmethod
    def graft(self, old_path: tuple[str, ...], new_path: tuple[str, ...], trace_id: str) -> int:
        """Move every strict descendant of ``old_path`` under ``new_path``; return the count."""

    @abc.abstractmethod
    def subtree_paths(self, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        """The stored paths of every strict descendant of the session at ``path``."""

    @abc.abstractmethod
    def lock_lineage(self) -> None:
        """Serialise lineage changes across concurrent writers (no-op where writers are)."""

    @abc.abstractmethod
    def open_transcript(self, session_id: str, session_key: str, ts: int) -> None: ...

    @abc.abstractmethod
    def archive_transcript(self, session_id: str, reason: str, ts: int) -> bool: ...

    @abc.abstractmethod
    def append_event(
        self, session_id: str, ts: int, type: str, data: JSONObject, *, session_key: str = ""
    ) -> TranscriptEvent:
        """Append to the transcript ``session_id``. With ``session_key``, a transcript not open
        yet is opened first (only after the append found none, so an open one costs no extra
        statement); without it, a missing transcript is a :class:`StoreError`."""

    @abc.abstractmethod
    def set_extension_index(self, session_key: str, rows: Sequence[ExtensionIndexRow]) -> None:
        """Replace the session's rows of the plugin-extension index with ``rows`` (none: the
        session has no indexed extension fields, or was deleted)."""


class Store(abc.ABC):
    """A session store. Reads are methods; writes happen in :meth:`transaction`."""

    backend: str
    """``"sqlite"`` or ``"postgresql"``."""

    location: str
    """Where the data lives (a file path or a URL without credentials)."""

    tasks: TaskReads
    runs: RunReads
    inbox: InboxReads
    bindings: BindingReads
    """Reads of the collaboration tables (interfaces in :mod:`clawline.store.collab`)."""
    idempotency: IdempotencyReads
    """Run idempotency keys (:mod:`clawline.store.idempotency`)."""
    pairings: PairingReads
    """Device pairings (:mod:`clawline.store.pairing`)."""
    outbox: OutboxReads
    """The channel outbox (:mod:`clawline.store.outbox`)."""
    channel_cursors: ChannelCursorReads
    """How far each channel account's inbound stream was read
    (:mod:`clawline.store.channel_cursors`)."""
    instances: InstanceReads
    run_owners: RunOwnerReads
    handoffs: HandoffReads
    claims: ClaimReads
    """The gateway instances, who answers for each run, the runs handed from one instance to
    another, and what else each holds (:mod:`clawline.store.instances`)."""
    instance_id: str | None = None
    """The gateway instance this process registered as (:mod:`clawline.instances`), set before
    its first write: active sub-agent records and run owners written through this store are
    stamped with it."""

    @property
    @abc.abstractmethod
    def max_concurrency(self) -> int:
        """How many threads the store serves at once (more wait their turn): the number of
        workers to run store calls on."""

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[StoreTransaction]:
        """A write transaction; committed on normal exit, rolled back on an exception."""

    def claim_now(self) -> bool:
        """Take the store for the calling thread if that needs no waiting, for a short call
        run where it is made (:meth:`~clawline.store.workers.StoreWorkers.run_short`); ``True``
        obliges a :meth:`release_claim`. ``False`` (the default): calls always go to a worker
        — a store on a server answers over the network."""
        return False

    def release_claim(self) -> None:
        """Give back what :meth:`claim_now` took."""
        raise StoreError("release_claim without a claim: this store is never claimed")

    def checkpoint_due(self) -> bool:
        """Whether :meth:`checkpoint` has work worth doing now."""
        return False

    @abc.abstractmethod
    def checkpoint(self) -> None:
        """Move committed work out of the store's log, when it keeps one the caller runs
        (SQLite's WAL, once its automatic checkpoints are off: :meth:`defer_checkpoints`)."""

    @abc.abstractmethod
    def defer_checkpoints(self) -> None:
        """From now on the log is checkpointed only by :meth:`checkpoint` (a worker's job), not
        inside whichever commit fills it, which may be a short call run on the event loop."""

    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def secret(self) -> bytes:
        """A per-store random secret (created on first use), e.g. for signing cursors."""

    @abc.abstractmethod
    def instance_lock(self) -> InstanceLock:
        """A new (not yet taken) handle on the lock a gateway holds while it serves this store
        (:mod:`clawline.store.instance_lock`)."""

    def event_log(self) -> EventLog | None:
        """The event stream shared by the gateway instances on this store
        (:mod:`clawline.store.event_log`); ``None`` for a store one gateway process serves
        alone, whose bus numbers its events in memory."""
        return None

    # --- sessions ------------------------------------------------------------------------

    @abc.abstractmethod
    def get(self, key: str) -> SessionEntry | None: ...

    @abc.abstractmethod
    def get_many(self, keys: Sequence[str]) -> dict[str, SessionEntry]: ...

    @abc.abstractmethod
    def page(self, query: SessionQuery, after: Position | None, limit: int) -> Page:
        """Up to ``limit`` rows strictly after ``after`` in listing order."""

    @abc.abstractmethod
    def page_at_offset(self, query: SessionQuery, offset: int, limit: int) -> list[SessionEntry]:
        """Rows ``offset .. offset+limit`` in listing order (for protocols that demand offsets)."""

    @abc.abstractmethod
    def count(self, query: SessionQuery) -> int: ...

    @abc.abstractmethod
    def by_label(self, label: str, agent_id: str | None = None) -> list[SessionEntry]: ...

    @abc.abstractmethod
    def by_session_id(self, session_id: str) -> list[SessionEntry]: ...

    @abc.abstractmethod
    def children(self, key: str) -> list[SessionEntry]:
        """Direct children in the lineage tree, in listing order."""

    @abc.abstractmethod
    def descendants(self, path: tuple[str, ...]) -> list[SessionEntry]:
        """Every strict descendant of the session at ``path``, in path order (depth first)."""

    @abc.abstractmethod
    def tree(self, root_key: str) -> list[SessionEntry]:
        """Every row whose root is ``root_key`` (the root itself included), in path order."""

    @abc.abstractmethod
    def child_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """For each key, the keys of its direct children in listing order (one query)."""

    @abc.abstractmethod
    def sessions_by_extension(
        self, plugin_id: str, namespace: str, field: str, value: str
    ) -> list[str]:
        """Keys of the sessions whose extension ``pluginExtensions[plugin_id][namespace]`` has
        the top-level string field ``field`` equal to ``value``, in key order (an index
        lookup)."""

    # --- transcripts ---------------------------------------------------------------------

    @abc.abstractmethod
    def transcript_info(self, session_id: str) -> TranscriptInfo | None: ...

    @abc.abstractmethod
    def events(
        self, session_id: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[TranscriptEvent]:
        """Events with ``seq > after_seq`` in ascending order."""

    @abc.abstractmethod
    def tail(self, session_id: str, limit: int) -> list[TranscriptEvent]:
        """The last ``limit`` events, in ascending order."""

    @abc.abstractmethod
    def heads(self, session_ids: Sequence[str], max_seq: int) -> dict[str, list[TranscriptEvent]]:
        """For each transcript, its events with ``seq <= max_seq`` (one query)."""

    @abc.abstractmethod
    def lasts(self, session_ids: Sequence[str]) -> dict[str, TranscriptEvent]:
        """For each transcript, its last event (one query)."""

    def iter_all(self, query: SessionQuery, page_size: int = 1000) -> Iterator[SessionEntry]:
        """Every matching row by keyset walk."""
        after: Position | None = None
        while True:
            page = self.page(query, after, page_size)
            yield from page.entries
            if page.next is None:
                return
            after = page.next
