"""The cwd filter (``SessionQuery.cwd``, the gateway's ``workspaceDir``, ACP ``session/list``'s
``cwd``): exact match on ``spawnedCwd``, else ``spawnedWorkspaceDir``; keyset pages, counts and
offsets stay inside the filter, served by the ``sessions_by_cwd`` index."""

from __future__ import annotations

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery, Store
from clawline.testing import FakeClock
from tests.conformance.conftest import Backend

MAIN = "agent:main:main"
FILTER = SessionQuery(cwd="/w/a", include_global=False, include_unknown=False)


def _child(n: int | str) -> str:
    return f"agent:main:subagent:c{n}"


def _seed(catalog: SessionCatalog, clock: FakeClock) -> list[str]:
    """Sessions in and out of ``/w/a``; returns the keys in it, newest first."""
    catalog.patch(MAIN, {})
    inside: list[str] = []
    for n in range(12):
        clock.advance(5)
        key = _child(n)
        if n % 3 == 0:
            changes = {"spawnedBy": MAIN, "spawnedCwd": "/w/a"}
        elif n % 3 == 1:
            changes = {"spawnedBy": MAIN, "spawnedWorkspaceDir": "/w/a"}
        else:  # the cwd wins over the workspace: not in /w/a
            changes = {"spawnedBy": MAIN, "spawnedWorkspaceDir": "/w/a", "spawnedCwd": "/w/b"}
        catalog.patch(key, changes)
        if n % 3 != 2:
            inside.append(key)
        catalog.patch(f"agent:main:plain-{n}", {})
    for key in ("agent:main:subagent:same-1", "agent:main:subagent:same-2"):
        catalog.patch(key, {"spawnedBy": MAIN, "spawnedCwd": "/w/a"})  # one instant: key order
        inside.append(key)
    catalog.patch("agent:main:subagent:prefix", {"spawnedBy": MAIN, "spawnedCwd": "/w/a/"})
    catalog.patch("agent:main:subagent:upper", {"spawnedBy": MAIN, "spawnedCwd": "/W/A"})
    return list(reversed(inside))


def _walk(catalog: SessionCatalog, query: SessionQuery, limit: int) -> list[str]:
    keys: list[str] = []
    cursor: str | None = None
    while True:
        page = catalog.page(query, limit=limit, cursor=cursor)
        keys.extend(entry.key for entry in page.entries)
        if page.next_cursor is None:
            return keys
        cursor = page.next_cursor


def test_keyset_pages_count_and_offsets_inside_the_filter(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    inside = _seed(catalog, clock)
    assert inside[:2] == ["agent:main:subagent:same-2", "agent:main:subagent:same-1"]
    assert _walk(catalog, FILTER, 3) == inside
    assert _walk(catalog, FILTER, 100) == inside
    assert store.count(FILTER) == len(inside) == 10
    assert [e.key for e in store.page_at_offset(FILTER, 4, 3)] == inside[4:7]
    assert _walk(catalog, SessionQuery(cwd="/w/b"), 2) == [_child(n) for n in (11, 8, 5, 2)]
    assert store.count(SessionQuery(cwd="/nowhere")) == 0
    assert catalog.page(SessionQuery(cwd="/nowhere"), limit=5).entries == []


def test_a_filtered_walk_is_stable_under_writes(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    inside = _seed(catalog, clock)
    first = catalog.page(FILTER, limit=4)
    seen = [entry.key for entry in first.entries]
    clock.advance(5)
    catalog.patch(inside[8], {"displayName": "moved to the front"})  # not yet seen
    catalog.patch(inside[1], {"displayName": "seen already"})
    catalog.patch(_child("new"), {"spawnedBy": MAIN, "spawnedCwd": "/w/a"})
    cursor = first.next_cursor
    while cursor is not None:
        page = catalog.page(FILTER, limit=4, cursor=cursor)
        seen.extend(entry.key for entry in page.entries)
        cursor = page.next_cursor
    assert seen == [key for key in inside if key != inside[8]]
    assert store.count(FILTER) == 11


def test_the_cwd_index_exists(backend: Backend, store: Store) -> None:
    if backend.name == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'sessions_by_cwd'"
    else:
        sql = (
            "SELECT indexname FROM pg_indexes"
            " WHERE indexname = 'sessions_by_cwd' AND schemaname = current_schema()"
        )
    assert backend.rows(sql) == [("sessions_by_cwd",)]
