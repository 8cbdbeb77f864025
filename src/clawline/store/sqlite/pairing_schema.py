"""SQLite migration of the device pairing table (appended to ``migrations.MIGRATIONS``)."""

from __future__ import annotations

import sqlite3


def create_device_pairings(db: sqlite3.Connection) -> None:
    # One row per device identity (clawline.records.pairing). The partial indexes serve the
    # pending-request bound (newest first) and the code scan of an approval.
    db.execute(
        """
        CREATE TABLE device_pairings (
            device_id TEXT NOT NULL PRIMARY KEY,
            public_key TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'paired', 'revoked')),
            client_id TEXT NOT NULL,
            client_mode TEXT NOT NULL,
            platform TEXT NOT NULL,
            display_name TEXT,
            requested_scopes TEXT NOT NULL,
            granted_scopes TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            requested_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            approved_at INTEGER,
            revoked_at INTEGER,
            code_hash TEXT,
            code_expires_at INTEGER
        ) WITHOUT ROWID
        """
    )
    db.execute(
        "CREATE INDEX device_pairings_pending ON device_pairings (requested_at DESC, device_id)"
        " WHERE status = 'pending'"
    )
