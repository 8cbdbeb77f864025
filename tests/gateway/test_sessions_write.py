"""``sessions.create``, ``sessions.patch``, ``sessions.delete`` and ``sessions.reset`` over a real
socket: results, exact error strings, and that a refused request changes nothing."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.support import without_details
from tests.gateway.test_sessions_support import MAIN, Opener, connected, error_of, seed, sub_key
from tests.gateway.wire import WireClient

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def listed_keys(payload: dict[str, Any]) -> list[str]:
    return [row["key"] for row in payload["sessions"]]


# --- sessions.create -------------------------------------------------------------------------


async def test_create_without_key_makes_a_dashboard_session(
    client: WireClient, gw: RunningGateway
) -> None:
    result = await client.ok("sessions.create", {})
    assert re.fullmatch(f"agent:main:dashboard:{UUID}", result["key"])
    assert result["ok"] is True
    assert result["runStarted"] is False
    assert "runId" not in result
    entry = gw.runtime.catalog.get(result["key"])
    assert entry is not None
    assert result["sessionId"] == entry.session_id
    assert result["entry"] == entry.to_json()
    info = gw.runtime.store.transcript_info(entry.session_id)
    assert info is not None
    assert info.session_key == result["key"]
    assert result["key"] in listed_keys(await client.ok("sessions.list", {}))
    ops = await client.ok("sessions.create", {"agentId": "Ops"})
    assert re.fullmatch(f"agent:ops:dashboard:{UUID}", ops["key"])


async def test_create_with_key_label_model_and_parent(
    client: WireClient, gw: RunningGateway
) -> None:
    seed(gw.runtime.catalog, MAIN)
    result = await client.ok(
        "sessions.create",
        {
            "key": "Research-Notes",
            "label": " notes ",
            "model": "anthropic/claude-x",
            "parentSessionKey": "main",
        },
    )
    assert result["key"] == "agent:main:research-notes"
    entry = result["entry"]
    assert (entry["label"], entry["model"], entry["parentSessionKey"]) == (
        "notes",
        "anthropic/claude-x",
        MAIN,
    )
    assert entry["lineage"] == {"parent": MAIN, "path": f"/{MAIN}/{result['key']}", "depth": 1}
    explicit = await client.ok("sessions.create", {"key": "agent:ops:x", "agentId": "ops"})
    assert explicit["key"] == "agent:ops:x"
    bare = await client.ok("sessions.create", {"key": "chat-1", "agentId": "ops"})
    assert bare["key"] == "agent:ops:chat-1"


async def test_create_errors(client: WireClient, gw: RunningGateway) -> None:
    mismatch = await error_of(client, "sessions.create", {"key": "agent:ops:x", "agentId": "main"})
    assert mismatch == {
        "code": "INVALID_REQUEST",
        "message": "sessions.create key agent (ops) does not match agentId (main)",
        "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
    }
    parent = await error_of(client, "sessions.create", {"parentSessionKey": "agent:main:nope"})
    assert parent["message"] == "unknown parent session: agent:main:nope"
    seed(gw.runtime.catalog, "agent:main:taken", label="taken")
    label = await error_of(client, "sessions.create", {"label": "taken"})
    assert label["message"] == "label already in use: taken"
    empty = await error_of(client, "sessions.create", {"label": "   "})
    assert empty["message"] == "invalid label: empty"
    unknown = await error_of(client, "sessions.create", {"key": "x", "sessionKey": "y"})
    assert unknown["message"] == "invalid sessions.create params: unknown key 'sessionKey'"
    page = await client.ok("sessions.list", {})
    assert listed_keys(page) == ["agent:main:taken"]


async def test_create_reports_a_transcript_failure_and_writes_nothing(
    client: WireClient, gw: RunningGateway
) -> None:
    db = sqlite3.connect(gw.runtime.settings.sqlite_path)
    try:
        db.execute(
            "CREATE TRIGGER refuse_transcripts BEFORE INSERT ON transcripts"
            " BEGIN SELECT RAISE(ABORT, 'disk quota exceeded'); END"
        )
        db.commit()
    finally:
        db.close()
    error = await error_of(client, "sessions.create", {"key": "agent:main:doomed"})
    assert error == {
        "code": "UNAVAILABLE",
        "message": "failed to create session transcript: disk quota exceeded",
        "details": {"errorType": "Unavailable", "errorClass": "GatewayError"},
    }
    assert gw.runtime.catalog.get("agent:main:doomed") is None


# --- sessions.patch --------------------------------------------------------------------------


async def test_patch_sets_and_clears_fields_and_upserts(
    client: WireClient, gw: RunningGateway
) -> None:
    created = await client.ok(
        "sessions.patch",
        {
            "key": "agent:main:fresh",
            "label": "fresh",
            "thinkingLevel": "high",
            "fastMode": True,
            "model": "openai/gpt-5",
            "sendPolicy": "deny",
            "displayName": "Fresh",
        },
    )
    assert created["ok"] is True
    assert created["key"] == "agent:main:fresh"
    assert created["path"] == gw.runtime.store.location
    assert created["resolved"] == {"modelProvider": "openai", "model": "gpt-5"}
    entry = created["entry"]
    assert re.fullmatch(UUID, entry["sessionId"])
    assert (entry["label"], entry["thinkingLevel"], entry["fastMode"], entry["sendPolicy"]) == (
        "fresh",
        "high",
        True,
        "deny",
    )
    assert entry["displayName"] == "Fresh"
    cleared = await client.ok(
        "sessions.patch", {"key": "agent:main:fresh", "label": None, "model": None}
    )
    assert cleared["entry"]["label"] is None
    assert "model" not in cleared["entry"]
    assert cleared["entry"]["thinkingLevel"] == "high"
    assert cleared["entry"]["sessionId"] == entry["sessionId"]
    assert cleared["resolved"] == {"modelProvider": "offline", "model": "offline"}
    plain = await client.ok("sessions.patch", {"key": "agent:main:fresh", "model": "small"})
    assert plain["resolved"] == {"modelProvider": "offline", "model": "small"}


async def test_patch_lineage_fields_follow_the_catalog_rules(
    client: WireClient, gw: RunningGateway
) -> None:
    child = sub_key(1)
    patched = await client.ok(
        "sessions.patch",
        {
            "key": child,
            "spawnedBy": MAIN,
            "spawnDepth": 1,
            "subagentRole": "leaf",
            "subagentControlScope": "none",
            "spawnedWorkspaceDir": "/w",
            "spawnedCwd": "/w/c",
        },
    )
    assert patched["entry"]["spawnedBy"] == MAIN
    assert patched["entry"]["lineage"]["depth"] == 1
    again = await client.ok("sessions.patch", {"key": child, "spawnedBy": MAIN})
    assert {**again["entry"], "updatedAt": 0} == {**patched["entry"], "updatedAt": 0}
    acp = await client.ok("sessions.patch", {"key": "agent:codex:acp:a1", "spawnedBy": MAIN})
    assert acp["entry"]["rootSessionKey"] == MAIN
    cases = [
        (
            {"key": "agent:main:dm:x", "spawnedBy": MAIN},
            "spawnedBy is only supported for subagent:* or acp:* sessions",
        ),
        ({"key": child, "spawnedBy": "agent:main:other"}, "spawnedBy cannot be changed once set"),
        ({"key": child, "spawnedBy": None}, "spawnedBy cannot be cleared once set"),
        ({"key": child, "spawnDepth": 2}, "spawnDepth cannot be changed once set"),
        ({"key": sub_key(2), "spawnedBy": "  "}, "invalid spawnedBy: empty"),
        ({"key": sub_key(2), "spawnDepth": -1}, "invalid spawnDepth (use an integer >= 0)"),
        ({"key": sub_key(2), "spawnDepth": "1"}, "invalid spawnDepth (use an integer >= 0)"),
        (
            {"key": sub_key(2), "subagentRole": "boss"},
            'invalid subagentRole (use "orchestrator" or "leaf")',
        ),
        (
            {"key": sub_key(2), "subagentControlScope": "all"},
            'invalid subagentControlScope (use "children" or "none")',
        ),
        ({"key": sub_key(2), "spawnedWorkspaceDir": ""}, "invalid spawnedWorkspaceDir: empty"),
        ({"key": sub_key(2), "label": 5}, "invalid label: must be a string"),
        ({"key": sub_key(2), "label": "x" * 513}, "invalid label: too long (max 512)"),
        (
            {"key": sub_key(2), "parentSessionKey": MAIN},
            "invalid sessions.patch params: unknown key 'parentSessionKey'",
        ),
        (
            {"key": sub_key(2), "fastMode": "yes"},
            "invalid sessions.patch params: fastMode must be a boolean",
        ),
        ({"label": "x"}, "invalid sessions.patch params: key is required"),
    ]
    for params, message in cases:
        error = await error_of(client, "sessions.patch", params)
        assert without_details(error) == {"code": "INVALID_REQUEST", "message": message}, params
    assert gw.runtime.catalog.get(sub_key(2)) is None
    assert gw.runtime.catalog.get("agent:main:dm:x") is None
    assert gw.runtime.catalog.get(child).spawn_depth == 1  # type: ignore[union-attr]


async def test_patch_label_must_be_unique_per_agent(client: WireClient) -> None:
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "shared"})
    error = await error_of(client, "sessions.patch", {"key": "agent:main:b", "label": "shared"})
    assert error["message"] == "label already in use: shared"
    other_agent = await client.ok("sessions.patch", {"key": "agent:ops:b", "label": "shared"})
    assert other_agent["entry"]["label"] == "shared"


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "sessions.patch",
            {"key": "agent:main:x", "label": "x"},
            "webchat clients cannot patch sessions; use chat.send for session-scoped updates",
        ),
        ("sessions.delete", {"key": "agent:main:x"}, "webchat clients cannot delete sessions"),
    ],
)
async def test_webchat_clients_cannot_patch_or_delete(
    wire: Opener, gw: RunningGateway, method: str, params: dict[str, Any], message: str
) -> None:
    seed(gw.runtime.catalog, "agent:main:x", label="before")
    webchat = await connected(wire, client_id="webchat", mode="webchat")
    error = await error_of(webchat, method, params)
    assert without_details(error) == {"code": "INVALID_REQUEST", "message": message}
    entry = gw.runtime.catalog.get("agent:main:x")
    assert entry is not None
    assert entry.label == "before"
    control_ui = await connected(wire, client_id="openclaw-control-ui", mode="webchat")
    assert (await control_ui.ok(method, params))["ok"] is True


# --- sessions.delete -------------------------------------------------------------------------


async def test_delete_removes_exactly_one_session_and_never_cascades(
    client: WireClient, gw: RunningGateway
) -> None:
    catalog = gw.runtime.catalog
    parent = sub_key(1)
    seed(catalog, MAIN)
    seed(catalog, parent, spawnedBy=MAIN)
    seed(catalog, sub_key(2), spawnedBy=parent)
    old = catalog.get(parent)
    assert old is not None
    result = await client.ok("sessions.delete", {"key": parent})
    assert result == {"ok": True, "key": parent, "deleted": True, "archived": [old.session_id]}
    info = gw.runtime.store.transcript_info(old.session_id)
    assert info is not None
    assert info.archive_reason == "deleted"
    rows = {row["key"]: row for row in (await client.ok("sessions.list", {}))["sessions"]}
    assert set(rows) == {MAIN, sub_key(2)}
    child = rows[sub_key(2)]
    assert child["spawnedBy"] == parent
    assert child["rootSessionKey"] == MAIN
    assert child["lineage"] == {
        "parent": parent,
        "path": f"/{MAIN}/{parent}/{sub_key(2)}",
        "depth": 2,
    }
    assert rows[MAIN]["childSessions"] == []


async def test_delete_missing_main_and_kept_transcript(
    client: WireClient, gw: RunningGateway
) -> None:
    missing = await client.ok("sessions.delete", {"key": "agent:main:ghost"})
    assert missing == {"ok": True, "key": "agent:main:ghost", "deleted": False, "archived": []}
    seed(gw.runtime.catalog, MAIN)
    for key in ("main", MAIN, "AGENT:MAIN:MAIN"):
        error = await error_of(client, "sessions.delete", {"key": key})
        assert error == {
            "code": "INVALID_REQUEST",
            "message": "Cannot delete the main session (agent:main:main).",
            "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
        }
    assert gw.runtime.catalog.get(MAIN) is not None
    seed(gw.runtime.catalog, "agent:main:keep")
    entry = gw.runtime.catalog.get("agent:main:keep")
    assert entry is not None
    kept = await client.ok("sessions.delete", {"key": "agent:main:keep", "deleteTranscript": False})
    assert (kept["deleted"], kept["archived"]) == (True, [])
    info = gw.runtime.store.transcript_info(entry.session_id)
    assert info is not None
    assert info.archived_at is None
    hooks = await client.ok("sessions.delete", {"key": "agent:main:x", "emitLifecycleHooks": True})
    assert hooks["deleted"] is False


# --- sessions.reset --------------------------------------------------------------------------


async def test_reset_gives_a_new_session_id_and_keeps_settings(
    client: WireClient, gw: RunningGateway
) -> None:
    catalog = gw.runtime.catalog
    await client.ok("sessions.patch", {"key": "agent:main:r", "label": "r", "model": "a/b"})
    before = catalog.get("agent:main:r")
    assert before is not None
    catalog.append("agent:main:r", "message", {"role": "user", "content": "hi"})
    result = await client.ok("sessions.reset", {"key": "agent:main:r"})
    entry = result["entry"]
    assert (result["ok"], result["key"]) == (True, "agent:main:r")
    assert entry["sessionId"] != before.session_id
    assert (entry["label"], entry["model"]) == ("r", "a/b")
    old = gw.runtime.store.transcript_info(before.session_id)
    assert old is not None
    assert old.archive_reason == "reset"
    assert old.last_seq == 1
    new = gw.runtime.store.transcript_info(entry["sessionId"])
    assert new is not None
    assert new.last_seq == 0
    assert new.archived_at is None
    again = await client.ok("sessions.reset", {"key": "r", "reason": "new"})
    assert again["key"] == "agent:main:r"
    missing = await error_of(client, "sessions.reset", {"key": "agent:main:nope"})
    assert missing == {
        "code": "INVALID_REQUEST",
        "message": "session not found: agent:main:nope",
        "details": {"errorType": "NotFound", "errorClass": "SessionNotFound"},
    }
    bad = await error_of(client, "sessions.reset", {"key": "agent:main:r", "reason": "wipe"})
    assert bad["message"] == "invalid sessions.reset params: reason must be one of 'new', 'reset'"


# --- scopes ----------------------------------------------------------------------------------


async def test_scopes_guard_the_write_methods(wire: Opener, gw: RunningGateway) -> None:
    seed(gw.runtime.catalog, "agent:main:x")
    reader = await connected(wire, scopes=["operator.read"])
    writer = await connected(wire, scopes=["operator.write"])
    admin_calls = [
        ("sessions.patch", {"key": "agent:main:x", "label": "nope"}),
        ("sessions.delete", {"key": "agent:main:x"}),
        ("sessions.reset", {"key": "agent:main:x"}),
    ]
    for client in (reader, writer):
        for method, params in admin_calls:
            error = await error_of(client, method, params)
            assert error == {
                "code": "INVALID_REQUEST",
                "message": "missing scope: operator.admin",
                "details": {"errorType": "InvalidInput", "errorClass": "AccessRefused"},
            }
    error = await error_of(reader, "sessions.create", {})
    assert error == {
        "code": "INVALID_REQUEST",
        "message": "missing scope: operator.write",
        "details": {"errorType": "InvalidInput", "errorClass": "AccessRefused"},
    }
    created = await writer.ok("sessions.create", {})
    for client in (reader, writer):
        assert created["key"] in listed_keys(await client.ok("sessions.list", {}))
    entry = gw.runtime.catalog.get("agent:main:x")
    assert entry is not None
    assert entry.label is None
    nothing = await connected(wire, scopes=[])
    error = await error_of(nothing, "sessions.list", {})
    assert error["message"] == "missing scope: operator.read"
