"""The session catalog: the one domain service that changes sessions.

It canonicalises keys, validates changes (:mod:`clawline.sessions.changes`), resolves lineage
(root, path, trace id; cycles refused) and writes everything in one store transaction. Callers
(CLI, gateway methods, agent tools) never write to the store directly.

Once a transaction has committed, the catalog publishes its domain events
(:mod:`clawline.events`), carrying the entries as committed: a
:class:`~clawline.events.MessageAppended` for every transcript message appended, and a
:class:`~clawline.events.SessionChanged` for every write that was given a :class:`Cause` (why
the change is told: ``sessions.changed``'s reason, phase and run id). A transaction that fails
publishes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from clawline import keys
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.errors import InvalidField, LineageCycle, LineageError, SessionNotFound
from clawline.events import (
    DomainEvent,
    DomainEvents,
    MessageAppended,
    OutboxQueued,
    SessionChanged,
)
from clawline.records.outbox import OutboxItem
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.sessions.changes import apply_changes, check_event
from clawline.sessions.labels import label_in_use, normalize_label
from clawline.store.base import (
    MAX_LINEAGE_PATH_BYTES,
    SessionQuery,
    Store,
    StoreTransaction,
    encode_path,
)
from clawline.store.cursor import CursorCodec
from clawline.store.extension_index import extension_index_rows
from clawline.types import JSONObject

MAX_LIST_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Change:
    """What one write did: the entry before (``None`` if created) and after (``None`` if
    deleted)."""

    key: str
    before: SessionEntry | None
    after: SessionEntry | None

    @property
    def created(self) -> bool:
        return self.before is None and self.after is not None


@dataclass(frozen=True, slots=True)
class Cause:
    """Why a write is told as :class:`~clawline.events.SessionChanged` (``reason``: ``create``,
    ``patch``, ``send``, ``delete``, ``reset``, …; ``phase`` within a run)."""

    reason: str
    phase: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class CatalogPage:
    entries: list[SessionEntry]
    next_cursor: str | None


def _path_bytes(path: tuple[str, ...]) -> int:
    return len(encode_path(path).encode())


class SessionCatalog:
    """Create, patch, delete, reset and list sessions through one :class:`Store`."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock = SYSTEM_CLOCK,
        default_agent_id: str = keys.DEFAULT_AGENT_ID,
        main_key: str = keys.DEFAULT_MAIN_KEY,
        events: DomainEvents | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self._events = events
        self.default_agent_id = keys.normalize_agent_id(default_agent_id)
        self.main_key = main_key
        self._codec: CursorCodec | None = None
        self._listeners: list[Callable[[Change], None]] = []

    # --- keys ----------------------------------------------------------------------------

    def canonical(self, raw: object) -> str:
        return keys.canonicalize(
            raw, default_agent_id=self.default_agent_id, main_key=self.main_key
        )

    @property
    def main_session_key(self) -> str:
        return keys.main_session_key(self.default_agent_id, self.main_key)

    def on_change(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener`` after every committed write (used to publish events)."""
        self._listeners.append(listener)

    def _emit(self, change: Change) -> None:
        for listener in self._listeners:
            listener(change)

    # --- reads ---------------------------------------------------------------------------

    def get(self, key: object) -> SessionEntry | None:
        return self.store.get(self.canonical(key))

    def require(self, key: object) -> SessionEntry:
        canonical = self.canonical(key)
        entry = self.store.get(canonical)
        if entry is None:
            raise SessionNotFound(f"session not found: {canonical}")
        return entry

    def _cursor_codec(self) -> CursorCodec:
        if self._codec is None:
            self._codec = CursorCodec(self.store.secret())
        return self._codec

    def page(
        self, query: SessionQuery | None = None, *, limit: int = 100, cursor: str | None = None
    ) -> CatalogPage:
        """One keyset page; ``cursor`` is the ``next_cursor`` of the previous page."""
        query = query or SessionQuery()
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_LIST_LIMIT:
            raise InvalidField(f"invalid limit (use an integer from 1 to {MAX_LIST_LIMIT})")
        fingerprint = query.fingerprint()
        after = None if cursor is None else self._cursor_codec().decode(cursor, fingerprint)
        page = self.store.page(query, after, limit)
        next_cursor = (
            None if page.next is None else self._cursor_codec().encode(page.next, fingerprint)
        )
        return CatalogPage(entries=page.entries, next_cursor=next_cursor)

    def by_label(self, label: object, agent_id: str | None = None) -> list[SessionEntry]:
        agent = None if agent_id is None else keys.normalize_agent_id(agent_id)
        return self.store.by_label(normalize_label(label), agent)

    # --- writes --------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[CatalogTransaction]:
        """Several writes in one store transaction: the catalog's own (``patch``, ``append``,
        …) and, through ``.tx``, other tables' (tasks, run records, inbox). Listeners hear of
        the changes once the transaction has committed; a failure writes nothing."""
        with self.store.transaction() as tx:
            work = CatalogTransaction(self, tx)
            yield work
        for change in work.changes:
            self._emit(change)
        if self._events is not None:
            for event in work.told:
                self._events.publish(event)

    def patch(
        self,
        key: object,
        changes: Mapping[str, object],
        *,
        create: bool = True,
        touch: bool = True,
        cause: Cause | None = None,
    ) -> Change:
        """Apply ``changes`` to a session, creating it when missing (unless ``create=False``).

        All checks happen before anything is written; a refused change writes nothing.
        """
        with self.transaction() as work:
            return work.patch(key, changes, create=create, touch=touch, cause=cause)

    def _patch(
        self,
        tx: StoreTransaction,
        key: object,
        changes: Mapping[str, object],
        *,
        create: bool,
        touch: bool,
        new: bool = False,
    ) -> Change:
        canonical = self.canonical(key)
        now = self.clock.now_ms()
        current = None if new else tx.get(canonical)
        if current is None and not create:
            raise SessionNotFound(f"session not found: {canonical}")
        result = apply_changes(
            current, canonical, changes, now=now, touch=touch, canonical=self.canonical
        )
        entry = result.entry
        explicit_trace = "traceId" in changes and changes["traceId"] is not None
        if result.new_parent is not None:
            tx.lock_lineage()
            parent = tx.get(result.new_parent)
            parent_path = parent.lineage_path if parent else (result.new_parent,)
            old_path = current.lineage_path if current else (canonical,)
            # Every row whose stored path runs through this session moves with it (children
            # created before it existed included). No key on the new parent's path may
            # appear below it, not even a deleted session still named on a path.
            moving = [] if new else tx.subtree_paths(old_path)
            ancestors = set(parent_path)
            if canonical in ancestors or any(
                not ancestors.isdisjoint(below[len(old_path) :]) for below in moving
            ):
                raise LineageCycle(
                    f"lineage cycle: {result.new_parent} already descends from {canonical}"
                )
            if explicit_trace:
                raise InvalidField("traceId is inherited from the parent session")
            new_path = (*parent_path, canonical)
            trace = (parent.trace_id if parent else None) or tx.trace_of_tree(result.new_parent)
            trace = trace or entry.trace_id
            self._check_path_size(moving, old_path, new_path)
            entry = replace(
                entry, lineage_path=new_path, root_session_key=new_path[0], trace_id=trace
            )
            if moving:  # else no stored row runs through it: nothing to move
                tx.graft(old_path, new_path, trace)
        elif current is None:
            existing = tx.trace_of_tree(canonical)
            if existing and explicit_trace and existing != entry.trace_id:
                raise InvalidField("traceId is inherited from the existing tree")
            if existing:
                entry = replace(entry, trace_id=existing)
        if result.label_changed and entry.label is not None:
            holder = tx.key_for_label(entry.agent_id, entry.label)
            if holder is not None and holder != canonical:
                raise label_in_use(entry.label)
        if current is None:
            tx.insert(entry)
            tx.open_transcript(entry.session_id, canonical, now)
        elif entry != current:
            tx.update(entry)
        before_extensions = current.plugin_extensions if current is not None else {}
        if entry.plugin_extensions != before_extensions:
            tx.set_extension_index(canonical, extension_index_rows(entry.plugin_extensions))
        return Change(key=canonical, before=current, after=entry)

    @staticmethod
    def _check_path_size(
        moving: list[tuple[str, ...]], old_path: tuple[str, ...], new_path: tuple[str, ...]
    ) -> None:
        grown = _path_bytes(new_path) - _path_bytes(old_path)
        longest = max([_path_bytes(new_path), *(_path_bytes(p) + grown for p in moving)])
        if longest > MAX_LINEAGE_PATH_BYTES:
            raise LineageError(
                f"lineage too deep: the path from the root would exceed "
                f"{MAX_LINEAGE_PATH_BYTES} bytes"
            )

    def delete(
        self, key: object, *, archive_transcript: bool = True, cause: Cause | None = None
    ) -> Change:
        """Delete exactly one session. Children are never touched: their lineage (path, root,
        trace id) stays as it was."""
        with self.transaction() as work:
            return work.delete(key, archive_transcript=archive_transcript, cause=cause)

    def _delete(self, tx: StoreTransaction, key: object, *, archive_transcript: bool) -> Change:
        canonical = self.canonical(key)
        now = self.clock.now_ms()
        current = tx.get(canonical)
        if current is None:
            raise SessionNotFound(f"session not found: {canonical}")
        tx.delete(canonical)
        if current.plugin_extensions:
            tx.set_extension_index(canonical, ())
        if archive_transcript:
            tx.archive_transcript(current.session_id, "deleted", now)
        return Change(key=canonical, before=current, after=None)

    def reset(self, key: object, *, cause: Cause | None = None) -> Change:
        """Give a session a new incarnation: new ``sessionId``, fresh transcript, old one
        archived. Lineage, label and settings stay."""
        with self.transaction() as work:
            return work.reset(key, cause=cause)

    def _reset(self, tx: StoreTransaction, key: object) -> Change:
        canonical = self.canonical(key)
        now = self.clock.now_ms()
        current = tx.get(canonical)
        if current is None:
            raise SessionNotFound(f"session not found: {canonical}")
        entry = replace(
            current,
            session_id=keys.new_session_id(),
            updated_at=max(now, current.updated_at),
            status=None,
            started_at=None,
            ended_at=None,
        )
        tx.archive_transcript(current.session_id, "reset", now)
        tx.update(entry)
        tx.open_transcript(entry.session_id, canonical, now)
        return Change(key=canonical, before=current, after=entry)

    def append(
        self,
        key: object,
        type: str,
        data: JSONObject,
        *,
        touch: bool = True,
        run_id: str | None = None,
        inject_run_id: str | None = None,
    ) -> TranscriptEvent:
        """Append one event to the session's current transcript (the session must exist).
        ``run_id``: the run the message belongs to; ``inject_run_id``: ``chat.inject``'s
        one-off run (see :class:`~clawline.events.MessageAppended`)."""
        with self.transaction() as work:
            return work.append(
                key, type, data, touch=touch, run_id=run_id, inject_run_id=inject_run_id
            )

    def _append(
        self, tx: StoreTransaction, key: object, type: str, data: JSONObject, *, touch: bool
    ) -> tuple[TranscriptEvent, Change]:
        check_event(type, data)
        canonical = self.canonical(key)
        now = self.clock.now_ms()
        if touch:
            touched = tx.touch(canonical, now)
            current, after = touched if touched is not None else (None, None)
        else:
            current = after = tx.get(canonical)
        if current is None or after is None:
            raise SessionNotFound(f"session not found: {canonical}")
        event = tx.append_event(after.session_id, now, type, data, session_key=canonical)
        return event, Change(key=canonical, before=current, after=after)


class CatalogTransaction:
    """Catalog writes inside one store transaction (see :meth:`SessionCatalog.transaction`).
    ``tx`` is the store transaction, for writes to other tables in the same commit."""

    def __init__(self, catalog: SessionCatalog, tx: StoreTransaction) -> None:
        self.catalog = catalog
        self.tx = tx
        self.changes: list[Change] = []
        self.told: list[DomainEvent] = []
        """The domain events published once this transaction commits."""

    def _record(self, change: Change, cause: Cause | None = None) -> Change:
        if change.before != change.after:
            self.changes.append(change)
        if cause is not None:
            self.tell(
                SessionChanged(
                    change.key,
                    cause.reason,
                    phase=cause.phase,
                    run_id=cause.run_id,
                    entry=change.after,
                    deleted=change.before if change.after is None else None,
                )
            )
        return change

    def tell(self, event: DomainEvent) -> None:
        """Publish ``event`` once (and only if) this transaction commits."""
        self.told.append(event)

    def queue_outbox(self, item: OutboxItem) -> OutboxItem | None:
        """Queue ``item`` in the channel outbox with this transaction's other writes, and wake
        the delivery loop once it commits; ``None`` when its dedupe key was already queued."""
        queued = self.tx.outbox.enqueue([item])
        if not queued:
            return None
        self.tell(OutboxQueued(tuple(row.id for row in queued if row.id is not None)))
        return queued[0]

    def patch(
        self,
        key: object,
        changes: Mapping[str, object],
        *,
        create: bool = True,
        touch: bool = True,
        cause: Cause | None = None,
        new: bool = False,
    ) -> Change:
        """See :meth:`SessionCatalog.patch`. ``new``: ``key`` was just minted (a spawn's
        ``…:subagent:<uuid>``), so there is no row to read and none below it to move; should
        a row exist after all, the insert fails and the transaction with it."""
        change = self.catalog._patch(self.tx, key, changes, create=create, touch=touch, new=new)
        return self._record(change, cause)

    def delete(
        self, key: object, *, archive_transcript: bool = True, cause: Cause | None = None
    ) -> Change:
        change = self.catalog._delete(self.tx, key, archive_transcript=archive_transcript)
        return self._record(change, cause)

    def reset(self, key: object, *, cause: Cause | None = None) -> Change:
        return self._record(self.catalog._reset(self.tx, key), cause)

    def append(
        self,
        key: object,
        type: str,
        data: JSONObject,
        *,
        touch: bool = True,
        run_id: str | None = None,
        inject_run_id: str | None = None,
    ) -> TranscriptEvent:
        event, change = self.catalog._append(self.tx, key, type, data, touch=touch)
        self._record(change)
        self.tell(
            MessageAppended(
                change.key, event, run_id=run_id, inject_run_id=inject_run_id, entry=change.after
            )
        )
        return event
