"""PostgreSQL schema migrations: an ordered list of named functions, each run once.

Append new migrations at the end; never edit or reorder one that has shipped. All of them run
in one transaction under an advisory lock, so two processes starting at once cannot race.

Every text column that is compared or ordered uses ``COLLATE "C"``: ordering is then by code
point, as in SQLite, and the lineage-path range ``P\\x1f <= path < P\\x20`` selects a subtree.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from clawline.errors import MigrationError
from clawline.store.extension_index import extension_index_rows
from clawline.store.postgres.channel_schema import (
    create_channel_cursors,
    create_channel_outbox,
    index_outbox_due_by_channel,
)
from clawline.store.postgres.collab_schema import (
    add_binding_parent_conversation,
    add_subagent_spawn_keys,
    create_announce_inbox,
    create_subagent_runs,
    create_tasks,
    create_thread_bindings,
)
from clawline.store.postgres.idempotency_schema import create_run_idempotency
from clawline.store.postgres.instance_schema import (
    add_subagent_deferred_outcome,
    add_subagent_instance,
    create_event_log,
    create_gateway_instances,
    create_instance_claims,
    create_run_handoffs,
    create_run_owners,
    create_run_stops,
)
from clawline.store.postgres.pairing_schema import create_device_pairings

Migration = Callable[[psycopg.Connection[TupleRow]], None]

MIGRATION_LOCK_CLASS = 0x636C6D67
"""First key of the two-key advisory lock taken while migrating ("clmg")."""


def advisory_key(text: str) -> int:
    """A stable signed 32-bit key for ``text``, for the two-key form of advisory locks."""
    value = zlib.crc32(text.encode())
    return value - (1 << 32) if value >= 1 << 31 else value


def create_meta(db: psycopg.Connection[TupleRow]) -> None:
    db.execute(
        'CREATE TABLE clawline_meta (name TEXT COLLATE "C" PRIMARY KEY, value BYTEA NOT NULL)'
    )


def create_sessions(db: psycopg.Connection[TupleRow]) -> None:
    db.execute(
        """
        CREATE TABLE sessions (
            key TEXT COLLATE "C" PRIMARY KEY,
            agent_id TEXT COLLATE "C" NOT NULL,
            key_kind TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            label TEXT COLLATE "C",
            display_name TEXT COLLATE "C",
            status TEXT COLLATE "C",
            spawned_by TEXT COLLATE "C",
            parent_session_key TEXT COLLATE "C",
            parent_key TEXT COLLATE "C"
                GENERATED ALWAYS AS (coalesce(parent_session_key, spawned_by)) STORED,
            spawn_depth BIGINT,
            subagent_role TEXT COLLATE "C",
            subagent_control_scope TEXT COLLATE "C",
            spawned_workspace_dir TEXT COLLATE "C",
            spawned_cwd TEXT COLLATE "C",
            root_session_key TEXT COLLATE "C" NOT NULL,
            trace_id TEXT COLLATE "C" NOT NULL,
            lineage_path TEXT COLLATE "C" NOT NULL,
            started_at BIGINT,
            ended_at BIGINT,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL,
            plugin_extensions JSONB,
            extra JSONB,
            revision BIGINT NOT NULL
        )
        """
    )
    # Session writes once took their row revisions from this sequence; revisions are drawn at
    # random now (clawline.store._sessions_table.new_revision), the migration stays as it ran.
    db.execute("CREATE SEQUENCE clawline_session_revision")
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


def create_transcripts(db: psycopg.Connection[TupleRow]) -> None:
    db.execute(
        """
        CREATE TABLE transcripts (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            session_key TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL,
            last_seq BIGINT NOT NULL DEFAULT 0,
            archived_at BIGINT,
            archive_reason TEXT
        )
        """
    )
    db.execute("CREATE INDEX transcripts_by_key ON transcripts (session_key)")
    db.execute(
        """
        CREATE TABLE transcript_events (
            session_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            ts BIGINT NOT NULL,
            type TEXT NOT NULL,
            data JSONB NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """
    )


def index_sessions_by_cwd(db: psycopg.Connection[TupleRow]) -> None:
    # The cwd filter (ACP session/list), as in SQLite: an index range per keyset page, and an
    # index-only count. A filter `expr = value` implies the partial index's `expr IS NOT NULL`.
    db.execute(
        "CREATE INDEX sessions_by_cwd ON sessions"
        " ((coalesce(spawned_cwd, spawned_workspace_dir)), updated_at DESC, key DESC, key_kind)"
        " WHERE coalesce(spawned_cwd, spawned_workspace_dir) IS NOT NULL"
    )


def create_session_extension_index(db: psycopg.Connection[TupleRow]) -> None:
    # The reverse lookup of plugin extensions, as in SQLite. Rows are bounded in size
    # (clawline.store.extension_index) so they always fit the B-tree.
    db.execute(
        """
        CREATE TABLE session_extension_index (
            plugin_id TEXT COLLATE "C" NOT NULL,
            namespace TEXT COLLATE "C" NOT NULL,
            field TEXT COLLATE "C" NOT NULL,
            value TEXT COLLATE "C" NOT NULL,
            session_key TEXT COLLATE "C" NOT NULL
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
        for row in extension_index_rows(stored or {}):
            db.execute(
                "INSERT INTO session_extension_index"
                " (plugin_id, namespace, field, value, session_key) VALUES (%s, %s, %s, %s, %s)",
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
    create_event_log,
    create_run_handoffs,
    create_instance_claims,
    add_subagent_deferred_outcome,
    create_run_stops,
    index_outbox_due_by_channel,
]


def migrate(db: psycopg.Connection[TupleRow], schema: str | None) -> list[str]:
    """Create ``schema`` if needed and apply every migration not yet recorded in it.

    ``db`` must be in autocommit mode with ``search_path`` already naming ``schema``. Returns
    the names applied.
    """
    lock_key = advisory_key(schema or "")
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (MIGRATION_LOCK_CLASS, lock_key))
        if schema is not None:
            db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        db.execute(
            'CREATE TABLE IF NOT EXISTS clawline_migrations (name TEXT COLLATE "C" PRIMARY KEY,'
            " applied_at BIGINT NOT NULL)"
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
                "INSERT INTO clawline_migrations (name, applied_at) VALUES (%s, %s)",
                (migration.__name__, int(time.time() * 1000)),
            )
            applied.append(migration.__name__)
    return applied
