"""PostgreSQL migrations of the collaboration tables (appended to ``migrations.MIGRATIONS``).

Text keys use ``COLLATE "C"`` like the session tables; JSON columns are JSONB.
"""

from __future__ import annotations

from typing import LiteralString

import psycopg
from psycopg.rows import TupleRow

Db = psycopg.Connection[TupleRow]


def _run(db: Db, *statements: LiteralString) -> None:
    for statement in statements:
        db.execute(statement)


def create_tasks(db: Db) -> None:
    _run(
        db,
        """
        CREATE TABLE tasks (
            task_id TEXT COLLATE "C" PRIMARY KEY,
            runtime TEXT COLLATE "C" NOT NULL,
            requester_session_key TEXT COLLATE "C" NOT NULL,
            owner_key TEXT COLLATE "C" NOT NULL,
            scope_kind TEXT COLLATE "C" NOT NULL,
            task TEXT COLLATE "C" NOT NULL,
            status TEXT COLLATE "C" NOT NULL,
            delivery_status TEXT COLLATE "C" NOT NULL,
            notify_policy TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL,
            task_kind TEXT COLLATE "C",
            source_id TEXT COLLATE "C",
            child_session_key TEXT COLLATE "C",
            parent_flow_id TEXT COLLATE "C",
            parent_task_id TEXT COLLATE "C",
            agent_id TEXT COLLATE "C",
            run_id TEXT COLLATE "C",
            label TEXT COLLATE "C",
            started_at BIGINT,
            ended_at BIGINT,
            last_event_at BIGINT,
            cleanup_after BIGINT,
            error TEXT,
            progress_summary TEXT,
            terminal_summary TEXT,
            terminal_outcome TEXT COLLATE "C"
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
            task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            at BIGINT NOT NULL,
            kind TEXT COLLATE "C" NOT NULL,
            summary TEXT,
            PRIMARY KEY (task_id, seq)
        )
        """,
    )


def create_subagent_runs(db: Db) -> None:
    _run(
        db,
        """
        CREATE TABLE subagent_runs (
            run_id TEXT COLLATE "C" PRIMARY KEY,
            child_session_key TEXT COLLATE "C" NOT NULL,
            requester_session_key TEXT COLLATE "C" NOT NULL,
            task TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            controller_session_key TEXT COLLATE "C",
            requester_origin JSONB,
            requester_display_key TEXT COLLATE "C",
            cleanup TEXT COLLATE "C" NOT NULL,
            label TEXT COLLATE "C",
            model TEXT COLLATE "C",
            workspace_dir TEXT COLLATE "C",
            run_timeout_seconds BIGINT,
            spawn_mode TEXT COLLATE "C",
            runtime TEXT COLLATE "C" NOT NULL,
            started_at BIGINT,
            ended_at BIGINT,
            outcome JSONB,
            archive_at_ms BIGINT,
            cleanup_completed_at BIGINT,
            suppress_announce_reason TEXT COLLATE "C",
            expects_completion_message BOOLEAN,
            ended_reason TEXT COLLATE "C",
            frozen_result_text TEXT,
            completion_announced_at BIGINT,
            task_id TEXT COLLATE "C"
        )
        """,
        "CREATE INDEX runs_by_child ON subagent_runs (child_session_key, created_at DESC)",
        "CREATE INDEX runs_by_requester ON subagent_runs (requester_session_key, created_at)",
        # Counting a requester's active children reads only this index.
        "CREATE INDEX runs_active_by_requester ON subagent_runs (requester_session_key)"
        " WHERE ended_at IS NULL",
        "CREATE INDEX runs_by_controller"
        " ON subagent_runs ((coalesce(controller_session_key, requester_session_key)), created_at)",
        "CREATE INDEX runs_active ON subagent_runs (created_at) WHERE ended_at IS NULL",
        "CREATE INDEX runs_archive_due ON subagent_runs (archive_at_ms)"
        " WHERE archive_at_ms IS NOT NULL AND cleanup_completed_at IS NULL",
        "CREATE INDEX runs_cleaned ON subagent_runs (cleanup_completed_at)"
        " WHERE cleanup_completed_at IS NOT NULL",
        "CREATE INDEX runs_by_task ON subagent_runs (task_id) WHERE task_id IS NOT NULL",
    )


def create_announce_inbox(db: Db) -> None:
    _run(
        db,
        """
        CREATE TABLE announce_inbox (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            requester_session_key TEXT COLLATE "C" NOT NULL,
            child_session_key TEXT COLLATE "C" NOT NULL,
            run_id TEXT COLLATE "C" NOT NULL UNIQUE,
            task_id TEXT COLLATE "C",
            status TEXT COLLATE "C" NOT NULL,
            payload JSONB NOT NULL,
            created_at BIGINT NOT NULL,
            delivered_at BIGINT,
            delivery_seq BIGINT
        )
        """,
        "CREATE INDEX inbox_pending ON announce_inbox (requester_session_key, id)"
        " WHERE delivered_at IS NULL",
        "CREATE INDEX inbox_delivered ON announce_inbox (delivered_at)"
        " WHERE delivered_at IS NOT NULL",
    )


def create_thread_bindings(db: Db) -> None:
    _run(
        db,
        """
        CREATE TABLE thread_bindings (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            channel TEXT COLLATE "C" NOT NULL,
            account_id TEXT COLLATE "C" NOT NULL,
            conversation_id TEXT COLLATE "C" NOT NULL,
            session_key TEXT COLLATE "C" NOT NULL,
            placement TEXT COLLATE "C" NOT NULL,
            bound_at BIGINT NOT NULL,
            last_activity_at BIGINT NOT NULL,
            idle_ms BIGINT NOT NULL DEFAULT 0,
            max_age_ms BIGINT NOT NULL DEFAULT 0,
            unbound_at BIGINT,
            unbind_reason TEXT COLLATE "C",
            expires_at BIGINT GENERATED ALWAYS AS (
                CASE
                    WHEN idle_ms > 0 AND max_age_ms > 0 THEN
                        LEAST(GREATEST(last_activity_at, bound_at) + idle_ms, bound_at + max_age_ms)
                    WHEN idle_ms > 0 THEN GREATEST(last_activity_at, bound_at) + idle_ms
                    WHEN max_age_ms > 0 THEN bound_at + max_age_ms
                END
            ) STORED
        )
        """,
        "CREATE UNIQUE INDEX bindings_active_conversation"
        " ON thread_bindings (channel, account_id, conversation_id) WHERE unbound_at IS NULL",
        "CREATE INDEX bindings_by_session ON thread_bindings (session_key, bound_at DESC)",
        "CREATE INDEX bindings_by_expiry ON thread_bindings (expires_at)"
        " WHERE unbound_at IS NULL AND expires_at IS NOT NULL",
    )


def add_subagent_spawn_keys(db: Db) -> None:
    # The spawn's durable key (requester session id / tool call id), as in SQLite.
    _run(
        db,
        'ALTER TABLE subagent_runs ADD COLUMN spawn_key TEXT COLLATE "C"',
        "CREATE UNIQUE INDEX runs_by_spawn_key ON subagent_runs"
        " (requester_session_key, spawn_key) WHERE spawn_key IS NOT NULL",
    )


def add_binding_parent_conversation(db: Db) -> None:
    # The room a bound thread lies in: a completion for a thread-bound child is posted into
    # its thread, and a Matrix thread (its root event) cannot be posted to without its room.
    _run(db, 'ALTER TABLE thread_bindings ADD COLUMN parent_conversation_id TEXT COLLATE "C"')
