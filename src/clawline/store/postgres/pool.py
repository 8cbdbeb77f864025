"""The PostgreSQL store's connections: one to migrate with, then a bounded pool.

:func:`migration_connection` opens the connection the schema is created and migrated on, once,
before the pool exists; it reports a server that cannot be reached at once, with the driver's
reason (a pool would keep retrying in the background). It names itself ``<name> (migrations)``
so it is not counted among the store's connections while the server winds it down.

:func:`open_pool` opens the pool (``psycopg_pool``): sync connections in autocommit, at least one
and at most ``store.poolSize``. Each new connection is configured once, before it is handed out,
with the store's schema first on its ``search_path`` and its ``statement_timeout`` and
``lock_timeout``, so every statement on it has them. Connections carry the URL's
``application_name``, else :data:`APPLICATION_NAME`.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool

from clawline.config import PoolSettings

APPLICATION_NAME = "clawline store"
CONNECT_TIMEOUT_S = 10
CHECKOUT_TIMEOUT_S = 30.0
"""A store call that finds every connection busy for this long fails (``StoreTimeout``)."""

Pool = ConnectionPool[psycopg.Connection[TupleRow]]


def _application_name(url: str) -> str:
    return str(conninfo_to_dict(url).get("application_name") or APPLICATION_NAME)


def migration_connection(url: str) -> psycopg.Connection[TupleRow]:
    """A connection of its own, in autocommit and without the pool's timeouts: a migration may
    wait for another process's, and may take long on a big catalog."""
    return psycopg.connect(
        url,
        autocommit=True,
        connect_timeout=CONNECT_TIMEOUT_S,
        application_name=f"{_application_name(url)} (migrations)",
    )


def _set_up(db: psycopg.Connection[TupleRow], schema: str | None, settings: PoolSettings) -> None:
    """Give a new connection the store's session settings (one statement)."""
    values = {
        "statement_timeout": str(settings.statement_timeout_ms),
        "lock_timeout": str(settings.lock_timeout_ms),
    }
    if schema is not None:
        # set_config takes the search path as text: the identifier is quoted into it here.
        values["search_path"] = sql.Identifier(schema).as_string(db)
    calls = sql.SQL(", ").join(sql.SQL("set_config(%s, %s, false)") for _ in values)
    db.execute(
        sql.SQL("SELECT {}").format(calls), [part for pair in values.items() for part in pair]
    )


def open_pool(
    url: str,
    *,
    schema: str | None,
    settings: PoolSettings,
    name: str = "clawline-store",
    role: str | None = None,
) -> Pool:
    """The store's pool, opened with its first connection ready (a server that does not give
    one within :data:`CONNECT_TIMEOUT_S` raises ``psycopg_pool.PoolTimeout``); ``role`` is
    added to the connections' ``application_name`` (``clawline store (events)``)."""

    def configure(db: psycopg.Connection[TupleRow]) -> None:
        _set_up(db, schema, settings)

    kwargs: dict[str, Any] = {
        "autocommit": True,
        "connect_timeout": CONNECT_TIMEOUT_S,
        "application_name": _application_name(url) + (f" ({role})" if role else ""),
    }
    pool: Pool = ConnectionPool(
        url,
        kwargs=kwargs,
        min_size=1,
        max_size=settings.size,
        configure=configure,
        open=False,
        name=name,
        timeout=CHECKOUT_TIMEOUT_S,
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    return pool
