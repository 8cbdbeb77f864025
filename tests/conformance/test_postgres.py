"""What only the PostgreSQL backend has: URLs, schemas, column types, connection failures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import TupleRow

from clawline.errors import StoreUnavailable
from clawline.sessions.catalog import SessionCatalog
from clawline.store import open_store
from clawline.store.postgres.store import PostgresStore
from tests.conformance.conftest import PG_ONLY_TABLES, TABLES

if TYPE_CHECKING:
    from .conftest import PgSchemas

pytestmark = pytest.mark.postgres

PASSWORD = "s3cr3t-Pa55/w@rd"
ENCODED = "s3cr3t-Pa55%2Fw%40rd"


def _with_password(url: str, *, port: int | None = None, user: str | None = None) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    netloc = f"{user or parts.username or 'postgres'}:{ENCODED}@{host}:{port or parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
def admin(pg_url: str) -> Iterator[psycopg.Connection[TupleRow]]:
    with psycopg.connect(pg_url, autocommit=True) as db:
        yield db


@pytest.fixture
def schema(pg_schemas: PgSchemas) -> str:
    return pg_schemas.new("pg")


def test_unreachable_server_never_shows_the_password(pg_url: str) -> None:
    url = _with_password(pg_url, port=1)
    with pytest.raises(StoreUnavailable) as error:
        PostgresStore(url)
    message = str(error.value)
    assert message.startswith(f"cannot connect to {urlsplit(url).scheme}://postgres:***@")
    assert PASSWORD not in message
    assert ENCODED not in message
    assert "s3cr3t" not in message


def test_unknown_role_never_shows_the_password(pg_url: str) -> None:
    url = _with_password(pg_url, user="no_such_role_here")
    with pytest.raises(StoreUnavailable) as error:
        PostgresStore(url)
    assert "no_such_role_here" in str(error.value)
    assert "s3cr3t" not in str(error.value)


def test_location_is_redacted(pg_url: str, schema: str) -> None:
    store = PostgresStore(_with_password(pg_url), schema=schema)  # trust auth ignores it
    try:
        assert store.location.startswith("postgresql://postgres:***@")
        assert "s3cr3t" not in store.location
    finally:
        store.close()


def test_open_store_routes_schema_urls(
    pg_url: str, schema: str, admin: psycopg.Connection[TupleRow]
) -> None:
    for prefix in ("postgresql://", "postgres://"):
        url = prefix + pg_url.split("://", 1)[1] + f"?schema={schema}"
        store = open_store(url)
        try:
            assert isinstance(store, PostgresStore)
            SessionCatalog(store).patch("agent:main:routed", {})
        finally:
            store.close()
    count = admin.execute(
        sql.SQL("SELECT count(*) FROM {}.sessions").format(sql.Identifier(schema))
    ).fetchone()
    assert count == (1,)


def test_schema_with_an_odd_name(
    pg_url: str, pg_schemas: PgSchemas, admin: psycopg.Connection[TupleRow]
) -> None:
    name = pg_schemas.new('Odd "Name"; ')
    store = PostgresStore(pg_url, schema=name)
    try:
        SessionCatalog(store).patch("agent:main:odd", {})
    finally:
        store.close()
    row = admin.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (name,)
    ).fetchone()
    assert row == (
        len(TABLES) + len(PG_ONLY_TABLES),
    )  # every table of the store, in the odd schema


def test_column_types_and_collations(
    pg_url: str, schema: str, admin: psycopg.Connection[TupleRow]
) -> None:
    PostgresStore(pg_url, schema=schema).close()
    rows = admin.execute(
        "SELECT table_name, column_name, data_type, collation_name, is_generated"
        " FROM information_schema.columns WHERE table_schema = %s",
        (schema,),
    ).fetchall()
    columns = {
        (table, column): (kind, collation, generated)
        for table, column, kind, collation, generated in rows
    }
    for column in (
        "key",
        "lineage_path",
        "label",
        "parent_key",
        "spawned_by",
        "parent_session_key",
        "root_session_key",
        "agent_id",
        "session_id",
    ):
        assert columns["sessions", column][:2] == ("text", "C"), column
    assert columns["sessions", "parent_key"][2] == "ALWAYS"
    for table, column in (
        ("sessions", "plugin_extensions"),
        ("sessions", "extra"),
        ("transcript_events", "data"),
    ):
        assert columns[table, column][0] == "jsonb"
    assert columns["clawline_meta", "value"][0] == "bytea"
    for column in ("created_at", "updated_at", "started_at", "ended_at"):
        assert columns["sessions", column][0] == "bigint"


def test_close_and_use(pg_url: str, schema: str) -> None:
    store = PostgresStore(pg_url, schema=schema)
    store.close()
    with pytest.raises(StoreUnavailable, match="the store is closed"):
        store.get("agent:main:a")


def test_reconnects_after_the_server_drops_the_connection(
    pg_url: str, schema: str, admin: psycopg.Connection[TupleRow]
) -> None:
    store = PostgresStore(f"{pg_url}?application_name={schema}", schema=schema)
    try:
        catalog = SessionCatalog(store)
        catalog.patch("agent:main:a", {})
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (schema,),
        ).fetchall()
        assert killed == [(True,)]
        with pytest.raises(StoreUnavailable):
            store.get("agent:main:a")
        assert store.get("agent:main:a") is not None
        assert catalog.patch("agent:main:b", {}).created
    finally:
        store.close()
