"""SQL written once for both backends (``?`` placeholders) runs through each backend's dialect:
only real placeholders change, so ``?`` and ``%`` in quoted text and comments, and PostgreSQL's
jsonb operators, survive."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from psycopg import sql

from clawline.sessions.catalog import SessionCatalog
from clawline.store.postgres.collab import postgres_dialect
from clawline.store.postgres.store import PostgresStore
from clawline.store.sqlite.collab import SQLITE

if TYPE_CHECKING:
    from .conftest import Backend, PgSchemas

A = "agent:main:a"
B = "agent:main:b"


def _run(
    backend: Backend, pg_url: str, statement: str, params: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """``statement`` through the backend's dialect, on a connection of the test's."""
    if backend.name == "sqlite":
        db = sqlite3.connect(backend.location)
        try:
            return db.execute(SQLITE.q(statement), params).fetchall()
        finally:
            db.close()
    with psycopg.connect(pg_url, autocommit=True) as pg:
        pg.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(backend.location)))
        return pg.execute(postgres_dialect(backend.location).q(statement), params).fetchall()


def test_question_marks_and_percents_in_quoted_text_and_comments_survive(
    catalog: SessionCatalog, backend: Backend, pg_url: str
) -> None:
    catalog.patch(A, {"label": "why? 100%"})
    catalog.patch(B, {"label": "plain"})
    statement = (
        "SELECT key, '?' AS \"mark?\", '%' || label FROM sessions"
        " WHERE label LIKE '%?%' /* only labels with a ? */"
        " AND key = ? -- the key (a ? here too)\n"
        " AND agent_id = ?"
    )
    assert _run(backend, pg_url, statement, [A, "main"]) == [(A, "?", "%why? 100%")]
    assert _run(backend, pg_url, statement, [B, "main"]) == []


@pytest.mark.postgres
def test_the_jsonb_operators_survive_on_postgres(pg_url: str, pg_schemas: PgSchemas) -> None:
    schema = pg_schemas.new("jsonb")
    store = PostgresStore(pg_url, schema=schema)
    try:
        catalog = SessionCatalog(store)
        catalog.patch(A, {"pluginExtensions": {"one": {"space": {}}, "two": {"space": {}}}})
        catalog.patch(B, {"pluginExtensions": {"two": {"space": {}}}})
    finally:
        store.close()
    dialect = postgres_dialect(schema)
    keys = "SELECT key FROM sessions WHERE {} ORDER BY key"
    has = dialect.q(keys.format("plugin_extensions ?? ? AND key <> '?'"))
    any_of = dialect.q(keys.format("plugin_extensions ?| ?"))
    all_of = dialect.q(keys.format("plugin_extensions ?& ?"))
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        assert db.execute(has, ["one"]).fetchall() == [(A,)]
        assert db.execute(has, ["two"]).fetchall() == [(A,), (B,)]
        assert db.execute(any_of, [["one", "three"]]).fetchall() == [(A,)]
        assert db.execute(all_of, [["one", "two"]]).fetchall() == [(A,)]
        assert db.execute(all_of, [["two"]]).fetchall() == [(A,), (B,)]
