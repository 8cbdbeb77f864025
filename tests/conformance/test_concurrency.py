"""Two store objects (two connections) on the same data: writers wait for each other.

SQLite serialises write transactions as a whole; PostgreSQL locks rows and takes advisory locks.
Either way the outcome a caller sees must be the same, and these tests pin it down. Each holds
a transaction open on one store object while a catalog on another store object tries to write,
checks that the second writer waits, then lets the first commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from threading import Event
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

from clawline.errors import LabelInUse, LineageCycle
from clawline.sessions.catalog import Change, SessionCatalog
from clawline.store.base import Store, StoreTransaction
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend

T = TypeVar("T")
WAIT = 0.2
"""How long a blocked writer is given to (wrongly) finish."""

D1 = "agent:main:dashboard:d1"
D2 = "agent:main:dashboard:d2"


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=4) as executor:
        yield executor


def _blocked(future: Future[Any]) -> bool:
    time.sleep(WAIT)
    return not future.done()


def test_row_lock_prevents_lost_updates(
    backend: Backend, catalog: SessionCatalog, pool: ThreadPoolExecutor
) -> None:
    catalog.patch("agent:main:a", {})
    other = SessionCatalog(backend.open(), clock=catalog.clock)
    with catalog.store.transaction() as tx:
        current = tx.get("agent:main:a")
        assert current is not None
        tx.update(replace(current, label="from-first"))
        second = pool.submit(other.patch, "agent:main:a", {"displayName": "from-second"})
        assert _blocked(second)
    change = second.result(timeout=10)
    assert change.before is not None
    assert change.before.label == "from-first"
    final = catalog.store.get("agent:main:a")
    assert final is not None
    assert (final.label, final.display_name) == ("from-first", "from-second")


def test_creators_of_one_key_queue_up(
    backend: Backend, catalog: SessionCatalog, pool: ThreadPoolExecutor
) -> None:
    other = SessionCatalog(backend.open(), clock=catalog.clock)
    first = catalog.patch("agent:main:seed", {}).after
    assert first is not None
    with catalog.store.transaction() as tx:
        assert tx.get("agent:main:new") is None
        tx.insert(
            replace(
                first,
                key="agent:main:new",
                root_session_key="agent:main:new",
                lineage_path=("agent:main:new",),
                session_id="first-id",
            )
        )
        second = pool.submit(other.patch, "agent:main:new", {"displayName": "second"})
        assert _blocked(second)
    change: Change = second.result(timeout=10)
    assert not change.created
    after = catalog.store.get("agent:main:new")
    assert after is not None
    assert (after.session_id, after.display_name) == ("first-id", "second")


def test_label_race_ends_in_label_in_use(
    backend: Backend, catalog: SessionCatalog, pool: ThreadPoolExecutor
) -> None:
    catalog.patch("agent:main:a", {})
    catalog.patch("agent:main:b", {})
    other = SessionCatalog(backend.open(), clock=catalog.clock)
    with catalog.store.transaction() as tx:
        current = tx.get("agent:main:a")
        assert current is not None
        tx.update(replace(current, label="L"))
        second = pool.submit(other.patch, "agent:main:b", {"label": "L"})
        assert _blocked(second)
    with pytest.raises(LabelInUse) as error:
        second.result(timeout=10)
    assert str(error.value) == "label already in use: L"
    assert catalog.store.get("agent:main:b").label is None  # type: ignore[union-attr]
    assert [e.key for e in catalog.store.by_label("L")] == ["agent:main:a"]


class _PausingStore:
    """Wraps a store so that a catalog write stops right after taking the lineage lock."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.paused = Event()
        self.resume = Event()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        with self.store.transaction() as tx:
            original = tx.lock_lineage

            def lock_then_wait() -> None:
                original()
                self.paused.set()
                assert self.resume.wait(10)

            tx.lock_lineage = lock_then_wait  # type: ignore[method-assign]
            yield tx

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _pausing_catalog(store: Store, clock: FakeClock) -> tuple[SessionCatalog, _PausingStore]:
    pausing = _PausingStore(store)
    return SessionCatalog(cast(Store, pausing), clock=clock), pausing


def _when_paused(pausing: _PausingStore, run: Callable[[], T]) -> T:
    assert pausing.paused.wait(10)
    try:
        return run()
    finally:
        pausing.resume.set()


def test_concurrent_parents_cannot_form_a_cycle(
    backend: Backend, catalog: SessionCatalog, clock: FakeClock, pool: ThreadPoolExecutor
) -> None:
    catalog.patch(D1, {})
    catalog.patch(D2, {})
    first, pausing = _pausing_catalog(catalog.store, clock)
    second = SessionCatalog(backend.open(), clock=clock)
    one = pool.submit(first.patch, D1, {"parentSessionKey": D2})

    def start_second() -> Future[Change]:
        future = pool.submit(second.patch, D2, {"parentSessionKey": D1})
        assert _blocked(future)
        return future

    two = _when_paused(pausing, start_second)
    assert one.result(timeout=10).after is not None
    with pytest.raises(LineageCycle) as error:
        two.result(timeout=10)
    assert str(error.value) == f"lineage cycle: {D1} already descends from {D2}"
    d1, d2 = catalog.store.get(D1), catalog.store.get(D2)
    assert d1 is not None
    assert d2 is not None
    assert d1.lineage_path == (D2, D1)
    assert d2.lineage_path == (D2,)
    assert d2.parent_session_key is None


def test_root_created_while_a_child_attaches_shares_its_trace(
    backend: Backend, catalog: SessionCatalog, clock: FakeClock, pool: ThreadPoolExecutor
) -> None:
    child = "agent:main:subagent:c"
    root = "agent:main:main"
    first, pausing = _pausing_catalog(catalog.store, clock)
    second = SessionCatalog(backend.open(), clock=clock)
    one = pool.submit(first.patch, child, {"spawnedBy": root})

    def start_second() -> Future[Change]:
        future = pool.submit(second.patch, root, {})
        assert _blocked(future)
        return future

    two = _when_paused(pausing, start_second)
    attached = one.result(timeout=10).after
    created = two.result(timeout=10).after
    assert attached is not None
    assert created is not None
    assert created.trace_id == attached.trace_id
    assert attached.root_session_key == root


@pytest.mark.parametrize("attempt", range(3))
def test_first_open_from_many_threads(
    backend: Backend, pool: ThreadPoolExecutor, attempt: int
) -> None:
    location = backend.new_location()
    stores = list(pool.map(lambda _: backend.open(location), range(4)))
    names = backend.rows("SELECT name FROM clawline_migrations ORDER BY name", location)
    assert [row[0] for row in names] == [
        "add_binding_parent_conversation",
        "add_subagent_deferred_outcome",
        "add_subagent_instance",
        "add_subagent_spawn_keys",
        "create_announce_inbox",
        "create_channel_cursors",
        "create_channel_outbox",
        "create_device_pairings",
        *(["create_event_log"] if backend.name == "postgres" else []),
        "create_gateway_instances",
        "create_instance_claims",
        "create_meta",
        "create_run_handoffs",
        "create_run_idempotency",
        "create_run_owners",
        "create_run_stops",
        "create_session_extension_index",
        "create_sessions",
        "create_subagent_runs",
        "create_tasks",
        "create_thread_bindings",
        "create_transcripts",
        "index_outbox_due_by_channel",
        "index_sessions_by_cwd",
    ]
    secrets = set(pool.map(lambda store: store.secret(), stores))
    assert len(secrets) == 1
