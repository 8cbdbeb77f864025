"""Fixtures shared by every test directory: the PostgreSQL server the tests run against.

Tests never touch an existing schema: each run makes its own (``clawline_test_<pid>_<random>``
and suffixes of it) and drops them all, CASCADE, when the session ends. When the server cannot
be reached the tests that need it fail; they are not skipped.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

PG_URL = os.environ.get("CLAWLINE_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


class PgSchemas:
    """Hands out schema names unique to this test run and drops them at the end."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.prefix = f"clawline_test_{os.getpid()}_{secrets.token_hex(4)}"
        self._made: list[str] = []

    def new(self, suffix: str = "") -> str:
        """A fresh schema name (not created: the store creates it on open)."""
        name = f"{self.prefix}_{suffix}{len(self._made)}" if suffix or self._made else self.prefix
        self._made.append(name)
        return name

    def drop_all(self) -> None:
        if not self._made:
            return
        with psycopg.connect(self.url, autocommit=True) as db:
            for name in self._made:
                db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        self._made.clear()


@pytest.fixture(scope="session")
def pg_url() -> str:
    return PG_URL


@pytest.fixture(scope="session")
def pg_schemas(pg_url: str) -> Iterator[PgSchemas]:
    schemas = PgSchemas(pg_url)
    yield schemas
    schemas.drop_all()
