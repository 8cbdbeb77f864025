"""The PostgreSQL backend."""

from clawline.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
