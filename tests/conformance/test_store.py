"""The store itself: migrations, the secret, transactions, reopening."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.errors import LabelInUse, MigrationError, StoreError
from clawline.sessions.catalog import SessionCatalog
from clawline.store import redact_url
from clawline.store.base import Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend


def test_backend_name(backend: Backend, store: Store) -> None:
    assert store.backend == {"sqlite": "sqlite", "postgres": "postgresql"}[backend.name]


def test_migrations_are_recorded_once(backend: Backend) -> None:
    names = [row[0] for row in backend.rows("SELECT name FROM clawline_migrations ORDER BY name")]
    assert names == [
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
    backend.open()
    backend.open()
    again = [row[0] for row in backend.rows("SELECT name FROM clawline_migrations ORDER BY name")]
    assert again == names


def test_reopening_keeps_everything(catalog: SessionCatalog, backend: Backend) -> None:
    entry = catalog.patch("agent:main:a", {"label": "x", "model": "m"}).after
    assert entry is not None
    event = catalog.append("agent:main:a", "message", {"n": 1})
    secret = catalog.store.secret()
    reopened = backend.open()
    assert reopened.get("agent:main:a") == entry
    assert reopened.events(entry.session_id) == [event]
    assert reopened.secret() == secret


def test_unknown_migration_is_refused(backend: Backend) -> None:
    location = backend.new_location()
    backend.open(location)
    backend.rows(
        "INSERT INTO clawline_migrations (name, applied_at) VALUES ('from_the_future', 1)",
        location,
    )
    with pytest.raises(MigrationError) as error:
        backend.open(location)
    assert str(error.value) == (
        "the store was written by a newer clawline (unknown migrations: from_the_future)"
    )


def test_secret_is_random_per_store_and_stable(backend: Backend, store: Store) -> None:
    secret = store.secret()
    assert len(secret) == 32
    assert store.secret() == secret
    assert backend.open().secret() == secret
    assert backend.open(backend.new_location()).secret() != secret


def test_transaction_commits_on_success(store: Store, backend: Backend) -> None:
    source = SessionCatalog(backend.open(), clock=FakeClock())
    entry = source.patch("agent:main:a", {}).after
    assert entry is not None
    with store.transaction() as tx:
        tx.update(replace(entry, display_name="in tx"))
    assert backend.open().get("agent:main:a").display_name == "in tx"  # type: ignore[union-attr]


def test_transaction_rolls_back_on_error(store: Store, backend: Backend) -> None:
    catalog = SessionCatalog(store, clock=FakeClock())
    entry = catalog.patch("agent:main:a", {}).after
    assert entry is not None
    before = backend.dump()

    def write_then_fail() -> None:
        with store.transaction() as tx:
            tx.update(replace(entry, display_name="lost"))
            tx.delete("agent:main:a")
            tx.archive_transcript(entry.session_id, "deleted", 5)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert backend.dump() == before
    assert store.get("agent:main:a") == entry
    with store.transaction() as tx:  # the store is usable again
        assert tx.get("agent:main:a") == entry


def test_transactions_do_not_nest(store: Store) -> None:
    with store.transaction(), pytest.raises(StoreError) as error, store.transaction():
        pass
    assert str(error.value) == "transactions do not nest"
    with store.transaction() as tx:
        assert tx.get("agent:main:nothing") is None


def test_transaction_primitives(store: Store, catalog: SessionCatalog) -> None:
    catalog.patch("agent:main:a", {"label": "L"})
    catalog.patch("agent:main:subagent:b", {"spawnedBy": "agent:main:a"})
    a = store.get("agent:main:a")
    assert a is not None
    with store.transaction() as tx:
        assert tx.key_for_label("main", "L") == "agent:main:a"
        assert tx.key_for_label("ops", "L") is None
        assert tx.trace_of_tree("agent:main:a") == a.trace_id
        assert tx.trace_of_tree("agent:main:none") is None
        assert tx.subtree_paths(("agent:main:a",)) == [("agent:main:a", "agent:main:subagent:b")]
        assert tx.subtree_paths(("agent:main:subagent:b",)) == []
        tx.lock_lineage()
        assert tx.delete("agent:main:none") is False
        assert tx.archive_transcript("no-such-id", "deleted", 1) is False
        assert tx.archive_transcript(a.session_id, "deleted", 1) is True
        assert tx.archive_transcript(a.session_id, "deleted", 2) is False
        assert tx.graft(("agent:main:a",), ("agent:main:root", "agent:main:a"), "f" * 32) == 1
        with pytest.raises(StoreError) as error:
            tx.append_event("no-such-id", 1, "message", {})
        assert str(error.value) == "no transcript for session id no-such-id"
        opened = tx.append_event("new-id", 1, "message", {"n": 1}, session_key="agent:main:a")
        again = tx.append_event("new-id", 2, "message", {"n": 2}, session_key="agent:main:a")
        assert (opened.seq, again.seq) == (1, 2)
    assert [event.data for event in store.events("new-id")] == [{"n": 1}, {"n": 2}]
    moved = store.get("agent:main:subagent:b")
    assert moved is not None
    assert moved.lineage_path == ("agent:main:root", "agent:main:a", "agent:main:subagent:b")
    assert (moved.root_session_key, moved.trace_id) == ("agent:main:root", "f" * 32)


def test_store_location(backend: Backend, store: Store, request: pytest.FixtureRequest) -> None:
    if backend.name == "sqlite":
        assert store.location == backend.location
    else:
        assert store.location == redact_url(request.getfixturevalue("pg_url"))


def test_label_index_backs_up_the_catalog(store: Store, catalog: SessionCatalog) -> None:
    taken = catalog.patch("agent:main:a", {"label": "L"}).after
    other = catalog.patch("agent:main:b", {}).after
    assert taken is not None
    assert other is not None
    with pytest.raises(LabelInUse) as error, store.transaction() as tx:
        tx.update(replace(other, label="L"))
    assert str(error.value) == "label already in use: L"
    fresh = replace(taken, key="agent:main:c", session_id="c-id", lineage_path=("agent:main:c",))
    with pytest.raises(LabelInUse) as error, store.transaction() as tx:
        tx.insert(fresh)
    assert str(error.value) == "label already in use: L"
    with pytest.raises(StoreError) as store_error, store.transaction() as tx:
        tx.insert(replace(taken, label=None))
    assert not isinstance(store_error.value, LabelInUse)
    assert store.get("agent:main:b") == other
    assert store.get("agent:main:c") is None
