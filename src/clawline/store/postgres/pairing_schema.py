"""PostgreSQL migration of the device pairing table (appended to ``migrations.MIGRATIONS``)."""

from __future__ import annotations

import psycopg
from psycopg.rows import TupleRow


def create_device_pairings(db: psycopg.Connection[TupleRow]) -> None:
    # As in SQLite: one row per device identity, and a partial index over pending requests.
    db.execute(
        """
        CREATE TABLE device_pairings (
            device_id TEXT COLLATE "C" PRIMARY KEY,
            public_key TEXT COLLATE "C" NOT NULL,
            status TEXT COLLATE "C" NOT NULL
                CHECK (status IN ('pending', 'paired', 'revoked')),
            client_id TEXT NOT NULL,
            client_mode TEXT NOT NULL,
            platform TEXT NOT NULL,
            display_name TEXT,
            requested_scopes TEXT NOT NULL,
            granted_scopes TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            requested_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL,
            approved_at BIGINT,
            revoked_at BIGINT,
            code_hash TEXT COLLATE "C",
            code_expires_at BIGINT
        )
        """
    )
    db.execute(
        "CREATE INDEX device_pairings_pending ON device_pairings (requested_at DESC, device_id)"
        " WHERE status = 'pending'"
    )
