"""The gateway backend's pieces: rows back to entries, refusals back to clawline errors."""

from __future__ import annotations

import pytest

from clawline.cli.remote import entry_from_row, local_error
from clawline.cli.root import exit_code_for
from clawline.client import ClientError, GatewayRequestError
from clawline.errors import InvalidInput, LabelInUse, SessionNotFound
from clawline.records.session import SessionEntry
from clawline.sessions.listing_rows import session_row


def full_entry() -> SessionEntry:
    return SessionEntry(
        key="agent:main:subagent:c",
        session_id="0f7d6c1e-8a51-4b5e-9a41-2a3f0cfa1d11",
        created_at=1,
        updated_at=2,
        root_session_key="agent:main:main",
        trace_id="a" * 32,
        lineage_path=("agent:main:main", "agent:main:subagent:a", "agent:main:subagent:c"),
        label="researcher",
        display_name="Research",
        status="done",
        spawned_by="agent:main:subagent:a",
        parent_session_key="agent:main:subagent:a",
        spawn_depth=2,
        subagent_role="leaf",
        subagent_control_scope="none",
        spawned_workspace_dir="/ws",
        spawned_cwd="/ws/c",
        started_at=3,
        ended_at=4,
        plugin_extensions={"p": {"ns": {"k": [1, 2]}}},
        extra={"model": "gpt", "thinkingLevel": "high", "meta": {"b": None}},
    )


def test_rows_give_back_the_entry_exactly() -> None:
    entry = full_entry()
    row = session_row(
        entry,
        has_active_run=True,
        child_sessions=["agent:main:subagent:d"],
        title="T",
        last_message_preview="hi",
    )
    assert entry_from_row(row) == entry
    bare = SessionEntry(
        key="global",
        session_id="s",
        created_at=5,
        updated_at=5,
        root_session_key="global",
        trace_id="b" * 32,
        lineage_path=("global",),
    )
    assert entry_from_row(session_row(bare, has_active_run=False)) == bare


def test_a_row_without_lineage_is_refused() -> None:
    row = session_row(full_entry(), has_active_run=False)
    del row["lineagePath"]
    with pytest.raises(ClientError, match="the gateway sent a session row without 'lineagePath'"):
        entry_from_row(row)


NOT_FOUND = {"errorType": "NotFound", "errorClass": "SessionNotFound"}
REFUSED = {"errorType": "InvalidInput", "errorClass": "GatewayError"}
ACCESS = {"errorType": "InvalidInput", "errorClass": "AccessRefused"}


@pytest.mark.parametrize(
    ("code", "message", "details", "kind", "exit_code"),
    [
        ("INVALID_REQUEST", "session not found: agent:main:x", NOT_FOUND, SessionNotFound, 1),
        ("INVALID_REQUEST", "No session found: x", NOT_FOUND, SessionNotFound, 1),
        ("INVALID_REQUEST", "unknown parent session: agent:main:p", NOT_FOUND, SessionNotFound, 1),
        (
            "CONFLICT",
            "label already in use: a",
            {"errorType": "Conflict", "errorClass": "LabelInUse"},
            LabelInUse,
            2,
        ),
        (
            "INVALID_REQUEST",
            "invalid spawnDepth (use an integer >= 0)",
            {"errorType": "InvalidInput", "errorClass": "InvalidField"},
            InvalidInput,
            2,
        ),
        (
            "INVALID_REQUEST",
            "Cannot delete the main session (agent:main:main).",
            REFUSED,
            InvalidInput,
            2,
        ),
        ("INVALID_REQUEST", "missing scope: operator.admin", ACCESS, GatewayRequestError, 1),
        ("INVALID_REQUEST", "unknown method: sessions.list", ACCESS, GatewayRequestError, 1),
        (
            "UNAVAILABLE",
            "store unavailable: disk full",
            {"errorType": "Unavailable", "errorClass": "StoreUnavailable"},
            GatewayRequestError,
            1,
        ),
    ],
)
def test_refusals_map_to_clawline_errors(
    code: str, message: str, details: dict[str, str], kind: type[Exception], exit_code: int
) -> None:
    """The CLI reads a refusal's category and class (details), never its message."""
    error = local_error(GatewayRequestError(code, message, details))
    assert type(error) is kind
    assert str(error) == message
    assert exit_code_for(error) == exit_code
