"""Lineage invariants under random sequences of catalog operations (SQLite in a tmp dir).

A hypothesis state machine creates roots and children (of existing or missing parents), sets
parents later on existing roots, attempts cycles (also through deleted sessions still named on a
path) and deletes sessions; after every step it checks the lineage invariants over the whole
store, and that a refused operation changed nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from clawline.errors import LineageCycle
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery, encode_path
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

SUBAGENTS = [f"agent:main:subagent:s{i}" for i in range(6)] + ["agent:ops:subagent:o1"]
DASHBOARDS = [f"agent:main:dashboard:d{i}" for i in range(4)] + ["agent:ops:dashboard:e1"]
POOL = SUBAGENTS + DASHBOARDS
KEYS = st.sampled_from(POOL)
INDEX = st.integers(min_value=0, max_value=1_000)

Snapshot = dict[str, SessionEntry]


def parent_change(child: str, parent: str) -> dict[str, object]:
    """The change that makes ``parent`` the lineage parent of ``child``."""
    if ":subagent:" in child:
        return {"spawnedBy": parent, "spawnDepth": 1, "subagentRole": "leaf"}
    return {"parentSessionKey": parent}


class LineageMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="clawline-lineage-"))
        self.store = SQLiteStore(self.dir / "sessions.db")
        self.clock = FakeClock()
        self.catalog = SessionCatalog(self.store, clock=self.clock)
        self.deleted_ever: set[str] = set()

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- helpers -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every row, read by a keyset walk that must see each row exactly once."""
        walked = list(self.store.iter_all(SessionQuery(), page_size=3))
        rows = {entry.key: entry for entry in walked}
        assert len(rows) == len(walked) == self.store.count(SessionQuery()), "keyset walk broken"
        return rows

    def subtree(self, rows: Snapshot, path: tuple[str, ...]) -> list[SessionEntry]:
        n = len(path)
        return [e for e in rows.values() if len(e.lineage_path) > n and e.lineage_path[:n] == path]

    def set_parent(self, key: str, parent: str) -> None:
        """Make ``parent`` the parent of ``key`` (new or an existing root) and check the outcome."""
        self.clock.advance(1)
        before = self.snapshot()
        current = before.get(key)
        assert current is None or current.lineage_parent is None
        old_path = current.lineage_path if current else (key,)
        below = self.subtree(before, old_path)
        parent_row = before.get(parent)
        parent_path = parent_row.lineage_path if parent_row else (parent,)
        below_keys = {k for e in below for k in e.lineage_path[len(old_path) :]}
        # a loop: the parent is the session itself, below it, or named on a path below it
        # (a deleted session's key stays on its descendants' paths)
        if parent == key or key in parent_path or below_keys & set(parent_path):
            with pytest.raises(LineageCycle):
                self.catalog.patch(key, parent_change(key, parent))
            assert self.snapshot() == before, "a refused change wrote something"
            event("refused: cycle")
            return

        change = self.catalog.patch(key, parent_change(key, parent))
        after = self.snapshot()
        entry = after[key]
        assert change.after == entry, "the catalog returned another entry than it stored"
        new_path = (*parent_path, key)
        assert entry.lineage_path == new_path
        assert entry.lineage_parent == parent
        if parent_row is not None:
            assert entry.trace_id == parent_row.trace_id
        moved = {e.key for e in below}
        for row in below:
            grafted = after[row.key]
            assert grafted.lineage_path == new_path + row.lineage_path[len(old_path) :]
            assert grafted.trace_id == entry.trace_id
        untouched = {k: v for k, v in after.items() if k != key and k not in moved}
        assert untouched == {k: v for k, v in before.items() if k != key and k not in moved}
        event("parent set" if current else "child created")
        if below:
            event("subtree moved")

    # --- what each rule can act on ------------------------------------------------------

    def parentless(self) -> list[str]:
        return sorted(k for k, e in self.snapshot().items() if e.lineage_parent is None)

    def parentless_with_children(self) -> list[str]:
        rows = self.snapshot()
        return [k for k in self.parentless() if self.subtree(rows, rows[k].lineage_path)]

    def absent(self) -> list[str]:
        rows = self.snapshot()
        return [k for k in POOL if k not in rows]

    def missing_on_paths(self) -> list[str]:
        rows = self.snapshot()
        return sorted({k for e in rows.values() for k in e.lineage_path if k not in rows})

    def loops_through_missing(self) -> list[tuple[str, str]]:
        """(parentless row, missing key on a path below it): making it the parent is a loop."""
        rows = self.snapshot()
        return sorted(
            {
                (key, missing)
                for key in self.parentless()
                for row in self.subtree(rows, rows[key].lineage_path)
                for missing in row.lineage_path[len(rows[key].lineage_path) :]
                if missing not in rows
            }
        )

    def loops_through_rows(self) -> list[tuple[str, str]]:
        """(parentless ancestor, a row below it): making the row the parent is a loop."""
        rows = self.snapshot()
        return sorted(
            (ancestor, entry.key)
            for entry in rows.values()
            for ancestor in entry.lineage_path[:-1]
            if ancestor in rows and rows[ancestor].lineage_parent is None
        )

    def inner(self) -> list[str]:
        """Rows with both a parent and children."""
        rows = self.snapshot()
        return sorted(k for k, e in rows.items() if e.lineage_parent and self.store.children(k))

    # --- rules ---------------------------------------------------------------------------

    @initialize(chain=st.lists(KEYS, max_size=4, unique=True))
    def seed_chain(self, chain: list[str]) -> None:
        """Start from a chain root -> child -> grandchild ... so deep trees are common."""
        for depth, key in enumerate(chain):
            if depth == 0:
                self.create_root(key)
            else:
                self.set_parent(key, chain[depth - 1])

    @rule(key=KEYS)
    def create_root(self, key: str) -> None:
        self.clock.advance(1)
        before = self.snapshot()
        if key in before:
            return
        change = self.catalog.patch(key, {})
        assert change.created
        after = self.snapshot()
        assert change.after == after[key], "the catalog returned another entry than it stored"
        assert after[key].lineage_path == (key,)
        assert {k: v for k, v in after.items() if k != key} == before
        trees = {e.trace_id for e in before.values() if e.root_session_key == key}
        if trees:
            assert trees == {after[key].trace_id}, "a new root adopts its orphans' trace"

    @precondition(lambda self: self.absent())
    @rule(index=INDEX, parent=KEYS)
    def create_child(self, index: int, parent: str) -> None:
        """A new session whose parent may exist or not (``parent`` is any key of the pool)."""
        absent = self.absent()
        self.set_parent(absent[index % len(absent)], parent)

    @precondition(lambda self: self.absent() and self.snapshot())
    @rule(index=INDEX, pick=INDEX)
    def create_child_of_existing(self, index: int, pick: int) -> None:
        absent, existing = self.absent(), sorted(self.snapshot())
        self.set_parent(absent[index % len(absent)], existing[pick % len(existing)])

    @precondition(lambda self: self.parentless())
    @rule(index=INDEX, parent=KEYS)
    def set_parent_later(self, index: int, parent: str) -> None:
        """An existing root (preferably one with children) gets a parent."""
        roots = self.parentless_with_children() or self.parentless()
        self.set_parent(roots[index % len(roots)], parent)

    @precondition(lambda self: self.parentless() and self.missing_on_paths())
    @rule(index=INDEX, pick=INDEX)
    def set_parent_to_missing_key(self, index: int, pick: int) -> None:
        """Parents that are on some path but not in the store (never created, or deleted)."""
        roots, missing = self.parentless(), self.missing_on_paths()
        self.set_parent(roots[index % len(roots)], missing[pick % len(missing)])

    @precondition(lambda self: self.loops_through_missing())
    @rule(index=INDEX)
    def attempt_cycle_through_missing(self, index: int) -> None:
        options = self.loops_through_missing()
        self.set_parent(*options[index % len(options)])

    @precondition(lambda self: self.loops_through_rows())
    @rule(index=INDEX)
    def attempt_cycle(self, index: int) -> None:
        ancestor, descendant = self.loops_through_rows()[index % len(self.loops_through_rows())]
        self.clock.advance(1)
        before = self.snapshot()
        with pytest.raises(LineageCycle):
            self.catalog.patch(ancestor, parent_change(ancestor, descendant))
        assert self.snapshot() == before, "a refused cycle wrote something"

    def delete_one(self, key: str) -> None:
        before = self.snapshot()
        self.catalog.delete(key)
        self.deleted_ever.add(key)
        assert self.snapshot() == {k: v for k, v in before.items() if k != key}

    @precondition(lambda self: self.snapshot())
    @rule(index=INDEX)
    def delete(self, index: int) -> None:
        existing = sorted(self.snapshot())
        self.delete_one(existing[index % len(existing)])

    @precondition(lambda self: self.inner())
    @rule(index=INDEX)
    def delete_inner(self, index: int) -> None:
        """Delete a session that has both a parent and children (never cascades)."""
        self.delete_one(self.inner()[index % len(self.inner())])

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def lineage_is_consistent(self) -> None:
        rows = self.snapshot()
        traces: dict[str, set[str]] = {}
        for key, entry in rows.items():
            path = entry.lineage_path
            assert len(set(path)) == len(path), f"{key} repeats a key in its path {path}"
            assert path[-1] == key
            assert entry.root_session_key == path[0]
            assert entry.lineage.depth == len(path) - 1
            assert entry.lineage.root == path[0]
            assert entry.lineage.parent == (path[-2] if len(path) > 1 else None)
            parent = entry.lineage_parent
            if parent is None:
                assert path == (key,), f"{key} has no parent but path {path}"
            else:
                assert path[-2] == parent
                parent_row = rows.get(parent)
                if parent_row is not None and not self.deleted_ever & set(path):
                    assert parent_row.lineage_path == path[:-1], f"{key} is off its parent's path"
            traces.setdefault(entry.root_session_key, set()).add(entry.trace_id)
        for root, ids in traces.items():
            assert len(ids) == 1, f"tree {root} has several trace ids {ids}"

    @invariant()
    def queries_agree_with_rows(self) -> None:
        rows = self.snapshot()
        for key in POOL:
            children = self.store.children(key)
            assert {e.key for e in children} == {
                k for k, e in rows.items() if e.lineage_parent == key
            }
            order = [(e.updated_at, e.key) for e in children]
            assert order == sorted(order, reverse=True)
            tree = self.store.tree(key)
            assert {e.key for e in tree} == {
                k for k, e in rows.items() if e.root_session_key == key
            }
        for entry in rows.values():
            found = self.store.descendants(entry.lineage_path)
            assert {e.key for e in found} == {e.key for e in self.subtree(rows, entry.lineage_path)}
            encoded = [encode_path(e.lineage_path) for e in found]
            assert encoded == sorted(encoded)


LineageMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLineage = LineageMachine.TestCase


# --- examples (the first two were bugs found by the machine above) ----------------------------


@pytest.fixture
def catalog(tmp_path: Path) -> SessionCatalog:
    return SessionCatalog(SQLiteStore(tmp_path / "sessions.db"), clock=FakeClock())


X, Y, Z = "agent:main:dashboard:x", "agent:main:subagent:y", "agent:main:subagent:z"


def test_parent_below_a_deleted_descendant_is_a_cycle(catalog: SessionCatalog) -> None:
    catalog.patch(X, {})
    catalog.patch(Y, {"spawnedBy": X})
    catalog.patch(Z, {"spawnedBy": Y})
    catalog.delete(Y)
    # Z still descends from X through Y; making Y (missing) X's parent closes a loop
    with pytest.raises(LineageCycle):
        catalog.patch(X, {"parentSessionKey": Y})
    z = catalog.require(Z)
    assert len(set(z.lineage_path)) == len(z.lineage_path), z.lineage_path


def test_session_created_with_a_parent_adopts_earlier_children(catalog: SessionCatalog) -> None:
    catalog.patch(X, {})
    catalog.patch(Z, {"spawnedBy": Y})  # Y does not exist yet
    catalog.patch(Y, {"spawnedBy": X})
    y, z = catalog.require(Y), catalog.require(Z)
    assert z.lineage_path == (*y.lineage_path, Z)
    assert z.trace_id == y.trace_id
    assert {e.key for e in catalog.store.descendants(catalog.require(X).lineage_path)} == {Y, Z}


def test_spawned_by_alias_uses_the_catalogs_default_agent(tmp_path: Path) -> None:
    catalog = SessionCatalog(SQLiteStore(tmp_path / "s.db"), default_agent_id="ops")
    entry = catalog.patch("agent:ops:subagent:q", {"spawnedBy": "main"}).after
    assert entry is not None
    assert entry.spawned_by == catalog.main_session_key == "agent:ops:main"
