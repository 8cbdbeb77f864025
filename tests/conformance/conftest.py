"""The conformance fixtures: every test here runs once per store backend.

``store`` is a clean store of the backend under test: a new SQLite file per test, or the
run's PostgreSQL schema emptied before the test (cheaper than a schema per test; the schema and
its connection are made once per session). ``backend`` gives tests what they need beyond the
store: other store objects on the same data, stores with data (and a secret) of their own, raw
SQL, and a dump of every table for "nothing changed" checks.
"""

from __future__ import annotations

import abc
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import psycopg
import pytest
from psycopg import sql

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.store.postgres.store import PostgresStore
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock


class PgSchemas(Protocol):
    """The run's schema names (``tests/conftest.py``)."""

    def new(self, suffix: str = "") -> str: ...


TABLES = (
    "sessions",
    "transcripts",
    "transcript_events",
    "clawline_meta",
    "clawline_migrations",
    "tasks",
    "task_events",
    "subagent_runs",
    "announce_inbox",
    "thread_bindings",
    "session_extension_index",
    "run_idempotency",
    "device_pairings",
    "channel_outbox",
    "channel_cursors",
    "gateway_instances",
    "run_owners",
    "run_handoffs",
    "instance_claims",
    "run_stops",
)
PG_ONLY_TABLES = ("event_log",)
"""Tables only the PostgreSQL store has (the event log shared by several instances)."""
_DATA_TABLES = (
    "transcript_events",
    "transcripts",
    "sessions",
    "task_events",
    "tasks",
    "subagent_runs",
    "announce_inbox",
    "thread_bindings",
    "session_extension_index",
    "run_idempotency",
    "device_pairings",
    "channel_outbox",
    "channel_cursors",
    "gateway_instances",
    "run_owners",
    "run_handoffs",
    "instance_claims",
    "run_stops",
)


class Backend(abc.ABC):
    """One backend under test. ``store`` is the clean store the test starts with."""

    name: str
    store: Store

    def __init__(self) -> None:
        self._opened: list[Store] = []

    @abc.abstractmethod
    def new_location(self) -> str:
        """A place for a store with data of its own (a file path or a schema name)."""

    @abc.abstractmethod
    def _open(self, location: str) -> Store: ...

    @abc.abstractmethod
    def rows(self, query: str, location: str | None = None) -> list[tuple[Any, ...]]:
        """Run raw SQL (committed at once) on the main store's data or on ``location``'s."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Make ``store`` empty again (for tests that loop over many fresh starts)."""

    @property
    @abc.abstractmethod
    def location(self) -> str: ...

    def open(self, location: str | None = None) -> Store:
        """Another store object on the main data (or on ``location``); closed after the test."""
        store = self._open(location or self.location)
        self._opened.append(store)
        return store

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, in a stable order."""
        return {table: self.rows(f"SELECT * FROM {table} ORDER BY 1, 2") for table in TABLES}

    def close(self) -> None:
        for store in self._opened:
            store.close()


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self._directory = directory
        self._count = 0
        self._path = self.new_location()
        self.store = SQLiteStore(self._path)

    @property
    def location(self) -> str:
        return self._path

    def new_location(self) -> str:
        self._count += 1
        return str(self._directory / f"store{self._count}.db")

    def _open(self, location: str) -> Store:
        return SQLiteStore(location)

    def rows(self, query: str, location: str | None = None) -> list[tuple[Any, ...]]:
        db = sqlite3.connect(location or self._path, isolation_level=None)
        try:
            return db.execute(query).fetchall()
        finally:
            db.close()

    def reset(self) -> None:
        self.store.close()
        self._path = self.new_location()
        self.store = SQLiteStore(self._path)

    def close(self) -> None:
        super().close()
        self.store.close()


class PgShared:
    """The run's PostgreSQL schema, its store, and an admin connection for raw SQL."""

    def __init__(self, url: str, schemas: PgSchemas) -> None:
        self.url = url
        self.schemas = schemas
        self.schema = schemas.new()
        self.store = PostgresStore(url, schema=self.schema)
        self.admin = psycopg.connect(url, autocommit=True)

    def rows(self, query: str, schema: str) -> list[tuple[Any, ...]]:
        return self.many([query], schema)[0]

    def many(self, queries: list[str], schema: str) -> list[list[tuple[Any, ...]]]:
        """Run ``queries`` in one transaction with ``schema`` first on the search path."""
        results = []
        with self.admin.transaction():
            self.admin.execute(
                sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema))
            )
            for query in queries:
                cursor = self.admin.execute(query)
                results.append(cursor.fetchall() if cursor.description else [])
        return results

    def clean(self) -> None:
        self.many(
            [f"DELETE FROM {table}" for table in (*_DATA_TABLES, *PG_ONLY_TABLES)], self.schema
        )

    def close(self) -> None:
        self.store.close()
        self.admin.close()


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, shared: PgShared) -> None:
        super().__init__()
        self._shared = shared
        shared.clean()
        self.store = shared.store

    @property
    def location(self) -> str:
        return self._shared.schema

    def new_location(self) -> str:
        return self._shared.schemas.new("x")

    def _open(self, location: str) -> Store:
        return PostgresStore(self._shared.url, schema=location)

    def rows(self, query: str, location: str | None = None) -> list[tuple[Any, ...]]:
        return self._shared.rows(query, location or self.location)

    def reset(self) -> None:
        self._shared.clean()

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        queries = [f"SELECT * FROM {table} ORDER BY 1, 2" for table in TABLES]
        return dict(zip(TABLES, self._shared.many(queries, self.location), strict=True))


@pytest.fixture(scope="session")
def pg_shared(pg_url: str, pg_schemas: PgSchemas) -> Iterator[PgShared]:
    shared = PgShared(pg_url, pg_schemas)
    yield shared
    shared.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    chosen: Backend
    if request.param == "sqlite":
        chosen = SQLiteBackend(request.getfixturevalue("tmp_path"))
    else:
        chosen = PostgresBackend(request.getfixturevalue("pg_shared"))
    yield chosen
    chosen.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.store


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def catalog(store: Store, clock: FakeClock) -> SessionCatalog:
    return SessionCatalog(store, clock=clock)
