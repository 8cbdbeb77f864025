"""Where the ``sessions`` commands get their data: the :class:`SessionsBackend` protocol.

Commands never touch a store or catalog themselves; they ask a backend:
:class:`LocalSessionsBackend` opens the configured store and goes through
:class:`~clawline.sessions.catalog.SessionCatalog`;
:class:`~clawline.cli.remote.GatewaySessionsBackend` talks to a running gateway (chosen by
:class:`~clawline.cli.root.CliState` when one is configured).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from clawline import keys
from clawline.clock import Clock
from clawline.config import Settings
from clawline.errors import Conflict, InvalidField, SessionNotFound
from clawline.lineage.tree import TreeNode, build_forest, tree_of
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.sessions.catalog import SessionCatalog
from clawline.store import SessionQuery, Store, open_store


@dataclass(frozen=True, slots=True)
class ListRequest:
    """Filters and paging of ``sessions list``; validated by the backend."""

    agent_id: str | None = None
    active_minutes: int | None = None
    limit: int = 100
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class SessionsPage:
    entries: list[SessionEntry]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class SessionDetail:
    """One session, the keys of its direct children (newest first) and its latest events."""

    entry: SessionEntry
    children: list[str]
    events: list[TranscriptEvent]


@dataclass(frozen=True, slots=True)
class SessionTree:
    """A whole lineage tree and the (canonical) key it was asked for."""

    root: TreeNode
    key: str


@dataclass(frozen=True, slots=True)
class Write:
    """The entry after a create or patch, and whether anything changed."""

    entry: SessionEntry
    changed: bool


@dataclass(frozen=True, slots=True)
class Deletion:
    """The deleted entry and the direct children that were left in place."""

    entry: SessionEntry
    children_left: list[str]


class SessionsBackend(Protocol):
    """Everything the ``sessions`` commands need. Errors are :class:`ClawlineError`s."""

    def list_page(self, request: ListRequest) -> SessionsPage:
        """One page, newest first; ``next_cursor`` continues it."""
        ...

    def lookup(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        """The entries among ``keys`` that exist (keys as stored, not canonicalised)."""
        ...

    def detail(self, key: str, *, events: int) -> SessionDetail:
        """The session (raises :class:`SessionNotFound`), its children and last events."""
        ...

    def tree(self, key: str) -> SessionTree:
        """The whole tree ``key`` belongs to, from its root, with placeholders."""
        ...

    def forest(self) -> list[TreeNode]:
        """Every tree in the catalog, with placeholders for ancestors not in the catalog."""
        ...

    def create(self, key: str, changes: Mapping[str, object]) -> Write:
        """Create a new session; refuses a key that exists (:class:`Conflict`)."""
        ...

    def patch(self, key: str, changes: Mapping[str, object]) -> Write:
        """Change an existing session (raises :class:`SessionNotFound`)."""
        ...

    def delete(self, key: str) -> Deletion:
        """Delete exactly one session; its children keep their lineage."""
        ...

    def close(self) -> None: ...


class LocalSessionsBackend:
    """A :class:`SessionsBackend` over a local store, through the session catalog."""

    def __init__(self, catalog: SessionCatalog) -> None:
        self.catalog = catalog

    @property
    def store(self) -> Store:
        return self.catalog.store

    def list_page(self, request: ListRequest) -> SessionsPage:
        """``--active`` is applied here, not in the store query, so that a cursor stays valid
        as "now" moves: rows come newest first, so the active ones are a prefix of each page
        and the first inactive row ends the listing."""
        agent = None if request.agent_id is None else keys.normalize_agent_id(request.agent_id)
        since = None
        if request.active_minutes is not None:
            if request.active_minutes < 1:
                raise InvalidField("invalid --active (use a number of minutes >= 1)")
            since = self.catalog.clock.now_ms() - request.active_minutes * 60_000
        query = SessionQuery(agent_id=agent)
        page = self.catalog.page(query, limit=request.limit, cursor=request.cursor)
        if since is None:
            return SessionsPage(entries=page.entries, next_cursor=page.next_cursor)
        active = [entry for entry in page.entries if entry.updated_at >= since]
        ended = len(active) < len(page.entries)
        return SessionsPage(entries=active, next_cursor=None if ended else page.next_cursor)

    def lookup(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        return self.store.get_many(keys)

    def detail(self, key: str, *, events: int) -> SessionDetail:
        entry = self.catalog.require(key)
        children = [child.key for child in self.store.children(entry.key)]
        tail = self.store.tail(entry.session_id, events) if events > 0 else []
        return SessionDetail(entry=entry, children=children, events=tail)

    def tree(self, key: str) -> SessionTree:
        canonical = self.catalog.canonical(key)
        root = tree_of(self.store, canonical)
        if root is None:
            raise SessionNotFound(f"session not found: {canonical}")
        return SessionTree(root=root, key=canonical)

    def forest(self) -> list[TreeNode]:
        return build_forest(self.store.iter_all(SessionQuery()), placeholders=True)

    def create(self, key: str, changes: Mapping[str, object]) -> Write:
        canonical = self.catalog.canonical(key)
        if self.store.get(canonical) is not None:
            raise Conflict(f"session already exists: {canonical} (use 'sessions patch')")
        change = self.catalog.patch(canonical, changes, create=True)
        assert change.after is not None
        return Write(entry=change.after, changed=True)

    def patch(self, key: str, changes: Mapping[str, object]) -> Write:
        change = self.catalog.patch(key, changes, create=False)
        assert change.after is not None
        return Write(entry=change.after, changed=change.after != change.before)

    def delete(self, key: str) -> Deletion:
        canonical = self.catalog.canonical(key)
        children = [child.key for child in self.store.children(canonical)]
        change = self.catalog.delete(canonical)
        assert change.before is not None
        return Deletion(entry=change.before, children_left=children)

    def close(self) -> None:
        self.store.close()


def open_local_backend(settings: Settings, clock: Clock) -> LocalSessionsBackend:
    """The configured store (``store_url``, else SQLite in the state directory)."""
    store = open_store(
        settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
    )
    catalog = SessionCatalog(
        store,
        clock=clock,
        default_agent_id=settings.default_agent_id,
        main_key=settings.main_key,
    )
    return LocalSessionsBackend(catalog)
