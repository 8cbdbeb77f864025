"""``sessions.list`` over a real socket: paging semantics, keyset cursors, filters, rows."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.options import GatewaySettings
from clawline.testing import FakeClock
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.support import without_details
from tests.gateway.test_sessions_support import MAIN, error_of, sub_key
from tests.gateway.wire import WireClient

START = 1_790_000_000_000


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
async def gw(
    tmp_path: Path, gateway_settings: GatewaySettings, clock: FakeClock
) -> AsyncIterator[RunningGateway]:
    async with running_gateway(
        tmp_path / "state", gateway_settings=gateway_settings, clock=clock
    ) as running:
        yield running


class Seeder:
    """Writes sessions through the gateway's catalog, one second apart, so the listing order
    (newest first) is known."""

    def __init__(self, gw: RunningGateway, clock: FakeClock) -> None:
        self.catalog = gw.runtime.catalog
        self.clock = clock

    def __call__(self, key: str, **changes: object) -> str:
        self.clock.advance(1000)
        return self.catalog.patch(key, changes).key

    def many(self, count: int, prefix: str = "dm") -> list[str]:
        """``count`` sessions, returned newest first (the listing order)."""
        return [self(f"agent:main:{prefix}:{n:03d}") for n in range(count)][::-1]


@pytest.fixture
def seed(gw: RunningGateway, clock: FakeClock) -> Seeder:
    return Seeder(gw, clock)


def keys_of(payload: dict[str, Any]) -> list[str]:
    return [row["key"] for row in payload["sessions"]]


async def test_empty_listing_has_the_full_result_shape(
    client: WireClient, gw: RunningGateway
) -> None:
    payload = await client.ok("sessions.list", {})
    assert payload == {
        "ts": START,
        "path": gw.runtime.store.location,
        "count": 0,
        "totalCount": 0,
        "limitApplied": 100,
        "hasMore": False,
        "nextOffset": None,
        "nextCursor": None,
        "owners": [],
        "defaults": {"modelProvider": "offline", "model": "offline", "contextTokens": None},
        "sessions": [],
    }


async def test_offset_paging_reports_count_total_and_next_offset(
    client: WireClient, seed: Seeder
) -> None:
    expected = seed.many(7)
    first = await client.ok("sessions.list", {"limit": 3})
    assert keys_of(first) == expected[:3]
    assert (first["count"], first["totalCount"], first["limitApplied"]) == (3, 7, 3)
    assert (first["hasMore"], first["nextOffset"]) == (True, 3)
    second = await client.ok("sessions.list", {"limit": 3, "offset": first["nextOffset"]})
    assert keys_of(second) == expected[3:6]
    assert (second["hasMore"], second["nextOffset"], second["totalCount"]) == (True, 6, 7)
    last = await client.ok("sessions.list", {"limit": 3, "offset": 6})
    assert keys_of(last) == expected[6:]
    assert (last["count"], last["hasMore"], last["nextOffset"]) == (1, False, None)
    assert last["nextCursor"] is None
    beyond = await client.ok("sessions.list", {"limit": 3, "offset": 50})
    assert (beyond["count"], beyond["totalCount"], beyond["hasMore"]) == (0, 7, False)
    everything = await client.ok("sessions.list", {})
    assert keys_of(everything) == expected
    assert (everything["hasMore"], everything["nextOffset"], everything["nextCursor"]) == (
        False,
        None,
        None,
    )


async def test_keyset_cursor_walk_visits_every_row_exactly_once(
    client: WireClient, seed: Seeder
) -> None:
    expected = seed.many(23)
    seen: list[str] = []
    page = await client.ok("sessions.list", {"limit": 5})
    assert page["nextOffset"] == 5
    pages = 1
    while True:
        seen.extend(keys_of(page))
        assert page["totalCount"] == 23
        assert page["hasMore"] is (page["nextCursor"] is not None)
        if page["nextCursor"] is None:
            break
        if pages == 2:
            # A row already seen is updated: it moves to the top and is not visited again.
            seed(seen[0], label="touched")
        page = await client.ok("sessions.list", {"limit": 5, "cursor": page["nextCursor"]})
        assert page["nextOffset"] is None
        pages += 1
    assert seen == expected
    assert pages == 5


async def test_offset_page_cursor_continues_where_the_offset_page_ended(
    client: WireClient, seed: Seeder
) -> None:
    expected = seed.many(9)
    middle = await client.ok("sessions.list", {"limit": 3, "offset": 3})
    following = await client.ok("sessions.list", {"limit": 3, "cursor": middle["nextCursor"]})
    assert keys_of(following) == expected[6:9]
    assert (following["hasMore"], following["nextCursor"]) == (False, None)


async def test_cursor_errors(client: WireClient, seed: Seeder) -> None:
    seed.many(4)
    page = await client.ok("sessions.list", {"limit": 2})
    cursor = page["nextCursor"]
    combined = await error_of(client, "sessions.list", {"cursor": cursor, "offset": 2})
    assert combined["code"] == "INVALID_REQUEST"
    assert "cursor and offset cannot be combined" in combined["message"]
    other = await error_of(client, "sessions.list", {"cursor": cursor, "agentId": "main"})
    assert other["message"] == "invalid cursor: it belongs to a different query"
    raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw["u"] += 1
    forged = base64.urlsafe_b64encode(json.dumps(raw, separators=(",", ":")).encode())
    tampered = await error_of(client, "sessions.list", {"cursor": forged.decode().rstrip("=")})
    assert tampered["message"].startswith("invalid cursor: signature mismatch")
    garbage = await error_of(client, "sessions.list", {"cursor": "not a cursor"})
    assert garbage["message"] == "invalid cursor: malformed"
    offset_v1 = base64.urlsafe_b64encode(b'{"v":1,"offset":2}').decode().rstrip("=")
    unsupported = await error_of(client, "sessions.list", {"cursor": offset_v1})
    assert unsupported["message"] == "invalid cursor: unsupported version"
    null_cursor = await client.ok("sessions.list", {"limit": 2, "cursor": None})
    assert null_cursor["nextCursor"] is not None


async def test_sort_by_only_accepts_updated_at(client: WireClient, seed: Seeder) -> None:
    seed.many(2)
    assert (await client.ok("sessions.list", {"sortBy": "updatedAt"}))["count"] == 2
    for other in ("activity", "lastInteractionAt"):
        error = await error_of(client, "sessions.list", {"sortBy": other})
        assert error["code"] == "INVALID_REQUEST"
        assert (
            error["message"] == f'sessions.list sortBy "{other}" is not supported (use "updatedAt")'
        )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"bogus": 1}, "invalid sessions.list params: unknown key 'bogus'"),
        ({"limit": 0}, "invalid sessions.list params: limit must be >= 1"),
        ({"offset": -1}, "invalid sessions.list params: offset must be >= 0"),
        ({"activeMinutes": 0}, "invalid sessions.list params: activeMinutes must be >= 1"),
        ({"includeGlobal": "yes"}, "invalid sessions.list params: includeGlobal must be a boolean"),
        (
            {"agentId": "Not Valid!"},
            'Invalid agentId "Not Valid!". Agent IDs must match [a-z0-9][a-z0-9_-]{0,63}.',
        ),
    ],
)
async def test_invalid_params_are_refused(
    client: WireClient, params: dict[str, Any], message: str
) -> None:
    error = await error_of(client, "sessions.list", params)
    assert without_details(error) == {"code": "INVALID_REQUEST", "message": message}


@pytest.mark.parametrize("limit", [10_001, 1_000_000])
async def test_a_limit_above_a_page_is_refused_naming_the_cursor(
    client: WireClient, limit: int
) -> None:
    error = await error_of(client, "sessions.list", {"limit": limit})
    assert error["code"] == "INVALID_REQUEST"
    assert error["message"] == (
        f"sessions.list: limit {limit} is above the largest page (10000 rows); walk a longer"
        " listing by cursor: pass each page's nextCursor as cursor until it is null"
    )
    assert error["details"]["errorClass"] == "PageTooLarge"
    assert error["details"]["maxLimit"] == 10_000


async def test_a_full_page_of_ten_thousand_is_served(client: WireClient, seed: Seeder) -> None:
    seed.many(3)
    page = await client.ok("sessions.list", {"limit": 10_000})
    assert (page["count"], page["limitApplied"], page["hasMore"]) == (3, 10_000, False)


async def test_filters(client: WireClient, seed: Seeder, clock: FakeClock) -> None:
    seed(MAIN, label="home")
    child_a = seed(sub_key(1), spawnedBy=MAIN, spawnedWorkspaceDir="/w/a")
    grandchild = seed(sub_key(2), spawnedBy=child_a)
    seed("agent:ops:main", label="home")
    dashboard = seed("agent:main:dashboard:d1", parentSessionKey=MAIN, displayName="Budget talk")
    cron = seed("agent:main:cron:nightly")
    seed("agent:main:cron:nightly:run:r1")
    seed("global")
    seed("unknown")
    clock.advance(10 * 60_000)
    recent = seed("agent:main:dm:recent")

    async def listed(**params: Any) -> list[str]:
        payload = await client.ok("sessions.list", params)
        assert payload["totalCount"] == payload["count"] == len(payload["sessions"])
        if payload["count"] > 1:  # a partial page: the store counts the matches
            first = await client.ok("sessions.list", {**params, "limit": 1})
            assert first["totalCount"] == payload["count"]
            assert keys_of(first) == keys_of(payload)[:1]
        return keys_of(payload)

    everything = await listed()
    assert "agent:main:cron:nightly:run:r1" not in everything
    assert "global" not in everything
    assert "unknown" not in everything
    assert len(everything) == 7
    assert await listed(label="home") == ["agent:ops:main", MAIN]
    assert await listed(label="  home ", agentId="ops") == ["agent:ops:main"]
    assert await listed(agentId="OPS") == ["agent:ops:main"]
    assert await listed(spawnedBy=MAIN) == [dashboard, child_a]
    assert await listed(spawnedBy=child_a) == [grandchild]
    assert await listed(rootSessionKey=MAIN) == [dashboard, grandchild, child_a, MAIN]
    assert await listed(search="BUDGET") == [dashboard]
    assert await listed(search="subagent:00000002") == [grandchild]
    assert await listed(workspaceDir="/w/a") == [child_a]
    assert await listed(activeMinutes=5) == [recent]
    assert await listed(excludeSubagents=True) == [
        recent,
        cron,
        dashboard,
        "agent:ops:main",
        MAIN,
    ]
    assert cron not in await listed(excludeCron=True)
    assert len(await listed(excludeCron=True)) == 6
    assert await listed(includeGlobal=True, search="glob") == ["global"]
    assert await listed(includeUnknown=True, search="unkn") == ["unknown"]
    both = await listed(includeGlobal=True, includeUnknown=True)
    assert {"global", "unknown"} <= set(both)
    assert len(both) == 9
    counted = await client.ok("sessions.list", {"spawnedBy": MAIN, "limit": 1})
    assert (counted["count"], counted["totalCount"], counted["hasMore"]) == (1, 2, True)


async def test_rows_carry_entry_lineage_and_run_state(client: WireClient, seed: Seeder) -> None:
    seed(MAIN, label="home", model="anthropic/claude", thinkingLevel="high")
    child = seed(sub_key(1), spawnedBy=MAIN, spawnDepth=1, subagentRole="leaf")
    payload = await client.ok("sessions.list", {})
    rows = {row["key"]: row for row in payload["sessions"]}
    main = rows[MAIN]
    assert main["kind"] == "direct"
    assert main["agentId"] == "main"
    assert main["label"] == "home"
    assert main["model"] == "anthropic/claude"
    assert main["thinkingLevel"] == "high"
    assert main["hasActiveRun"] is False
    assert main["childSessions"] == [child]
    assert main["lineage"] == {"parent": None, "path": f"/{MAIN}", "depth": 0}
    assert "derivedTitle" not in main
    assert "lastMessagePreview" not in main
    sub = rows[child]
    assert (sub["spawnedBy"], sub["spawnDepth"], sub["subagentRole"]) == (MAIN, 1, "leaf")
    assert sub["rootSessionKey"] == MAIN
    assert sub["lineage"] == {"parent": MAIN, "path": f"/{MAIN}/{child}", "depth": 1}
    assert isinstance(sub["updatedAt"], int)
    assert sub["updatedAt"] > 1e12


async def test_derived_titles_and_last_message_preview(
    client: WireClient, seed: Seeder, gw: RunningGateway
) -> None:
    catalog = gw.runtime.catalog
    untitled = seed("agent:main:dm:untitled")
    chatty = seed("agent:main:dm:chatty")
    catalog.append(chatty, "message", {"role": "assistant", "content": "Hello, how can I help?"})
    catalog.append(
        chatty,
        "message",
        {"role": "user", "content": [{"type": "text", "text": "Plan   the\nlaunch party"}]},
    )
    catalog.append(chatty, "message", {"role": "assistant", "content": "x" * 400})
    named = seed("agent:main:dm:named", displayName="Named one")
    catalog.append(named, "message", {"role": "user", "content": "ignored for the title"})
    payload = await client.ok(
        "sessions.list", {"includeDerivedTitles": True, "includeLastMessage": True}
    )
    rows = {row["key"]: row for row in payload["sessions"]}
    entry = catalog.get(untitled)
    assert entry is not None
    day = dt.datetime.fromtimestamp(entry.created_at / 1000, tz=dt.UTC).strftime("%Y-%m-%d")
    assert rows[untitled]["derivedTitle"] == f"{entry.session_id[:8]} ({day})"
    assert "lastMessagePreview" not in rows[untitled]
    assert rows[chatty]["derivedTitle"] == "Plan the launch party"
    preview = rows[chatty]["lastMessagePreview"]
    assert preview.startswith("xxx")
    assert preview.endswith("…")
    assert len(preview) <= 240
    assert rows[named]["derivedTitle"] == "Named one"
    assert rows[named]["lastMessagePreview"] == "ignored for the title"
    only_titles = await client.ok("sessions.list", {"includeDerivedTitles": True})
    assert all("lastMessagePreview" not in row for row in only_titles["sessions"])
