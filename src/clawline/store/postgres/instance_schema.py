"""PostgreSQL migrations of the gateway instance tables and the shared event log (appended to
``migrations.MIGRATIONS``)."""

from __future__ import annotations

import uuid

import psycopg
from psycopg.rows import TupleRow

EVENT_STREAM_ROW = "event_stream"
"""The ``clawline_meta`` row naming the schema's one event stream (the ``bootId`` clients
resume with, whichever instance they reach)."""


def create_gateway_instances(db: psycopg.Connection[TupleRow]) -> None:
    db.execute(
        """
        CREATE TABLE gateway_instances (
            instance_id TEXT COLLATE "C" PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            url TEXT,
            started_at BIGINT NOT NULL,
            heartbeat_at BIGINT NOT NULL,
            lease_ms BIGINT NOT NULL,
            stopped_at BIGINT,
            recovered_at BIGINT,
            recovered_by TEXT COLLATE "C"
        )
        """
    )
    db.execute(
        "CREATE INDEX gateway_instances_running ON gateway_instances (heartbeat_at)"
        " WHERE stopped_at IS NULL AND recovered_at IS NULL"
    )


def create_run_owners(db: psycopg.Connection[TupleRow]) -> None:
    db.execute(
        """
        CREATE TABLE run_owners (
            run_id TEXT COLLATE "C" PRIMARY KEY,
            session_key TEXT COLLATE "C" NOT NULL,
            instance_id TEXT COLLATE "C" NOT NULL,
            accepted_at BIGINT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_owners_by_instance ON run_owners (instance_id)")
    db.execute("CREATE INDEX run_owners_by_session ON run_owners (session_key)")


def add_subagent_instance(db: psycopg.Connection[TupleRow]) -> None:
    db.execute('ALTER TABLE subagent_runs ADD COLUMN instance_id TEXT COLLATE "C"')


def create_event_log(db: psycopg.Connection[TupleRow]) -> None:
    # The gateway event stream shared by every instance on the schema, in one global order:
    # writers take a transaction-level advisory lock, so rows commit in ``seq`` order and a
    # reader that has seen ``seq`` N never sees a row below N commit later.
    db.execute(
        """
        CREATE TABLE event_log (
            seq BIGINT PRIMARY KEY,
            instance_id TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            audience TEXT COLLATE "C" NOT NULL,
            session_key TEXT COLLATE "C",
            drop_if_slow BOOLEAN NOT NULL,
            payload TEXT NOT NULL,
            ts BIGINT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX event_log_by_ts ON event_log (ts)")
    db.execute(
        "INSERT INTO clawline_meta (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
        (EVENT_STREAM_ROW, str(uuid.uuid4()).encode()),
    )


def create_run_handoffs(db: psycopg.Connection[TupleRow]) -> None:
    # Runs accepted here for another instance to run; the target claims (and deletes) its rows.
    db.execute(
        """
        CREATE TABLE run_handoffs (
            id BIGSERIAL PRIMARY KEY,
            run_id TEXT COLLATE "C" NOT NULL UNIQUE,
            session_key TEXT COLLATE "C" NOT NULL,
            target_instance TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL,
            request TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_handoffs_by_target ON run_handoffs (target_instance, id)")


def create_instance_claims(db: psycopg.Connection[TupleRow]) -> None:
    # What an instance holds besides runs: a persistent ACP child's agent process (kind
    # ``acp``), a channel connection (kind ``channel``). A claim on an instance that is no
    # longer running is free for a live one to take.
    db.execute(
        """
        CREATE TABLE instance_claims (
            kind TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            instance_id TEXT COLLATE "C" NOT NULL,
            claimed_at BIGINT NOT NULL,
            PRIMARY KEY (kind, name)
        )
        """
    )
    db.execute("CREATE INDEX instance_claims_by_instance ON instance_claims (instance_id, kind)")


def add_subagent_deferred_outcome(db: psycopg.Connection[TupleRow]) -> None:
    # A deferred orchestrator's latest finished turn (status, text, usage): the record's result
    # once its descendants are done, kept in the store so a crash does not lose the deferral.
    db.execute("ALTER TABLE subagent_runs ADD COLUMN deferred_outcome JSONB")
    db.execute(
        "CREATE INDEX runs_deferred ON subagent_runs (created_at)"
        " WHERE ended_at IS NULL AND deferred_outcome IS NOT NULL"
    )


def create_run_stops(db: psycopg.Connection[TupleRow]) -> None:
    # An abort of a run another instance runs: its target claims (and deletes) the rows and
    # stops the runs. ``run_id`` NULL: every run of the session there.
    db.execute(
        """
        CREATE TABLE run_stops (
            id BIGSERIAL PRIMARY KEY,
            session_key TEXT COLLATE "C" NOT NULL,
            run_id TEXT COLLATE "C",
            target_instance TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_stops_by_target ON run_stops (target_instance, id)")
