"""Keyset paging while the catalog changes underneath the walk.

A walk with ``catalog.page()`` must see every row that exists when it starts and is not touched
while it runs exactly once, in listing order, however rows around it are updated, created or
deleted between pages. A row that is touched moves to the front of the order (its ``updatedAt``
grows), so it is seen at most once: the walk has already passed the front.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend


@dataclass
class Walk:
    """What a walk saw, and which rows were written while it ran."""

    seen: list[tuple[int, str]] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    pages: int = 0


def _seed(
    catalog: SessionCatalog,
    clock: FakeClock,
    count: int,
    rng: random.Random,
    agents: tuple[str, ...] = ("main",),
) -> list[str]:
    keys = []
    for i in range(count):
        if rng.random() < 0.5:
            clock.advance(rng.choice([1, 1, 2, 5]))  # many rows share an updatedAt
        agent = rng.choice(agents)
        keys.append(catalog.patch(f"agent:{agent}:s{i:04d}", {}).after.key)  # type: ignore[union-attr]
    return keys


def _check(walk: Walk, initial: list[str], query_all: list[str]) -> None:
    seen_keys = [key for _, key in walk.seen]
    assert len(seen_keys) == len(set(seen_keys)), "a row was seen twice"
    untouched = [k for k in initial if k not in walk.touched and k not in walk.deleted]
    missing = set(untouched) - set(seen_keys)
    assert not missing, f"rows skipped: {sorted(missing)}"
    for before, after in zip(walk.seen, walk.seen[1:], strict=False):
        assert before > after, f"the walk went out of listing order: {before} then {after}"
    assert set(seen_keys) <= set(initial) | walk.touched
    assert set(untouched) <= set(query_all)


def _walk_with_writes(
    catalog: SessionCatalog,
    clock: FakeClock,
    keys: list[str],
    rng: random.Random,
    *,
    page_size: int,
    writes_per_page: int,
    query: SessionQuery | None = None,
) -> Walk:
    walk = Walk()
    created = 0
    cursor: str | None = None
    while True:
        page = catalog.page(query, limit=page_size, cursor=cursor)
        walk.pages += 1
        assert walk.pages < 1000, "the walk does not end"
        walk.seen.extend((e.updated_at, e.key) for e in page.entries)
        cursor = page.next_cursor
        if cursor is None:
            return walk
        for _ in range(writes_per_page):
            action = rng.random()
            if rng.random() < 0.7:
                clock.advance(rng.choice([0, 1, 3]))
            if action < 0.6:
                key = rng.choice(keys)
                if key in walk.deleted:
                    continue
                catalog.patch(key, {"displayName": f"v{rng.random()}"})
                walk.touched.add(key)
            elif action < 0.85:
                created += 1
                key = f"agent:main:new{created:04d}-{rng.randrange(10_000)}"
                catalog.patch(key, {})
                walk.touched.add(key)
            else:
                key = rng.choice(keys)
                if key not in walk.deleted and key not in walk.touched:
                    catalog.delete(key)
                    walk.deleted.add(key)


def test_keyset_walk_while_rows_change(catalog: SessionCatalog, clock: FakeClock) -> None:
    rng = random.Random(20240611)
    keys = _seed(catalog, clock, 120, rng)
    walk = _walk_with_writes(catalog, clock, keys, rng, page_size=7, writes_per_page=4)
    assert walk.pages > 10
    assert len(walk.touched) > 20
    assert walk.deleted
    final = [e.key for e in catalog.store.iter_all(SessionQuery())]
    _check(walk, keys, final)
    untouched = len([k for k in keys if k not in walk.touched and k not in walk.deleted])
    assert untouched > 40  # the walk really had rows to lose


def test_keyset_walk_with_a_filter_while_rows_change(
    catalog: SessionCatalog, clock: FakeClock
) -> None:
    rng = random.Random(7)
    keys = _seed(catalog, clock, 80, rng, agents=("main", "ops"))
    query = SessionQuery(agent_id="main")
    walk = _walk_with_writes(catalog, clock, keys, rng, page_size=5, writes_per_page=3, query=query)
    final = [e.key for e in catalog.store.iter_all(query)]
    mains = [k for k in keys if k.startswith("agent:main:")]
    assert 20 < len(mains) < 60
    _check(walk, mains, final)
    assert all(key.startswith("agent:main:") for _, key in walk.seen)


def test_touching_the_row_under_the_cursor(catalog: SessionCatalog, clock: FakeClock) -> None:
    keys = [catalog.patch(f"agent:main:k{i}", {}).after.key for i in range(6)]  # type: ignore[union-attr]
    first = catalog.page(limit=3)
    assert [e.key for e in first.entries] == keys[::-1][:3]
    clock.advance(1)
    catalog.patch(first.entries[-1].key, {"displayName": "moved to the front"})
    rest = catalog.page(limit=10, cursor=first.next_cursor)
    assert [e.key for e in rest.entries] == keys[::-1][3:]


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(0, 40),
    page_size=st.integers(1, 9),
    writes_per_page=st.integers(0, 5),
)
def test_keyset_walk_property(
    backend: Backend, seed: int, rows: int, page_size: int, writes_per_page: int
) -> None:
    backend.reset()
    clock = FakeClock()
    catalog = SessionCatalog(backend.store, clock=clock)
    rng = random.Random(seed)
    keys = _seed(catalog, clock, rows, rng)
    walk = _walk_with_writes(
        catalog, clock, keys, rng, page_size=page_size, writes_per_page=writes_per_page
    )
    final = [e.key for e in backend.store.iter_all(SessionQuery())]
    _check(walk, keys, final)
    if writes_per_page == 0:
        assert [key for _, key in walk.seen] == final


def _warm(catalog: SessionCatalog) -> None:
    """Read every row twice so the store's entry cache is warm and ``page`` reads revisions
    first (the two-query path)."""
    for _ in range(2):
        list(catalog.store.iter_all(SessionQuery(), page_size=50))
    assert catalog.store._entries.warm  # type: ignore[attr-defined]


def test_keyset_walk_on_a_warm_cache_while_rows_change(
    catalog: SessionCatalog, clock: FakeClock
) -> None:
    rng = random.Random(99)
    keys = _seed(catalog, clock, 120, rng)
    _warm(catalog)
    walk = _walk_with_writes(catalog, clock, keys, rng, page_size=7, writes_per_page=4)
    assert walk.pages > 10
    final = [e.key for e in catalog.store.iter_all(SessionQuery())]
    _check(walk, keys, final)


def test_warm_reads_reuse_unchanged_entries_and_see_every_change(
    catalog: SessionCatalog, clock: FakeClock
) -> None:
    keys = [catalog.patch(f"agent:main:w{i}", {"label": f"w{i}"}).after.key for i in range(8)]  # type: ignore[union-attr]
    catalog.patch("agent:main:subagent:c", {"spawnedBy": "agent:main:orphan-root"})
    _warm(catalog)
    before = {e.key: e for e in catalog.page(limit=50).entries}
    clock.advance(1)
    catalog.patch(keys[0], {"displayName": "changed"})
    catalog.delete(keys[1])
    catalog.patch(keys[1], {"label": "born again"})  # same key, new row
    catalog.patch("agent:main:orphan-root", {"parentSessionKey": "agent:main:top"})  # grafts
    after = {e.key: e for e in catalog.page(limit=50).entries}
    assert after[keys[0]].display_name == "changed"
    assert after[keys[1]].label == "born again"
    assert after["agent:main:subagent:c"].lineage_path == (
        "agent:main:top",
        "agent:main:orphan-root",
        "agent:main:subagent:c",
    )
    for key in keys[2:]:
        assert after[key] is before[key], "an unchanged row is the same entry object"
    assert after[keys[0]] is not before[keys[0]]
