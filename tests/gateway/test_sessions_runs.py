"""``sessions.*`` methods meeting the run manager: ``sessions.create`` with a first message,
``hasActiveRun`` and ``activeOnly`` in listings, and runs aborted by delete and reset."""

from __future__ import annotations

import re
from typing import Any

import pytest

from clawline.agents.echo import EchoRunner
from clawline.gateway.methods.sessions import listing as sessions_list
from clawline.testing.live_gateway import RunningGateway
from tests.gateway.test_sessions_support import Opener, connected, quiet
from tests.gateway.wire import WireClient

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def keys_of(payload: dict[str, Any]) -> list[str]:
    return [row["key"] for row in payload["sessions"]]


@pytest.fixture
def slow_runs(gw: RunningGateway) -> None:
    """Runs that stay active for the length of a test (ended by the gateway's shutdown)."""
    gw.runtime.runs.runner = EchoRunner(delay_ms=60_000)


async def busy_session(client: WireClient, key: str) -> str:
    created = await client.ok("sessions.create", {"key": key, "message": "work"})
    assert created["runStarted"] is True
    run_id: str = created["runId"]
    return run_id


@pytest.mark.parametrize("field", ["message", "task"])
async def test_create_with_a_first_message_starts_a_run(
    wire: Opener, client: WireClient, field: str
) -> None:
    watcher = await connected(wire, scopes=["operator.read"])
    await watcher.ok("sessions.subscribe", {})
    created = await client.ok("sessions.create", {field: "hello there"})
    assert created["runStarted"] is True
    assert re.fullmatch(UUID, created["runId"])
    assert (created["status"], created["messageSeq"]) == ("started", 1)
    assert "runError" not in created
    waited = await client.ok("agent.wait", {"runId": created["runId"], "timeoutMs": 5000})
    assert waited["status"] == "ok"
    history = await client.ok("chat.history", {"sessionKey": created["key"]})
    texts = [(m["role"], m["content"][0]["text"]) for m in history["messages"]]
    assert texts == [("user", "hello there"), ("assistant", "echo: hello there")]
    events = [e["payload"] for e in await quiet(watcher, "sessions.changed")]
    assert events[0]["reason"] == "create"
    assert [e.get("reason") for e in events].count("create") == 1
    phases = [(e.get("reason"), e.get("phase")) for e in events]
    assert ("send", "start") in phases
    assert ("send", "end") in phases
    assert all(e["sessionKey"] == created["key"] for e in events)


async def test_create_reports_a_refused_first_message(
    client: WireClient, gw: RunningGateway
) -> None:
    created = await client.ok("sessions.create", {"key": "agent:main:n", "message": "a\x00b"})
    assert created["ok"] is True
    assert created["runStarted"] is False
    assert created["runError"] == "invalid message: NUL characters are not allowed"
    assert "runId" not in created
    assert gw.runtime.catalog.get("agent:main:n") is not None


async def test_rows_show_active_runs_and_active_only_lists_them(
    client: WireClient, slow_runs: None
) -> None:
    await client.ok("sessions.create", {"key": "agent:main:idle-1"})
    await busy_session(client, "agent:main:busy")
    await client.ok("sessions.create", {"key": "agent:main:idle-2"})
    everything = await client.ok("sessions.list", {})
    rows = {row["key"]: row for row in everything["sessions"]}
    assert rows["agent:main:busy"]["hasActiveRun"] is True
    assert rows["agent:main:idle-1"]["hasActiveRun"] is False
    active = await client.ok("sessions.list", {"activeOnly": True})
    assert keys_of(active) == ["agent:main:busy"]
    assert (active["count"], active["totalCount"], active["hasMore"]) == (1, 1, False)
    assert (active["nextOffset"], active["nextCursor"]) == (None, None)
    assert active["sessions"][0]["hasActiveRun"] is True


async def test_active_only_pages_by_offset_and_by_cursor(
    client: WireClient, slow_runs: None
) -> None:
    busy: list[str] = []
    for n in range(5):
        await client.ok("sessions.create", {"key": f"agent:main:idle-{n}"})
        await busy_session(client, f"agent:main:busy-{n}")
        busy.insert(0, f"agent:main:busy-{n}")
    first = await client.ok("sessions.list", {"activeOnly": True, "limit": 2})
    assert keys_of(first) == busy[:2]
    assert (first["count"], first["totalCount"], first["hasMore"], first["nextOffset"]) == (
        2,
        5,
        True,
        2,
    )
    by_offset = await client.ok("sessions.list", {"activeOnly": True, "limit": 2, "offset": 4})
    assert keys_of(by_offset) == busy[4:]
    assert (by_offset["hasMore"], by_offset["nextOffset"]) == (False, None)
    walked = keys_of(first)
    cursor = first["nextCursor"]
    while cursor is not None:
        page = await client.ok("sessions.list", {"activeOnly": True, "limit": 2, "cursor": cursor})
        assert page["hasMore"] is (page["nextCursor"] is not None)
        walked.extend(keys_of(page))
        cursor = page["nextCursor"]
    assert walked == busy


async def test_active_only_scan_budget_resumes_with_a_cursor(
    client: WireClient, slow_runs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    await busy_session(client, "agent:main:busy-old")
    for n in range(6):
        await client.ok("sessions.create", {"key": f"agent:main:idle-{n}"})
    await busy_session(client, "agent:main:busy-new")
    monkeypatch.setattr(sessions_list, "ACTIVE_SCAN_CHUNK", 2)
    monkeypatch.setattr(sessions_list, "MAX_ACTIVE_SCAN", 4)
    first = await client.ok("sessions.list", {"activeOnly": True, "limit": 5})
    assert keys_of(first) == ["agent:main:busy-new"]
    assert first["hasMore"] is True
    assert first["nextCursor"] is not None
    rest = await client.ok(
        "sessions.list", {"activeOnly": True, "limit": 5, "cursor": first["nextCursor"]}
    )
    assert keys_of(rest) == ["agent:main:busy-old"]
    assert (rest["hasMore"], rest["nextCursor"]) == (False, None)


async def test_delete_and_reset_abort_the_sessions_runs(
    client: WireClient, gw: RunningGateway, slow_runs: None
) -> None:
    doomed = await busy_session(client, "agent:main:doomed")
    reborn = await busy_session(client, "agent:main:reborn")
    runs = gw.runtime.runs
    assert runs.has_active_run("agent:main:doomed")
    assert runs.has_active_run("agent:main:reborn")
    deleted = await client.ok("sessions.delete", {"key": "agent:main:doomed"})
    assert deleted["deleted"] is True
    assert not runs.has_active_run("agent:main:doomed")
    waited = await client.ok("agent.wait", {"runId": doomed, "timeoutMs": 1000})
    assert (waited["status"], waited["error"]) == ("error", "aborted")
    assert gw.runtime.catalog.get("agent:main:doomed") is None
    before = gw.runtime.catalog.get("agent:main:reborn")
    assert before is not None
    reset = await client.ok("sessions.reset", {"key": "agent:main:reborn"})
    assert not runs.has_active_run("agent:main:reborn")
    assert (await client.ok("agent.wait", {"runId": reborn, "timeoutMs": 1000}))["status"] == (
        "error"
    )
    assert reset["entry"]["sessionId"] != before.session_id
    assert reset["entry"]["status"] is None
