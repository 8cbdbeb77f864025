"""PostgreSQL migration of the run idempotency keys (appended to ``migrations.MIGRATIONS``)."""

from __future__ import annotations

import psycopg
from psycopg.rows import TupleRow


def create_run_idempotency(db: psycopg.Connection[TupleRow]) -> None:
    # As in SQLite: one index for recovery (live rows: expires_at NULL, by key) and pruning.
    db.execute(
        """
        CREATE TABLE run_idempotency (
            dedupe_key TEXT COLLATE "C" PRIMARY KEY,
            run_id TEXT COLLATE "C" NOT NULL,
            session_key TEXT COLLATE "C" NOT NULL,
            accepted_at BIGINT NOT NULL,
            outcome JSONB,
            expires_at BIGINT
        )
        """
    )
    db.execute("CREATE INDEX run_idempotency_by_expiry ON run_idempotency (expires_at, dedupe_key)")
