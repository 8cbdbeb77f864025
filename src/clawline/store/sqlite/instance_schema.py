"""SQLite migrations of the gateway instance tables (appended to ``migrations.MIGRATIONS``).

A SQLite store serves one gateway at a time (its ``flock``), yet it keeps the same registry as
PostgreSQL: ``clawline instances`` reads it, and recovery uses one rule on both backends
(:mod:`clawline.instances`)."""

from __future__ import annotations

import sqlite3


def create_gateway_instances(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE gateway_instances (
            instance_id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            url TEXT,
            started_at INTEGER NOT NULL,
            heartbeat_at INTEGER NOT NULL,
            lease_ms INTEGER NOT NULL,
            stopped_at INTEGER,
            recovered_at INTEGER,
            recovered_by TEXT
        )
        """
    )
    db.execute(
        "CREATE INDEX gateway_instances_running ON gateway_instances (heartbeat_at)"
        " WHERE stopped_at IS NULL AND recovered_at IS NULL"
    )


def create_run_owners(db: sqlite3.Connection) -> None:
    # One row per accepted run, from its acceptance until its end hooks are done: which
    # instance answers for it. Written in the transaction that accepts the run.
    db.execute(
        """
        CREATE TABLE run_owners (
            run_id TEXT PRIMARY KEY,
            session_key TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            accepted_at INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_owners_by_instance ON run_owners (instance_id)")
    db.execute("CREATE INDEX run_owners_by_session ON run_owners (session_key)")


def add_subagent_instance(db: sqlite3.Connection) -> None:
    # The instance that answers for a sub-agent record while it is active: it watches the
    # child's run and holds the record of a deferred orchestrator.
    db.execute("ALTER TABLE subagent_runs ADD COLUMN instance_id TEXT")


def create_run_handoffs(db: sqlite3.Connection) -> None:
    # Runs accepted here for another instance to run; the target claims (and deletes) its rows.
    db.execute(
        """
        CREATE TABLE run_handoffs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL UNIQUE,
            session_key TEXT NOT NULL,
            target_instance TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            request TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_handoffs_by_target ON run_handoffs (target_instance, id)")


def create_instance_claims(db: sqlite3.Connection) -> None:
    # What an instance holds besides runs: a persistent ACP child's agent process (kind
    # ``acp``), a channel connection (kind ``channel``). A claim on an instance that is no
    # longer running is free for a live one to take.
    db.execute(
        """
        CREATE TABLE instance_claims (
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            claimed_at INTEGER NOT NULL,
            PRIMARY KEY (kind, name)
        )
        """
    )
    db.execute("CREATE INDEX instance_claims_by_instance ON instance_claims (instance_id, kind)")


def add_subagent_deferred_outcome(db: sqlite3.Connection) -> None:
    # A deferred orchestrator's latest finished turn (status, text, usage): the record's result
    # once its descendants are done, kept in the store so a crash does not lose the deferral.
    db.execute("ALTER TABLE subagent_runs ADD COLUMN deferred_outcome TEXT")
    db.execute(
        "CREATE INDEX runs_deferred ON subagent_runs (created_at)"
        " WHERE ended_at IS NULL AND deferred_outcome IS NOT NULL"
    )


def create_run_stops(db: sqlite3.Connection) -> None:
    # An abort of a run another instance runs: its target claims (and deletes) the rows and
    # stops the runs. ``run_id`` NULL: every run of the session there.
    db.execute(
        """
        CREATE TABLE run_stops (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_key TEXT NOT NULL,
            run_id TEXT,
            target_instance TEXT NOT NULL,
            created_at INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX run_stops_by_target ON run_stops (target_instance, id)")
