"""The PostgreSQL store's connection pool: several threads at once, at most ``poolSize``
connections, every connection set up alike, and lock and statement timeouts that fail one call
with :class:`StoreTimeout` without holding up the others."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import TupleRow

from clawline.config import PoolSettings, load_settings
from clawline.errors import StoreError, StoreTimeout, StoreUnavailable
from clawline.sessions.catalog import SessionCatalog
from clawline.store import SessionQuery, open_store
from clawline.store.postgres.store import PostgresStore

if TYPE_CHECKING:
    from .conftest import PgSchemas

pytestmark = pytest.mark.postgres

LOCKED = "agent:main:locked"
OTHER = "agent:main:other"
_CONNECTIONS = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
_LOCK_WAITERS = _CONNECTIONS + " AND wait_event_type = 'Lock'"


class Opened:
    """Stores opened by one test, each in a fresh schema and with an application_name of its
    own (its schema's name), so its server sessions can be told apart; closed after the test."""

    def __init__(self, url: str, schemas: PgSchemas) -> None:
        self._url = url
        self._schemas = schemas
        self._stores: list[PostgresStore] = []

    def __call__(self, settings: PoolSettings, suffix: str = "pool") -> tuple[PostgresStore, str]:
        schema = self._schemas.new(suffix)
        store = PostgresStore(
            f"{self._url}?application_name={quote(schema)}", schema=schema, pool=settings
        )
        self._stores.append(store)
        return store, schema

    def close(self) -> None:
        for store in self._stores:
            store.close()


@pytest.fixture
def opened(pg_url: str, pg_schemas: PgSchemas) -> Iterator[Opened]:
    stores = Opened(pg_url, pg_schemas)
    yield stores
    stores.close()


@pytest.fixture
def admin(pg_url: str) -> Iterator[psycopg.Connection[TupleRow]]:
    with psycopg.connect(pg_url, autocommit=True) as db:
        yield db


def _count(db: psycopg.Connection[TupleRow], query: str, name: str) -> int:
    row = db.execute(query, (name,)).fetchone()
    assert row is not None
    return int(row[0])


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.005)


def _lock_row(admin: psycopg.Connection[TupleRow], schema: str, key: str) -> None:
    """Lock the session's row on ``admin`` until its transaction ends."""
    admin.execute(
        sql.SQL("SELECT key FROM {} WHERE key = %s FOR UPDATE").format(
            sql.Identifier(schema, "sessions")
        ),
        (key,),
    )


def test_threads_share_the_store_over_at_most_pool_size_connections(
    opened: Opened, pg_url: str
) -> None:
    size, threads, rounds = 3, 8, 12
    store, name = opened(PoolSettings(size=size))
    assert store.max_concurrency == size
    catalog = SessionCatalog(store)
    counts: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(pg_url, autocommit=True) as db:
            while not stop.is_set():
                counts.append(_count(db, _CONNECTIONS, name))

    def work(worker: int) -> list[str | None]:
        key = f"agent:main:worker{worker}"
        seen = []
        for step in range(rounds):
            catalog.patch(key, {"displayName": f"{worker}.{step}"})
            entry = store.get(key)
            seen.append(entry.display_name if entry else None)
            assert store.count(SessionQuery()) >= 1
            assert store.transcript_info("no such transcript") is None
        return seen

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            results = list(pool.map(work, range(threads)))
    finally:
        stop.set()
        sampler.join()
    for worker, seen in enumerate(results):
        assert seen == [f"{worker}.{step}" for step in range(rounds)]
    listed = {entry.key: entry.display_name for entry in store.iter_all(SessionQuery())}
    assert listed == {f"agent:main:worker{w}": f"{w}.{rounds - 1}" for w in range(threads)}
    assert counts, "the sampler never ran"
    assert max(counts) <= size
    assert max(counts) >= 2, "the threads never used more than one connection at once"


def test_every_pooled_connection_is_set_up_alike(
    opened: Opened, pg_schemas: PgSchemas, pg_url: str
) -> None:
    settings = PoolSettings(size=3, statement_timeout_ms=12_345, lock_timeout_ms=2_345)
    store, name = opened(settings, suffix='odd "schema" ')
    together = threading.Barrier(3, timeout=10)

    def inside_a_transaction(_: int) -> tuple[Any, ...]:
        with store.transaction():
            together.wait()  # all three hold a connection now
            rows = store._fetch(
                "SELECT pg_backend_pid(), current_setting('statement_timeout'),"
                " current_setting('lock_timeout'), current_schema()"
            )
            together.wait()
        return tuple(rows[0])

    with ThreadPoolExecutor(max_workers=3) as pool:
        seen = list(pool.map(inside_a_transaction, range(3)))
    assert len({row[0] for row in seen}) == 3
    assert {row[1:] for row in seen} == {("12345ms", "2345ms", name)}
    with psycopg.connect(pg_url, autocommit=True) as db:
        assert _count(db, _CONNECTIONS, name) == 3


def test_a_lock_wait_holds_up_only_its_own_call(
    opened: Opened, admin: psycopg.Connection[TupleRow]
) -> None:
    store, name = opened(PoolSettings(size=2))
    catalog = SessionCatalog(store)
    catalog.patch(LOCKED, {})
    catalog.patch(OTHER, {})
    workers = ThreadPoolExecutor(max_workers=store.max_concurrency)
    try:
        with admin.transaction():
            _lock_row(admin, name, LOCKED)
            blocked = workers.submit(catalog.patch, LOCKED, {"displayName": "after the lock"})
            _wait_until(lambda: _count(admin, _LOCK_WAITERS, name) == 1, "the patch waits")

            def meanwhile() -> str | None:
                catalog.patch(OTHER, {"displayName": "meanwhile"})
                entry = store.get(OTHER)
                return entry.display_name if entry else None

            assert workers.submit(meanwhile).result(timeout=10) == "meanwhile"
            assert not blocked.done()
            assert _count(admin, _LOCK_WAITERS, name) == 1
        after = blocked.result(timeout=10).after
        assert after is not None
        assert after.display_name == "after the lock"
    finally:
        workers.shutdown(wait=True)


def test_a_lock_wait_fails_after_the_lock_timeout(
    opened: Opened, admin: psycopg.Connection[TupleRow]
) -> None:
    store, name = opened(PoolSettings(size=2, lock_timeout_ms=200))
    catalog = SessionCatalog(store)
    catalog.patch(LOCKED, {"displayName": "before"})
    with admin.transaction():
        _lock_row(admin, name, LOCKED)
        started = time.monotonic()
        with pytest.raises(StoreTimeout) as error:
            catalog.patch(LOCKED, {"displayName": "too late"})
        waited = time.monotonic() - started
    assert waited >= 0.2
    assert "lock timeout" in str(error.value)
    assert str(error.value).startswith(f"{store.location}: ")
    entry = store.get(LOCKED)
    assert entry is not None
    assert entry.display_name == "before"
    # The connection went back to the pool in working order.
    assert catalog.patch(LOCKED, {"displayName": "later"}).after is not None
    assert [e.display_name for e in store.by_session_id(entry.session_id)] == ["later"]


def test_a_long_statement_fails_after_the_statement_timeout(
    opened: Opened, admin: psycopg.Connection[TupleRow]
) -> None:
    store, name = opened(PoolSettings(size=2, statement_timeout_ms=200))
    catalog = SessionCatalog(store)
    catalog.patch(OTHER, {})
    # Inserting a slow:* session takes 5 s (a trigger of the test's).
    admin.execute(
        sql.SQL(
            "CREATE FUNCTION {} () RETURNS trigger LANGUAGE plpgsql"
            " AS $$ BEGIN PERFORM pg_sleep(5); RETURN NEW; END $$"
        ).format(sql.Identifier(name, "slow_insert"))
    )
    admin.execute(
        sql.SQL(
            "CREATE TRIGGER slow BEFORE INSERT ON {} FOR EACH ROW"
            " WHEN (NEW.key LIKE 'agent:main:slow%%') EXECUTE FUNCTION {} ()"
        ).format(sql.Identifier(name, "sessions"), sql.Identifier(name, "slow_insert"))
    )
    started = time.monotonic()
    with pytest.raises(StoreTimeout) as error:
        catalog.patch("agent:main:slow", {"label": "slow"})
    assert 0.2 <= time.monotonic() - started < 5
    assert "statement timeout" in str(error.value)
    assert store.get("agent:main:slow") is None
    assert store.by_label("slow") == []
    with pytest.raises(StoreTimeout, match="statement timeout"):
        store._fetch("SELECT pg_sleep(5)")
    assert catalog.patch(OTHER, {"displayName": "still fine"}).after is not None


def test_reads_in_a_transaction_use_its_connection(opened: Opened, pg_url: str) -> None:
    store, name = opened(PoolSettings(size=1))
    catalog = SessionCatalog(store)
    catalog.patch(OTHER, {})
    with ThreadPoolExecutor(max_workers=1) as other_thread:
        with store.transaction() as tx:
            tx.open_transcript("sid-1", OTHER, 1)
            # This thread sees its own uncommitted write, even with the pool's only
            # connection in the transaction; another thread waits for that connection.
            info = store.transcript_info("sid-1")
            assert info is not None
            assert info.session_key == OTHER
            with pytest.raises(StoreError, match="transactions do not nest"), store.transaction():
                pass
            elsewhere = other_thread.submit(store.transcript_info, "sid-1")
            with psycopg.connect(pg_url, autocommit=True) as db:
                assert _count(db, _CONNECTIONS, name) == 1
        committed = elsewhere.result(timeout=10)
    assert committed is not None
    assert committed.session_id == "sid-1"


def test_close_ends_every_connection(opened: Opened, admin: psycopg.Connection[TupleRow]) -> None:
    store, name = opened(PoolSettings(size=2))
    together = threading.Barrier(2, timeout=10)

    def hold(_: int) -> None:
        with store.transaction():
            together.wait()

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(hold, range(2)))
    assert _count(admin, _CONNECTIONS, name) == 2
    store.close()
    _wait_until(lambda: _count(admin, _CONNECTIONS, name) == 0, "the connections are gone")
    with pytest.raises(StoreUnavailable, match="the store is closed"):
        store.get(OTHER)
    with pytest.raises(StoreUnavailable, match="the store is closed"), store.transaction():
        pass


def test_the_config_keys_reach_the_store(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    schema = pg_schemas.new("cfg")
    (tmp_path / "config.toml").write_text(
        f'[store]\nurl = "{pg_url}?schema={schema}&application_name={schema}"\n'
        "poolSize = 2\nstatementTimeoutMs = 4321\nlockTimeoutMs = 1234\n",
        encoding="utf-8",
    )
    settings = load_settings({"CLAWLINE_STATE_DIR": str(tmp_path)})
    store = open_store(settings.store_url, pool=settings.store_pool)
    try:
        assert isinstance(store, PostgresStore)
        assert store.max_concurrency == 2
        rows = store._fetch(
            "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'),"
            " current_schema(), current_setting('application_name')"
        )
        assert tuple(rows[0]) == ("4321ms", "1234ms", schema, schema)
    finally:
        store.close()


def test_connections_the_server_dropped_cost_one_failed_call(
    opened: Opened, admin: psycopg.Connection[TupleRow]
) -> None:
    store, name = opened(PoolSettings(size=2))
    SessionCatalog(store).patch(OTHER, {})
    together = threading.Barrier(2, timeout=10)

    def hold(_: int) -> None:
        with store.transaction():
            together.wait()

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(hold, range(2)))
    killed = admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        (name,),
    ).fetchall()
    assert killed == [(True,), (True,)]
    _wait_until(lambda: _count(admin, _CONNECTIONS, name) == 0, "the sessions have ended")
    with pytest.raises(StoreUnavailable):
        store.get(OTHER)
    # The first failure had the pool replace the other dead connection too.
    assert store.get(OTHER) is not None
    assert store.count(SessionQuery()) == 1
