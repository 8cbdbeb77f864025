"""SQLite migration of the run idempotency keys (appended to ``migrations.MIGRATIONS``)."""

from __future__ import annotations

import sqlite3


def create_run_idempotency(db: sqlite3.Connection) -> None:
    # A rowid table: a row carries the run's outcome (its reply text), too big for WITHOUT
    # ROWID. One index serves both recovery (live rows: expires_at NULL, by key) and pruning
    # (expired rows, soonest first).
    db.execute(
        """
        CREATE TABLE run_idempotency (
            dedupe_key TEXT NOT NULL PRIMARY KEY,
            run_id TEXT NOT NULL,
            session_key TEXT NOT NULL,
            accepted_at INTEGER NOT NULL,
            outcome TEXT,
            expires_at INTEGER
        )
        """
    )
    db.execute("CREATE INDEX run_idempotency_by_expiry ON run_idempotency (expires_at, dedupe_key)")
