"""Session stores: one interface (:class:`Store`), two backends.

- SQLite (default): a file in the state directory, WAL mode.
- PostgreSQL: one catalog several processes can share, several gateway instances among them
  (:mod:`clawline.instances`).

:func:`open_store` picks the backend from a URL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from clawline.errors import StoreUnavailable
from clawline.store.base import Page, SessionQuery, Store, StoreTransaction
from clawline.store.cursor import CursorCodec, Position
from clawline.store.location import redact_url

if TYPE_CHECKING:
    from clawline.config import PoolSettings

__all__ = [
    "CursorCodec",
    "Page",
    "Position",
    "SessionQuery",
    "Store",
    "StoreTransaction",
    "open_store",
    "redact_url",
]


def open_store(
    url: str | None,
    *,
    default_sqlite_path: Path | None = None,
    pool: PoolSettings | None = None,
) -> Store:
    """Open the store a URL names.

    ``None`` or ``""`` means SQLite at ``default_sqlite_path``; ``sqlite:///abs/path.db``,
    ``sqlite:relative.db`` and ``sqlite::memory:`` name SQLite files; ``postgresql://…`` (or
    ``postgres://…``) names a PostgreSQL database, with an optional ``schema`` query parameter,
    served through a connection pool sized and limited by ``pool`` (``Settings.store_pool``;
    SQLite has no use for it).
    """
    if not url:
        if default_sqlite_path is None:
            raise StoreUnavailable("no store URL and no default SQLite path")
        from clawline.store.sqlite.store import SQLiteStore

        return SQLiteStore(default_sqlite_path)
    if url.startswith("sqlite:"):
        from clawline.store.sqlite.store import SQLiteStore

        rest = url[len("sqlite:") :]
        path = rest[2:] if rest.startswith("//") else rest
        if not path:
            raise StoreUnavailable(f"no path in store URL {url!r}")
        return SQLiteStore(path)
    if url.startswith(("postgresql://", "postgres://")):
        from clawline.store.postgres.store import PostgresStore

        parts = urlsplit(url)
        query = parse_qs(parts.query)
        schema = query.pop("schema", [None])[0]
        plain = urlunsplit(parts._replace(query=urlencode(query, doseq=True)))
        return PostgresStore(plain, schema=schema, pool=pool)
    raise StoreUnavailable(
        f"unsupported store URL {redact_url(url)!r} (use sqlite: or postgresql:)"
    )
