"""The SQLite backend."""

from clawline.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
