"""Column types of the collaboration tables on PostgreSQL: text keys in the "C" collation (as
the session table), JSONB for JSON, BIGINT times, a generated expiry column."""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest

from clawline.store.postgres.store import PostgresStore

if TYPE_CHECKING:
    from .conftest import PgSchemas

pytestmark = pytest.mark.postgres

KEYS = {
    "tasks": (
        "task_id",
        "runtime",
        "requester_session_key",
        "owner_key",
        "scope_kind",
        "status",
        "child_session_key",
        "parent_flow_id",
        "agent_id",
        "run_id",
        "label",
    ),
    "task_events": ("task_id", "kind"),
    "subagent_runs": (
        "run_id",
        "child_session_key",
        "controller_session_key",
        "requester_session_key",
        "task_id",
        "spawn_key",
    ),
    "announce_inbox": ("requester_session_key", "child_session_key", "run_id", "task_id"),
    "thread_bindings": ("channel", "account_id", "conversation_id", "session_key", "placement"),
}
TIMES = {
    "tasks": ("created_at", "started_at", "ended_at", "last_event_at", "cleanup_after"),
    "subagent_runs": ("created_at", "ended_at", "archive_at_ms", "completion_announced_at"),
    "announce_inbox": ("id", "created_at", "delivered_at", "delivery_seq"),
    "thread_bindings": ("id", "bound_at", "last_activity_at", "idle_ms", "max_age_ms"),
}


def test_column_types_and_collations(pg_url: str, pg_schemas: PgSchemas) -> None:
    schema = pg_schemas.new("coll")
    PostgresStore(pg_url, schema=schema).close()
    with psycopg.connect(pg_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT table_name, column_name, data_type, collation_name, is_generated"
            " FROM information_schema.columns WHERE table_schema = %s",
            (schema,),
        ).fetchall()
    columns = {
        (table, column): (kind, collation, gen) for table, column, kind, collation, gen in rows
    }
    for table, names in KEYS.items():
        for name in names:
            assert columns[table, name][:2] == ("text", "C"), (table, name)
    for table, names in TIMES.items():
        for name in names:
            assert columns[table, name][0] == "bigint", (table, name)
    for table, name in (
        ("subagent_runs", "requester_origin"),
        ("subagent_runs", "outcome"),
        ("announce_inbox", "payload"),
    ):
        assert columns[table, name][0] == "jsonb", (table, name)
    assert columns["subagent_runs", "expects_completion_message"][0] == "boolean"
    assert columns["thread_bindings", "expires_at"] == ("bigint", None, "ALWAYS")
