"""SQLite schema migrations: an ordered list of named functions, each run once.

Append new migrations at the end; never edit or reorder one that has shipped. Each runs in the
same transaction as the row that records it in ``clawline_migrations``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable

from clawline.errors import MigrationError
from clawline.store.extension_index import extension_index_rows
from clawline.store.sqlite.channel_schema import (
    create_channel_cursors,
    create_channel_outbox,
    index_outbox_due_by_channel,
)
from clawline.store.sqlite.collab_schema import (
    add_binding_parent_conversation,
    add_subagent_spawn_keys,
    create_announce_inbox,
    create_subagent_runs,
    create_tasks,
    create_thread_bindings,
)
from clawline.store.sqlite.idempotency_schema import create_run_idempotency
from clawline.store.sqlite.instance_schema import (
    add_subagent_deferred_outcome,
    add_subagent_instance,
    create_gateway_instances,
    create_instance_claims,
    create_run_handoffs,
    create_run_owners,
    create_run_stops,
)
from clawline.store.sqlite.pairing_schema import create_device_pairings

Migration = Callable[[sqlite3.Connection], None]


def create_meta(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE clawline_meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)")
    # The store-wide counter session writes once took their row revisions from; revisions
    # are drawn at random now (clawline.store._sessions_table.new_revision), the row stays as
    # this migration has always written it.
    db.execute("INSERT INTO clawline_meta (name, value) VALUES ('revision', 0)")


def create_sessions(db: sqlite3.Connection) -> None:
    # A rowid table, not WITHOUT ROWID: rows are ~450 bytes, and the secondary indexes every
    # listing and tree read scans would otherwise point at the text key, one more b-tree search
    # by string per row, in key order (random) rather than insertion order (mostly the order
    # listings and subtrees read). A rowid table makes the page of 100 ~25% and a subtree ~2x
    # cheaper in SQLite. NOT NULL: only WITHOUT ROWID implies it for a primary key.
    db.execute(
        """
        CREATE TABLE sessions (
            key TEXT NOT NULL PRIMARY KEY,
            agent_id TEXT NOT NULL,
            key_kind TEXT NOT NULL,
            session_id TEXT NOT NULL,
            label TEXT,
            display_name TEXT,
            status TEXT,
            spawned_by TEXT,
            parent_session_key TEXT,
            parent_key TEXT GENERATED ALWAYS AS (coalesce(parent_session_key, spawned_by)) VIRTUAL,
            spawn_depth INTEGER,
            subagent_role TEXT,
            subagent_control_scope TEXT,
            spawned_workspace_dir TEXT,
            spawned_cwd TEXT,
            root_session_key TEXT NOT NULL,
            trace_id TEXT NOT NULL,
            lineage_path TEXT NOT NULL,
            started_at INTEGER,
            ended_at INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            plugin_extensions TEXT,
            extra TEXT,
            revision INTEGER NOT NULL
        )
        """
    )
    for statement in (
        "CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, key DESC)",
        "CREATE INDEX sessions_by_agent ON sessions (agent_id, updated_at DESC, key DESC)",
        "CREATE UNIQUE INDEX sessions_label_per_agent ON sessions (agent_id, label)"
        " WHERE label IS NOT NULL",
        "CREATE INDEX sessions_by_label ON sessions (label) WHERE label IS NOT NULL",
        "CREATE INDEX sessions_by_parent ON sessions (parent_key) WHERE parent_key IS NOT NULL",
        "CREATE INDEX sessions_by_spawned_by ON sessions (spawned_by) WHERE spawned_by IS NOT NULL",
        "CREATE INDEX sessions_by_root ON sessions (root_session_key)",
        "CREATE INDEX sessions_by_path ON sessions (lineage_path)",
        "CREATE INDEX sessions_by_session_id ON sessions (session_id)",
        # Counting a listing subtracts the excluded key kinds (_sql.count_statement).
        "CREATE INDEX sessions_by_kind ON sessions (key_kind)",
    ):
        db.execute(statement)


def create_transcripts(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE transcripts (
            session_id TEXT PRIMARY KEY,
            session_key TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            last_seq INTEGER NOT NULL DEFAULT 0,
            archived_at INTEGER,
            archive_reason TEXT
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX transcripts_by_key ON transcripts (session_key)")
    db.execute(
        """
        CREATE TABLE transcript_events (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            ts INTEGER NOT NULL,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID
        """
    )


def index_sessions_by_cwd(db: sqlite3.Connection) -> None:
    # The cwd filter (ACP session/list): rows whose spawnedCwd, else spawnedWorkspaceDir, equals
    # it, in listing order, so each keyset page is an index range. key_kind makes counting the
    # filtered rows index-only. Partial: most sessions have neither field.
    db.execute(
        "CREATE INDEX sessions_by_cwd ON sessions"
        " (coalesce(spawned_cwd, spawned_workspace_dir), updated_at DESC, key DESC, key_kind)"
        " WHERE coalesce(spawned_cwd, spawned_workspace_dir) IS NOT NULL"
    )


def create_session_extension_index(db: sqlite3.Connection) -> None:
    # The reverse lookup of plugin extensions (clawline.store.extension_index): one index
    # search by (plugin, namespace, field, value); rows of a session are replaced by its key.
    db.execute(
        """
        CREATE TABLE session_extension_index (
            plugin_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            session_key TEXT NOT NULL
        )
        """
    )
    db.execute(
        "CREATE INDEX session_extensions_by_value"
        " ON session_extension_index (plugin_id, namespace, field, value)"
    )
    db.execute(
        "CREATE INDEX session_extensions_by_session ON session_extension_index (session_key)"
    )
    rows = db.execute(
        "SELECT key, plugin_extensions FROM sessions WHERE plugin_extensions IS NOT NULL"
    ).fetchall()
    for key, stored in rows:
        for row in extension_index_rows(json.loads(stored) or {}):
            db.execute(
                "INSERT INTO session_extension_index"
                " (plugin_id, namespace, field, value, session_key) VALUES (?, ?, ?, ?, ?)",
                (*row, key),
            )


MIGRATIONS: list[Migration] = [
    create_meta,
    create_sessions,
    create_transcripts,
    create_tasks,
    create_subagent_runs,
    create_announce_inbox,
    create_thread_bindings,
    index_sessions_by_cwd,
    create_session_extension_index,
    create_run_idempotency,
    create_device_pairings,
    add_subagent_spawn_keys,
    create_channel_outbox,
    add_binding_parent_conversation,
    create_channel_cursors,
    create_gateway_instances,
    create_run_owners,
    add_subagent_instance,
    create_run_handoffs,
    create_instance_claims,
    add_subagent_deferred_outcome,
    create_run_stops,
    index_outbox_due_by_channel,
]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded; return the names applied."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "CREATE TABLE IF NOT EXISTS clawline_migrations"
            " (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
        )
        done = {row[0] for row in db.execute("SELECT name FROM clawline_migrations")}
        known = {migration.__name__ for migration in MIGRATIONS}
        if unknown := done - known:
            raise MigrationError(
                f"the store was written by a newer clawline (unknown migrations: "
                f"{', '.join(sorted(unknown))})"
            )
        applied = []
        for migration in MIGRATIONS:
            if migration.__name__ in done:
                continue
            migration(db)
            db.execute(
                "INSERT INTO clawline_migrations (name, applied_at) VALUES (?, ?)",
                (migration.__name__, int(time.time() * 1000)),
            )
            applied.append(migration.__name__)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return applied
