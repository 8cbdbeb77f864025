"""Listing: order, every filter of SessionQuery, counts, offsets and lookups."""

from __future__ import annotations

import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery, Store
from clawline.testing import FakeClock

MAIN = "agent:main:main"


def _keys(store: Store, query: SessionQuery | None = None) -> list[str]:
    return [entry.key for entry in store.iter_all(query or SessionQuery(), page_size=3)]


def _make(catalog: SessionCatalog, clock: FakeClock, *specs: tuple[str, dict[str, object]]) -> None:
    for key, changes in specs:
        clock.advance(10)
        catalog.patch(key, changes)


def test_order_is_updated_at_then_key_descending(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    _make(catalog, clock, ("agent:main:b", {}), ("agent:main:a", {}))
    for key in ("agent:main:c", "agent:main:c-1", "agent:main:c:1", "agent:main:é", "agent:main:z"):
        catalog.patch(key, {})  # same instant: key order decides, by code point
    clock.advance(10)
    catalog.patch("agent:main:b", {"displayName": "now newest"})
    assert _keys(store) == [
        "agent:main:b",
        "agent:main:é",
        "agent:main:z",
        "agent:main:c:1",
        "agent:main:c-1",
        "agent:main:c",
        "agent:main:a",
    ]
    page = store.page(SessionQuery(), None, 100)
    assert [e.key for e in page.entries] == _keys(store)
    assert page.next is None


def test_filters(catalog: SessionCatalog, store: Store, clock: FakeClock) -> None:
    _make(
        catalog,
        clock,
        (MAIN, {"label": "root"}),
        ("agent:main:subagent:s1", {"spawnedBy": MAIN, "spawnedCwd": "/w/s1"}),
        (
            "agent:main:subagent:s2",
            {"spawnedBy": MAIN, "parentSessionKey": "agent:main:subagent:s1"},
        ),
        ("agent:codex:acp:c1", {"spawnedBy": MAIN, "spawnedWorkspaceDir": "/w/s1"}),
        (
            "agent:codex:acp:c2",
            {"spawnedBy": MAIN, "spawnedWorkspaceDir": "/w/s1", "spawnedCwd": "/w/other"},
        ),
        ("agent:ops:main", {"label": "root"}),
        ("global", {}),
        ("unknown", {}),
    )
    since = clock.now_ms() - 20  # the last three above
    s1, s2 = "agent:main:subagent:s1", "agent:main:subagent:s2"
    c1, c2 = "agent:codex:acp:c1", "agent:codex:acp:c2"
    everything = ["unknown", "global", "agent:ops:main", c2, c1, s2, s1, MAIN]
    assert _keys(store) == everything
    assert _keys(
        store, SessionQuery(agent_id="main", include_global=False, include_unknown=False)
    ) == [
        s2,
        s1,
        MAIN,
    ]
    assert _keys(store, SessionQuery(agent_id="codex")) == [c2, c1]
    assert _keys(store, SessionQuery(updated_since=since)) == [
        "unknown",
        "global",
        "agent:ops:main",
    ]
    assert _keys(store, SessionQuery(label="root")) == ["agent:ops:main", MAIN]
    assert _keys(store, SessionQuery(spawned_by=MAIN)) == [c2, c1, s2, s1]
    assert _keys(store, SessionQuery(spawned_by=s1)) == [s2]
    assert _keys(store, SessionQuery(root=MAIN)) == [c2, c1, s2, s1, MAIN]
    assert _keys(store, SessionQuery(root=s1)) == []
    assert _keys(store, SessionQuery(cwd="/w/s1")) == [c1, s1]
    assert _keys(store, SessionQuery(exclude_subagents=True)) == [
        "unknown",
        "global",
        "agent:ops:main",
        c2,
        c1,
        MAIN,
    ]
    assert _keys(store, SessionQuery(include_global=False)) == [
        k for k in everything if k != "global"
    ]
    assert _keys(store, SessionQuery(include_unknown=False)) == [
        k for k in everything if k != "unknown"
    ]
    combined = SessionQuery(agent_id="main", exclude_subagents=True, label="root")
    assert _keys(store, combined) == [MAIN]
    for query in (
        SessionQuery(agent_id="main"),
        SessionQuery(spawned_by=MAIN),
        SessionQuery(include_global=False, include_unknown=False),
    ):
        assert store.count(query) == len(_keys(store, query))


def test_search(catalog: SessionCatalog, store: Store, clock: FakeClock) -> None:
    _make(
        catalog,
        clock,
        ("agent:main:plain", {"label": "Deploy Report"}),
        ("agent:main:pct", {"label": "100% done"}),
        ("agent:main:under", {"displayName": "a_b"}),
        ("agent:main:axb", {"displayName": "axb"}),
        ("agent:main:slash", {"displayName": "back\\slash"}),
        ("agent:main:sid", {"sessionId": "custom-id-77"}),
    )
    assert _keys(store, SessionQuery(search="REPORT")) == ["agent:main:plain"]
    assert _keys(store, SessionQuery(search="%")) == ["agent:main:pct"]
    assert _keys(store, SessionQuery(search="0% d")) == ["agent:main:pct"]
    assert _keys(store, SessionQuery(search="a_b")) == ["agent:main:under"]
    assert _keys(store, SessionQuery(search="_")) == ["agent:main:under"]
    assert _keys(store, SessionQuery(search="\\")) == ["agent:main:slash"]
    assert _keys(store, SessionQuery(search="k\\s")) == ["agent:main:slash"]
    assert _keys(store, SessionQuery(search="ID-77")) == ["agent:main:sid"]
    assert _keys(store, SessionQuery(search="main:ax")) == ["agent:main:axb"]
    assert _keys(store, SessionQuery(search="nothing like it")) == []
    assert store.count(SessionQuery(search="%")) == 1


def test_cron_runs_are_never_listed(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    _make(
        catalog,
        clock,
        ("agent:main:cron:nightly", {}),
        ("agent:main:cron:nightly:run:r1", {"label": "run"}),
        ("agent:main:cron:nightly:run:r2", {}),
    )
    assert _keys(store) == ["agent:main:cron:nightly"]
    assert store.count(SessionQuery()) == 1
    assert [e.key for e in store.page_at_offset(SessionQuery(), 0, 10)] == [
        "agent:main:cron:nightly"
    ]
    assert _keys(store, SessionQuery(label="run")) == []
    assert store.get("agent:main:cron:nightly:run:r1") is not None
    assert [e.key for e in store.by_label("run")] == ["agent:main:cron:nightly:run:r1"]


def test_count_and_page_at_offset(catalog: SessionCatalog, store: Store, clock: FakeClock) -> None:
    keys = [f"agent:main:k{i:02d}" for i in range(12)]
    _make(catalog, clock, *((key, {}) for key in keys))
    newest_first = keys[::-1]
    assert store.count(SessionQuery()) == 12
    assert store.count(SessionQuery(agent_id="other")) == 0
    assert [e.key for e in store.page_at_offset(SessionQuery(), 0, 5)] == newest_first[:5]
    assert [e.key for e in store.page_at_offset(SessionQuery(), 5, 5)] == newest_first[5:10]
    assert [e.key for e in store.page_at_offset(SessionQuery(), 10, 5)] == newest_first[10:]
    assert store.page_at_offset(SessionQuery(), 12, 5) == []


@pytest.mark.parametrize("limit", [1, 4, 5, 100])
def test_store_pages_walk_everything(
    catalog: SessionCatalog, store: Store, clock: FakeClock, limit: int
) -> None:
    keys = [f"agent:main:k{i}" for i in range(5)]
    _make(catalog, clock, *((key, {}) for key in keys))
    seen: list[str] = []
    page = store.page(SessionQuery(), None, limit)
    while True:
        assert len(page.entries) <= limit
        seen.extend(e.key for e in page.entries)
        if page.next is None:
            break
        assert page.next.key == page.entries[-1].key
        page = store.page(SessionQuery(), page.next, limit)
    assert seen == keys[::-1]


def test_by_session_id(catalog: SessionCatalog, store: Store) -> None:
    entry = catalog.patch("agent:main:a", {"sessionId": "shared-id"}).after
    catalog.patch("agent:main:b", {})
    assert store.by_session_id("shared-id") == [entry]
    assert store.by_session_id("nope") == []


def test_empty_store(store: Store) -> None:
    assert store.count(SessionQuery()) == 0
    assert store.page(SessionQuery(), None, 10).entries == []
    assert store.page(SessionQuery(), None, 10).next is None
    assert store.page_at_offset(SessionQuery(), 0, 10) == []
    assert store.children(MAIN) == []
    assert store.descendants((MAIN,)) == []
    assert store.tree(MAIN) == []
    assert store.get(MAIN) is None
