"""SQLite migrations of the collaboration tables (appended to ``migrations.MIGRATIONS``)."""

from __future__ import annotations

import sqlite3


def _run(db: sqlite3.Connection, *statements: str) -> None:
    for statement in statements:
        db.execute(statement)


def create_tasks(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE tasks (
            task_id TEXT NOT NULL PRIMARY KEY,
            runtime TEXT NOT NULL,
            requester_session_key TEXT NOT NULL,
            owner_key TEXT NOT NULL,
            scope_kind TEXT NOT NULL,
            task TEXT NOT NULL,
            status TEXT NOT NULL,
            delivery_status TEXT NOT NULL,
            notify_policy TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            task_kind TEXT,
            source_id TEXT,
            child_session_key TEXT,
            parent_flow_id TEXT,
            parent_task_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            label TEXT,
            started_at INTEGER,
            ended_at INTEGER,
            last_event_at INTEGER,
            cleanup_after INTEGER,
            error TEXT,
            progress_summary TEXT,
            terminal_summary TEXT,
            terminal_outcome TEXT
        )
        """,
        "CREATE INDEX tasks_by_created ON tasks (created_at DESC, task_id DESC)",
        "CREATE INDEX tasks_by_run ON tasks (run_id) WHERE run_id IS NOT NULL",
        "CREATE INDEX tasks_by_status ON tasks (status, created_at DESC, task_id DESC)",
        "CREATE INDEX tasks_by_runtime_status"
        " ON tasks (runtime, status, created_at DESC, task_id DESC)",
        "CREATE INDEX tasks_by_cleanup ON tasks (cleanup_after) WHERE cleanup_after IS NOT NULL",
        "CREATE INDEX tasks_by_last_event ON tasks (last_event_at)",
        "CREATE INDEX tasks_by_owner ON tasks (owner_key, created_at DESC, task_id DESC)",
        "CREATE INDEX tasks_by_flow ON tasks (parent_flow_id) WHERE parent_flow_id IS NOT NULL",
        "CREATE INDEX tasks_by_child ON tasks (child_session_key, created_at DESC, task_id DESC)"
        " WHERE child_session_key IS NOT NULL",
        "CREATE INDEX tasks_by_requester"
        " ON tasks (requester_session_key, created_at DESC, task_id DESC)",
        "CREATE INDEX tasks_by_agent ON tasks (agent_id, created_at DESC, task_id DESC)"
        " WHERE agent_id IS NOT NULL",
        """
        CREATE TABLE task_events (
            task_id TEXT NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            at INTEGER NOT NULL,
            kind TEXT NOT NULL,
            summary TEXT,
            PRIMARY KEY (task_id, seq)
        ) WITHOUT ROWID
        """,
    )


def create_subagent_runs(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE subagent_runs (
            run_id TEXT NOT NULL PRIMARY KEY,
            child_session_key TEXT NOT NULL,
            requester_session_key TEXT NOT NULL,
            task TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            controller_session_key TEXT,
            requester_origin TEXT,
            requester_display_key TEXT,
            cleanup TEXT NOT NULL,
            label TEXT,
            model TEXT,
            workspace_dir TEXT,
            run_timeout_seconds INTEGER,
            spawn_mode TEXT,
            runtime TEXT NOT NULL,
            started_at INTEGER,
            ended_at INTEGER,
            outcome TEXT,
            archive_at_ms INTEGER,
            cleanup_completed_at INTEGER,
            suppress_announce_reason TEXT,
            expects_completion_message INTEGER,
            ended_reason TEXT,
            frozen_result_text TEXT,
            completion_announced_at INTEGER,
            task_id TEXT
        )
        """,
        "CREATE INDEX runs_by_child ON subagent_runs (child_session_key, created_at DESC)",
        "CREATE INDEX runs_by_requester ON subagent_runs (requester_session_key, created_at)",
        # Counting a requester's active children reads only this index.
        "CREATE INDEX runs_active_by_requester ON subagent_runs (requester_session_key)"
        " WHERE ended_at IS NULL",
        "CREATE INDEX runs_by_controller"
        " ON subagent_runs (coalesce(controller_session_key, requester_session_key), created_at)",
        "CREATE INDEX runs_active ON subagent_runs (created_at) WHERE ended_at IS NULL",
        "CREATE INDEX runs_archive_due ON subagent_runs (archive_at_ms)"
        " WHERE archive_at_ms IS NOT NULL AND cleanup_completed_at IS NULL",
        "CREATE INDEX runs_cleaned ON subagent_runs (cleanup_completed_at)"
        " WHERE cleanup_completed_at IS NOT NULL",
        "CREATE INDEX runs_by_task ON subagent_runs (task_id) WHERE task_id IS NOT NULL",
    )


def create_announce_inbox(db: sqlite3.Connection) -> None:
    _run(
        db,
        # AUTOINCREMENT: ids are never reused, so id order is the order rows were written.
        """
        CREATE TABLE announce_inbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            requester_session_key TEXT NOT NULL,
            child_session_key TEXT NOT NULL,
            run_id TEXT NOT NULL UNIQUE,
            task_id TEXT,
            status TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            delivered_at INTEGER,
            delivery_seq INTEGER
        )
        """,
        "CREATE INDEX inbox_pending ON announce_inbox (requester_session_key, id)"
        " WHERE delivered_at IS NULL",
        "CREATE INDEX inbox_delivered ON announce_inbox (delivered_at)"
        " WHERE delivered_at IS NOT NULL",
    )


def create_thread_bindings(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE thread_bindings (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            channel TEXT NOT NULL,
            account_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            session_key TEXT NOT NULL,
            placement TEXT NOT NULL,
            bound_at INTEGER NOT NULL,
            last_activity_at INTEGER NOT NULL,
            idle_ms INTEGER NOT NULL DEFAULT 0,
            max_age_ms INTEGER NOT NULL DEFAULT 0,
            unbound_at INTEGER,
            unbind_reason TEXT,
            expires_at INTEGER GENERATED ALWAYS AS (
                CASE
                    WHEN idle_ms > 0 AND max_age_ms > 0 THEN
                        min(max(last_activity_at, bound_at) + idle_ms, bound_at + max_age_ms)
                    WHEN idle_ms > 0 THEN max(last_activity_at, bound_at) + idle_ms
                    WHEN max_age_ms > 0 THEN bound_at + max_age_ms
                END
            ) VIRTUAL
        )
        """,
        "CREATE UNIQUE INDEX bindings_active_conversation"
        " ON thread_bindings (channel, account_id, conversation_id) WHERE unbound_at IS NULL",
        "CREATE INDEX bindings_by_session ON thread_bindings (session_key, bound_at DESC)",
        "CREATE INDEX bindings_by_expiry ON thread_bindings (expires_at)"
        " WHERE unbound_at IS NULL AND expires_at IS NOT NULL",
    )


def add_subagent_spawn_keys(db: sqlite3.Connection) -> None:
    # The spawn's durable key (requester session id / tool call id): a spawn redone after a
    # crash finds its child by it, and two spawns with one key cannot both insert.
    _run(
        db,
        "ALTER TABLE subagent_runs ADD COLUMN spawn_key TEXT",
        "CREATE UNIQUE INDEX runs_by_spawn_key ON subagent_runs"
        " (requester_session_key, spawn_key) WHERE spawn_key IS NOT NULL",
    )


def add_binding_parent_conversation(db: sqlite3.Connection) -> None:
    # The room a bound thread lies in: a completion for a thread-bound child is posted into
    # its thread, and a Matrix thread (its root event) cannot be posted to without its room.
    _run(db, "ALTER TABLE thread_bindings ADD COLUMN parent_conversation_id TEXT")
