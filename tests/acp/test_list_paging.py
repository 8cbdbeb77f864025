"""session/list through a real bridge: keyset pages, lineage rows, stability, page size, cwd."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from acp.schema import ListSessionsResponse

from clawline.acp.listing import READ_AHEAD_TTL_S
from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import BridgeProcess, gateway_client, seed

ROOT = "agent:main:dashboard:tree"
CHILDREN = [f"agent:main:subagent:child-{n}" for n in range(3)]
GRANDCHILDREN = [f"agent:main:subagent:grandchild-{n}" for n in range(6)]


def tree_specs() -> list[tuple[str, dict[str, Any]]]:
    """A root, three orchestrators below it and two leaves below each (10 sessions)."""
    specs: list[tuple[str, dict[str, Any]]] = [(ROOT, {"label": "tree root"})]
    for n, child in enumerate(CHILDREN):
        specs.append(
            (
                child,
                {
                    "spawnedBy": ROOT,
                    "spawnDepth": 1,
                    "subagentRole": "orchestrator",
                    "subagentControlScope": "children",
                    "spawnedWorkspaceDir": "/w/repo",
                    "displayName": f"child {n}",
                },
            )
        )
    for n, grandchild in enumerate(GRANDCHILDREN):
        specs.append(
            (
                grandchild,
                {
                    "spawnedBy": CHILDREN[n // 2],
                    "spawnDepth": 2,
                    "subagentRole": "leaf",
                    "subagentControlScope": "none",
                    "spawnedWorkspaceDir": "/w/repo",
                    "spawnedCwd": f"/w/repo/leaf-{n}",
                },
            )
        )
    return specs


def plain_specs(count: int, prefix: str = "chat") -> list[tuple[str, dict[str, Any]]]:
    return [(f"agent:main:{prefix}-{n:04d}", {}) for n in range(count)]


async def gateway_order(gateway: RunningGateway, **params: Any) -> list[str]:
    async with gateway_client(gateway) as client:
        listed = await client.request("sessions.list", {"limit": 10_000, **params})
    assert isinstance(listed, dict)
    return [row["key"] for row in listed["sessions"]]


async def walk(
    bridge: BridgeProcess, **params: Any
) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Every page of a listing (the cursor followed to the end) and the raw results."""
    pages: list[list[dict[str, Any]]] = []
    results: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        request = dict(params)
        if cursor is not None:
            request["cursor"] = cursor
        result = await bridge.call("session/list", request)
        results.append(result)
        pages.append(result["sessions"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages, results
        assert len(pages) < 1000


async def test_250_sessions_in_three_pages(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    await seed(acp_gateway, [*plain_specs(240), *tree_specs()])
    await seed(
        acp_gateway,
        [("agent:main:cron:nightly:run:r1", {}), ("global", {}), ("unknown", {})],
    )
    bridge = await acp_bridge()
    pages, results = await walk(bridge)
    assert [len(page) for page in pages] == [100, 100, 50]
    assert "nextCursor" not in results[-1]
    assert all(isinstance(r.get("nextCursor"), str) for r in results[:-1])
    listed = [row["sessionId"] for page in pages for row in page]
    assert listed == await gateway_order(acp_gateway)
    assert len(set(listed)) == 250
    assert "agent:main:cron:nightly:run:r1" not in listed
    assert "global" not in listed
    assert "unknown" not in listed

    rows = {row["sessionId"]: row for page in pages for row in page}
    catalog = acp_gateway.runtime.catalog
    for key, row in rows.items():
        entry = await acp_gateway.runtime.call(catalog.get, key)
        assert entry is not None
        assert row["_meta"]["sessionKey"] == key
        assert row["_meta"]["rootSessionKey"] == entry.root_session_key
        assert row["_meta"]["traceId"] == entry.trace_id
        assert row["_meta"]["lineage"] == entry.lineage.to_json()
    assert rows["agent:main:chat-0007"]["cwd"] == str(tmp_path)  # the bridge's cwd
    assert rows["agent:main:chat-0007"]["_meta"] == {
        "sessionKey": "agent:main:chat-0007",
        "kind": "direct",
        "rootSessionKey": "agent:main:chat-0007",
        "traceId": rows["agent:main:chat-0007"]["_meta"]["traceId"],
        "lineage": {"parent": None, "path": "/agent:main:chat-0007", "depth": 0},
    }
    # derivedTitle (displayName → subject → first user message → "<id> (<day>)") comes first
    root_entry = await acp_gateway.runtime.call(catalog.get, ROOT)
    assert root_entry is not None
    day = time.strftime("%Y-%m-%d", time.gmtime(root_entry.created_at // 1000))
    assert rows[ROOT]["title"] == f"{root_entry.session_id[:8]} ({day})"
    child = rows[CHILDREN[1]]
    assert child["cwd"] == "/w/repo"
    assert child["title"] == "child 1"
    assert {k: v for k, v in child["_meta"].items() if k != "traceId"} == {
        "sessionKey": CHILDREN[1],
        "kind": "direct",
        "parentSessionId": ROOT,
        "spawnedBy": ROOT,
        "spawnDepth": 1,
        "subagentRole": "orchestrator",
        "subagentControlScope": "children",
        "spawnedWorkspaceDir": "/w/repo",
        "rootSessionKey": ROOT,
        "lineage": {"parent": ROOT, "path": f"/{ROOT}/{CHILDREN[1]}", "depth": 1},
    }
    leaf = rows[GRANDCHILDREN[3]]
    assert leaf["cwd"] == "/w/repo/leaf-3"
    assert leaf["_meta"]["parentSessionId"] == CHILDREN[1]
    assert leaf["_meta"]["subagentRole"] == "leaf"
    assert leaf["_meta"]["subagentControlScope"] == "none"
    assert leaf["_meta"]["spawnedCwd"] == "/w/repo/leaf-3"
    assert leaf["_meta"]["lineage"] == {
        "parent": CHILDREN[1],
        "path": f"/{ROOT}/{CHILDREN[1]}/{GRANDCHILDREN[3]}",
        "depth": 2,
    }
    assert leaf["_meta"]["rootSessionKey"] == ROOT
    assert len({rows[k]["_meta"]["traceId"] for k in [ROOT, *CHILDREN, *GRANDCHILDREN]}) == 1
    assert "title" in leaf
    assert leaf["updatedAt"].endswith("Z")


async def test_the_sdk_client_parses_every_page(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway
) -> None:
    await seed(acp_gateway, [*plain_specs(120), *tree_specs()])
    bridge = await acp_bridge()
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await bridge.conn.list_sessions(cursor=cursor)
        assert isinstance(page, ListSessionsResponse)
        seen.extend(info.session_id for info in page.sessions)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == await gateway_order(acp_gateway)


async def test_a_walk_is_stable_while_sessions_change(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway
) -> None:
    await seed(acp_gateway, plain_specs(250))
    before = await gateway_order(acp_gateway)
    bridge = await acp_bridge()
    first = await bridge.call("session/list", {})
    seen = [row["sessionId"] for row in first["sessions"]]
    # page 2 is being read ahead already: a change there may or may not show (once)
    maybe = before[120:125]
    # page 3 is read after page 2 is asked for: these moved to the front and are not met again
    touched_unseen = before[210:230]
    touched_seen = before[10:15]
    changed = [*maybe, *touched_unseen, *touched_seen]
    await seed(acp_gateway, [(key, {"displayName": "changed"}) for key in changed])
    await seed(acp_gateway, plain_specs(5, prefix="late"))
    cursor = first["nextCursor"]
    while cursor is not None:
        page = await bridge.call("session/list", {"cursor": cursor})
        seen.extend(row["sessionId"] for row in page["sessions"])
        cursor = page.get("nextCursor")
        if cursor is not None:  # more changes between every two pages
            await seed(acp_gateway, [(seen[-1], {"displayName": "changed again"})])
    assert len(seen) == len(set(seen))
    untouched = [key for key in before if key not in set(maybe + touched_unseen)]
    assert [key for key in seen if key in set(untouched)] == untouched
    assert not set(touched_unseen) & set(seen)
    assert not {f"agent:main:late-{n:04d}" for n in range(5)} & set(seen)


async def test_a_page_read_ahead_is_served_only_while_fresh(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway
) -> None:
    await seed(acp_gateway, plain_specs(40))
    before = await gateway_order(acp_gateway)
    bridge = await acp_bridge()
    first = await bridge.call("session/list", {"_meta": {"pageSize": 10}})
    await asyncio.sleep(READ_AHEAD_TTL_S + 0.3)
    await seed(acp_gateway, [(before[15], {"displayName": "changed"})])
    second = await bridge.call(
        "session/list", {"cursor": first["nextCursor"], "_meta": {"pageSize": 10}}
    )
    assert [row["sessionId"] for row in second["sessions"]] == before[10:15] + before[16:21]
    # another page size for the same cursor is read, not taken from the read-ahead
    again = await bridge.call(
        "session/list", {"cursor": first["nextCursor"], "_meta": {"pageSize": 3}}
    )
    assert [row["sessionId"] for row in again["sessions"]] == before[10:15][:3]


async def test_page_size_from_meta(acp_bridge: BridgeFactory, acp_gateway: RunningGateway) -> None:
    await seed(acp_gateway, plain_specs(130))
    bridge = await acp_bridge()

    async def size(meta: dict[str, Any]) -> int:
        result = await bridge.call("session/list", {"_meta": meta})
        return len(result["sessions"])

    assert await size({"pageSize": 7}) == 7
    assert await size({"limit": 3}) == 3
    assert await size({"pageSize": 5, "limit": 50}) == 5
    assert await size({"pageSize": 0}) == 1
    assert await size({"pageSize": -4}) == 1
    assert await size({"pageSize": 1000}) == 100
    assert await size({"limit": 2.9}) == 2
    assert await size({"pageSize": "50"}) == 100
    assert await size({"pageSize": True}) == 100
    assert await size({}) == 100
    # the page size may change from one page to the next
    first = await bridge.call("session/list", {"_meta": {"pageSize": 30}})
    rest = await bridge.call(
        "session/list", {"cursor": first["nextCursor"], "_meta": {"pageSize": 100}}
    )
    assert len(rest["sessions"]) == 100
    order = await gateway_order(acp_gateway)
    assert [r["sessionId"] for r in first["sessions"] + rest["sessions"]] == order[:130]


async def test_cwd_filter(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    specs: list[tuple[str, dict[str, Any]]] = [
        (f"agent:main:subagent:cwd-{n}", {"spawnedBy": "agent:main:main", "spawnedCwd": "/w/a"})
        for n in range(5)
    ]
    specs += [
        (
            f"agent:main:subagent:ws-{n}",
            {"spawnedBy": "agent:main:main", "spawnedWorkspaceDir": "/w/a"},
        )
        for n in range(3)
    ]
    specs += [
        (
            "agent:main:subagent:other",
            {"spawnedBy": "agent:main:main", "spawnedWorkspaceDir": "/w/a", "spawnedCwd": "/w/b"},
        ),
        ("agent:main:main", {}),
    ]
    await seed(acp_gateway, [specs[-1], *specs[:-1], *plain_specs(20)])
    bridge = await acp_bridge()
    pages, _ = await walk(bridge, cwd="/w/a", _meta={"pageSize": 3})
    assert [len(page) for page in pages] == [3, 3, 2]
    keys = [row["sessionId"] for page in pages for row in page]
    assert sorted(keys) == sorted(key for key, _ in specs[:8])
    assert all(row["cwd"] == "/w/a" for page in pages for row in page)
    assert keys == await gateway_order(acp_gateway, workspaceDir="/w/a")
    other = await bridge.call("session/list", {"cwd": "/w/b"})
    assert [row["sessionId"] for row in other["sessions"]] == ["agent:main:subagent:other"]
    nothing = await bridge.call("session/list", {"cwd": "/nowhere"})
    assert nothing == {"sessions": []}
    everything, _ = await walk(bridge)
    assert sum(len(page) for page in everything) == 30
    # rows without a directory show the bridge's own working directory
    main = next(row for page in everything for row in page if row["sessionId"] == "agent:main:main")
    assert main["cwd"] == str(tmp_path)


async def test_an_empty_catalog(acp_bridge: BridgeFactory) -> None:
    bridge = await acp_bridge()
    assert await bridge.call("session/list", {}) == {"sessions": []}
