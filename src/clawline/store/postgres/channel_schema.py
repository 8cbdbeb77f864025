"""PostgreSQL migrations of the channel tables, the outbox and the cursors (appended to
``migrations.MIGRATIONS``)."""

from __future__ import annotations

import psycopg
from psycopg.rows import TupleRow


def create_channel_outbox(db: psycopg.Connection[TupleRow]) -> None:
    # One row per message and target (clawline.records.outbox). The partial index serves the
    # delivery loop's due scan and its next wake-up; the unique key makes queueing idempotent.
    db.execute(
        """
        CREATE TABLE channel_outbox (
            id BIGSERIAL PRIMARY KEY,
            channel TEXT COLLATE "C" NOT NULL,
            account_id TEXT COLLATE "C" NOT NULL,
            target_to TEXT COLLATE "C" NOT NULL,
            thread_id TEXT COLLATE "C",
            text TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('reply', 'completion', 'announce', 'send')),
            dedupe_key TEXT COLLATE "C" NOT NULL UNIQUE,
            created_at BIGINT NOT NULL,
            session_key TEXT COLLATE "C",
            run_id TEXT COLLATE "C",
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at BIGINT NOT NULL,
            last_error TEXT,
            delivered_at BIGINT,
            remote_id TEXT
        )
        """
    )
    db.execute(
        "CREATE INDEX outbox_due ON channel_outbox (next_attempt_at, id) WHERE status = 'pending'"
    )


def create_channel_cursors(db: psycopg.Connection[TupleRow]) -> None:
    # Where each channel account's inbound stream was read to (a Matrix sync token): a
    # restarted gateway reads on from there instead of skipping what was said meanwhile.
    db.execute(
        """
        CREATE TABLE channel_cursors (
            channel TEXT COLLATE "C" NOT NULL,
            account_id TEXT COLLATE "C" NOT NULL,
            position TEXT COLLATE "C" NOT NULL,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (channel, account_id)
        )
        """
    )


def index_outbox_due_by_channel(db: psycopg.Connection[TupleRow]) -> None:
    # The due scan of one gateway among several (docs/instances.md): an instance delivers only
    # the channels it holds, one range of this index per channel, never walking the due rows
    # of channels no running instance holds (they wait, pending, for one to take the channel).
    db.execute(
        "CREATE INDEX outbox_due_by_channel ON channel_outbox (channel, next_attempt_at, id)"
        " WHERE status = 'pending'"
    )
