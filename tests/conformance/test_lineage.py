"""Lineage: field rules, cycles, root and trace id across a tree, grafts, queries."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import pytest

from clawline.errors import (
    InvalidField,
    LineageCycle,
    LineageError,
    LineageFieldNotSupported,
    LineageImmutable,
)
from clawline.lineage.tree import tree_of
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
S1 = "agent:main:subagent:s1"
S2 = "agent:main:subagent:s2"
S3 = "agent:main:subagent:s3"
D1 = "agent:main:dashboard:d1"
D2 = "agent:main:dashboard:d2"
D3 = "agent:main:dashboard:d3"

SPAWN_ONLY = {
    "spawnedBy": MAIN,
    "spawnDepth": 1,
    "subagentRole": "leaf",
    "subagentControlScope": "children",
    "spawnedWorkspaceDir": "/ws",
    "spawnedCwd": "/ws/cwd",
}
CHANGED = {
    "spawnedBy": "agent:main:other",
    "spawnDepth": 2,
    "subagentRole": "orchestrator",
    "subagentControlScope": "none",
    "spawnedWorkspaceDir": "/elsewhere",
    "spawnedCwd": "/elsewhere/cwd",
}


def _get(store: Store, key: str) -> SessionEntry:
    entry = store.get(key)
    assert entry is not None, key
    return entry


@pytest.mark.parametrize("field", sorted(SPAWN_ONLY))
@pytest.mark.parametrize("key", [MAIN, D1, "agent:main:cron:job", "global"])
def test_spawn_fields_only_on_subagent_and_acp_keys(
    catalog: SessionCatalog, backend: Backend, field: str, key: str
) -> None:
    catalog.patch(key, {})
    before = backend.dump()
    with pytest.raises(LineageFieldNotSupported) as error:
        catalog.patch(key, {field: SPAWN_ONLY[field]})
    assert str(error.value) == f"{field} is only supported for subagent:* or acp:* sessions"
    with pytest.raises(LineageFieldNotSupported):
        catalog.patch(key + ":thread:new", {field: SPAWN_ONLY[field]})
    assert backend.dump() == before


@pytest.mark.parametrize("key", [S1, "agent:codex:acp:a1", "subagent:loose"])
def test_spawn_fields_accepted_on_subagent_and_acp_keys(
    catalog: SessionCatalog, store: Store, key: str
) -> None:
    entry = catalog.patch(key, SPAWN_ONLY).after
    assert entry is not None
    assert _get(store, entry.key) == entry
    assert (entry.spawned_by, entry.spawn_depth, entry.subagent_role) == (MAIN, 1, "leaf")
    assert (entry.subagent_control_scope, entry.spawned_workspace_dir, entry.spawned_cwd) == (
        "children",
        "/ws",
        "/ws/cwd",
    )


@pytest.mark.parametrize("field", sorted(SPAWN_ONLY))
def test_lineage_fields_are_immutable(
    catalog: SessionCatalog, backend: Backend, clock: FakeClock, field: str
) -> None:
    catalog.patch(S1, SPAWN_ONLY)
    before = backend.dump()
    with pytest.raises(LineageImmutable) as error:
        catalog.patch(S1, {field: None})
    assert str(error.value) == f"{field} cannot be cleared once set"
    with pytest.raises(LineageImmutable) as error:
        catalog.patch(S1, {field: CHANGED[field]})
    assert str(error.value) == f"{field} cannot be changed once set"
    assert backend.dump() == before
    clock.advance(1)
    again = catalog.patch(S1, {field: SPAWN_ONLY[field]}).after
    assert again is not None
    assert again.updated_at == clock.now_ms()
    assert again.lineage_path == (MAIN, S1)


def test_resending_spawned_by_in_another_spelling_is_a_no_op(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(S1, {"spawnedBy": MAIN})
    before = backend.dump()
    change = catalog.patch(S1, {"spawnedBy": "AGENT:MAIN:MAIN"})
    assert change.after == change.before
    change = catalog.patch(S1, {"spawnedBy": "main"})
    assert change.after == change.before
    assert backend.dump() == before


def test_parent_session_key_is_immutable_on_any_key(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(D2, {"parentSessionKey": D1})
    before = backend.dump()
    with pytest.raises(LineageImmutable) as error:
        catalog.patch(D2, {"parentSessionKey": None})
    assert str(error.value) == "parentSessionKey cannot be cleared once set"
    with pytest.raises(LineageImmutable) as error:
        catalog.patch(D2, {"parentSessionKey": D3})
    assert str(error.value) == "parentSessionKey cannot be changed once set"
    assert backend.dump() == before


def test_parent_session_key_cannot_replace_spawned_by_as_the_parent(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(S1, {"spawnedBy": MAIN})
    before = backend.dump()
    with pytest.raises(LineageImmutable) as error:
        catalog.patch(S1, {"parentSessionKey": D1})
    assert str(error.value) == f"lineage parent cannot be changed once set ({MAIN})"
    assert backend.dump() == before
    same = catalog.patch(S1, {"parentSessionKey": MAIN}).after
    assert same is not None
    assert (same.parent_session_key, same.lineage_path) == (MAIN, (MAIN, S1))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"spawnedBy": ""}, "invalid spawnedBy: empty"),
        ({"spawnedBy": "   "}, "invalid spawnedBy: empty"),
        ({"spawnedBy": 5}, "invalid spawnedBy: must be a string"),
        ({"parentSessionKey": ""}, "invalid parentSessionKey: empty"),
        ({"spawnDepth": -1}, "invalid spawnDepth (use an integer >= 0)"),
        ({"spawnDepth": "1"}, "invalid spawnDepth (use an integer >= 0)"),
        ({"spawnDepth": True}, "invalid spawnDepth (use an integer >= 0)"),
        ({"spawnDepth": 1.5}, "invalid spawnDepth (use an integer >= 0)"),
        ({"subagentRole": "boss"}, 'invalid subagentRole (use "orchestrator" or "leaf")'),
        (
            {"subagentControlScope": "all"},
            'invalid subagentControlScope (use "children" or "none")',
        ),
        ({"spawnedWorkspaceDir": ""}, "invalid spawnedWorkspaceDir: empty"),
        ({"spawnedCwd": " "}, "invalid spawnedCwd: empty"),
        ({"spawnedCwd": 3}, "invalid spawnedCwd: must be a string"),
    ],
)
def test_invalid_lineage_values(
    catalog: SessionCatalog, backend: Backend, changes: dict[str, object], message: str
) -> None:
    catalog.patch(S1, {})
    before = backend.dump()
    for key in (S1, S2):
        with pytest.raises(InvalidField) as error:
            catalog.patch(key, changes)
        assert str(error.value) == message
    assert backend.dump() == before


def test_spawn_depth_zero_is_valid(catalog: SessionCatalog) -> None:
    entry = catalog.patch(S1, {"spawnDepth": 0}).after
    assert entry is not None
    assert entry.spawn_depth == 0


def test_self_parent_is_a_cycle(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch(D1, {})
    before = backend.dump()
    with pytest.raises(LineageCycle) as error:
        catalog.patch(D1, {"parentSessionKey": D1})
    assert str(error.value) == f"lineage cycle: {D1} cannot be its own parent"
    with pytest.raises(LineageCycle) as error:
        catalog.patch(S1, {"spawnedBy": S1})
    assert str(error.value) == f"lineage cycle: {S1} cannot be its own parent"
    assert backend.dump() == before


def test_cycle_through_parent_session_key(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch(D1, {})
    catalog.patch(D2, {"parentSessionKey": D1})
    catalog.patch(D3, {"parentSessionKey": D2})
    before = backend.dump()
    with pytest.raises(LineageCycle) as error:
        catalog.patch(D1, {"parentSessionKey": D3})
    assert str(error.value) == f"lineage cycle: {D3} already descends from {D1}"
    with pytest.raises(LineageCycle) as error:
        catalog.patch(D1, {"parentSessionKey": D2, "displayName": "never written"})
    assert str(error.value) == f"lineage cycle: {D2} already descends from {D1}"
    assert backend.dump() == before


def test_cycle_through_spawned_by(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch(S1, {})
    catalog.patch(S2, {"spawnedBy": S1})
    catalog.patch(S3, {"spawnedBy": S2})
    before = backend.dump()
    with pytest.raises(LineageCycle) as error:
        catalog.patch(S1, {"spawnedBy": S3, "label": "never"})
    assert str(error.value) == f"lineage cycle: {S3} already descends from {S1}"
    assert backend.dump() == before


def test_cycle_through_an_ancestor_that_does_not_exist(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(S2, {"spawnedBy": S1})  # S1 never created: S2's path is (S1, S2)
    before = backend.dump()
    with pytest.raises(LineageCycle) as error:
        catalog.patch(S1, {"spawnedBy": S2})
    assert str(error.value) == f"lineage cycle: {S2} already descends from {S1}"
    assert backend.dump() == before


def test_cycle_through_a_deleted_ancestor(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch(D1, {})
    catalog.patch(D2, {"parentSessionKey": D1})
    catalog.delete(D1)
    before = backend.dump()
    with pytest.raises(LineageCycle):
        catalog.patch(D1, {"parentSessionKey": D2})
    assert backend.dump() == before


def test_root_and_trace_are_shared_by_a_tree(catalog: SessionCatalog, store: Store) -> None:
    root = catalog.patch(MAIN, {}).after
    assert root is not None
    catalog.patch(S1, {"spawnedBy": MAIN})
    catalog.patch(S2, {"spawnedBy": S1})
    catalog.patch(D1, {"parentSessionKey": S2})
    for key, path in [(S1, (MAIN, S1)), (S2, (MAIN, S1, S2)), (D1, (MAIN, S1, S2, D1))]:
        entry = _get(store, key)
        assert entry.lineage_path == path
        assert entry.root_session_key == MAIN
        assert entry.trace_id == root.trace_id
        assert entry.lineage.depth == len(path) - 1
        assert entry.lineage_parent == path[-2]


def test_explicit_trace_id_cannot_override_a_parent(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(MAIN, {})
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.patch(S1, {"spawnedBy": MAIN, "traceId": "ab" * 16})
    assert str(error.value) == "traceId is inherited from the parent session"
    assert backend.dump() == before


def test_missing_parent_tree_is_adopted_when_the_parent_is_created(
    catalog: SessionCatalog, store: Store
) -> None:
    first = catalog.patch(S1, {"spawnedBy": MAIN}).after
    assert first is not None
    assert (first.root_session_key, first.lineage_path) == (MAIN, (MAIN, S1))
    second = catalog.patch(S2, {"spawnedBy": MAIN}).after
    assert second is not None
    assert second.trace_id == first.trace_id
    root = catalog.patch(MAIN, {}).after
    assert root is not None
    assert root.trace_id == first.trace_id
    assert root.lineage_path == (MAIN,)
    assert {e.key for e in store.tree(MAIN)} == {MAIN, S1, S2}


def test_created_root_must_agree_with_its_tree_trace(
    catalog: SessionCatalog, backend: Backend
) -> None:
    child = catalog.patch(S1, {"spawnedBy": MAIN}).after
    assert child is not None
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.patch(MAIN, {"traceId": "cd" * 16})
    assert str(error.value) == "traceId is inherited from the existing tree"
    assert backend.dump() == before
    root = catalog.patch(MAIN, {"traceId": child.trace_id}).after
    assert root is not None
    assert root.trace_id == child.trace_id


def test_graft_moves_a_whole_subtree(catalog: SessionCatalog, store: Store) -> None:
    base = catalog.patch(MAIN, {}).after
    assert base is not None
    catalog.patch(D1, {})
    catalog.patch(D2, {"parentSessionKey": D1})
    catalog.patch(S1, {"spawnedBy": D2})
    catalog.patch(D3, {})  # an unrelated root stays as it is
    old_trace = _get(store, D1).trace_id
    assert old_trace != base.trace_id
    assert _get(store, S1).lineage_path == (D1, D2, S1)
    grafted = catalog.patch(D1, {"parentSessionKey": MAIN}).after
    assert grafted is not None
    assert grafted.lineage_path == (MAIN, D1)
    for key, path in [(D1, (MAIN, D1)), (D2, (MAIN, D1, D2)), (S1, (MAIN, D1, D2, S1))]:
        entry = _get(store, key)
        assert entry.lineage_path == path
        assert entry.root_session_key == MAIN
        assert entry.trace_id == base.trace_id
    assert _get(store, D3).lineage_path == (D3,)
    assert [e.key for e in store.tree(MAIN)] == [MAIN, D1, D2, S1]
    assert store.tree(D1) == []


def test_graft_under_a_missing_parent_takes_that_trees_trace(
    catalog: SessionCatalog, store: Store
) -> None:
    other = catalog.patch(S2, {"spawnedBy": MAIN}).after  # MAIN's tree exists without MAIN
    assert other is not None
    catalog.patch(D1, {})
    catalog.patch(D2, {"parentSessionKey": D1})
    catalog.patch(D1, {"parentSessionKey": MAIN})
    assert _get(store, D2).lineage_path == (MAIN, D1, D2)
    assert {_get(store, k).trace_id for k in (S2, D1, D2)} == {other.trace_id}


def test_delete_never_cascades(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch(MAIN, {})
    catalog.patch(S1, {"spawnedBy": MAIN})
    catalog.patch(S2, {"spawnedBy": S1})
    catalog.patch(S3, {"spawnedBy": S2})
    kept = {key: _get(store, key) for key in (S2, S3)}
    catalog.delete(S1)
    for key, entry in kept.items():
        assert store.get(key) == entry
    assert _get(store, S3).lineage_path == (MAIN, S1, S2, S3)
    assert [e.key for e in store.children(S1)] == [S2]
    assert [e.key for e in store.descendants((MAIN,))] == [S2, S3]
    assert [e.key for e in store.tree(MAIN)] == [MAIN, S2, S3]
    node = tree_of(store, S3)
    assert node is not None
    drawn = [(depth, n.key, n.entry is None) for depth, n in node.walk()]
    assert drawn == [(0, MAIN, False), (1, S1, True), (2, S2, False), (3, S3, False)]


def test_children_descendants_and_tree(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    a = "agent:main:subagent:a"
    a_x = "agent:main:subagent:x"
    a_dash = "agent:main:subagent:a-b"  # sorts after "a" + separator: depth first still holds
    a_x_y = "agent:main:subagent:y"
    catalog.patch(MAIN, {})
    for key, parent in [(a, MAIN), (a_x, a), (a_dash, MAIN), (a_x_y, a_x)]:
        clock.advance(1)
        catalog.patch(key, {"spawnedBy": parent})
    clock.advance(1)
    catalog.patch(D1, {"parentSessionKey": MAIN})
    clock.advance(1)
    catalog.patch(a, {"displayName": "touched"})  # newest child now
    assert [e.key for e in store.children(MAIN)] == [a, D1, a_dash]
    assert [e.key for e in store.children(a)] == [a_x]
    assert store.children(a_x_y) == []
    assert [e.key for e in store.descendants((MAIN,))] == [D1, a, a_x, a_x_y, a_dash]
    assert [e.key for e in store.descendants((MAIN, a))] == [a_x, a_x_y]
    assert store.descendants((MAIN, a, a_x, a_x_y)) == []
    assert [e.key for e in store.tree(MAIN)] == [MAIN, D1, a, a_x, a_x_y, a_dash]
    node = tree_of(store, a_x_y)
    assert node is not None
    assert node.size() == 6


def test_children_by_parent_session_key_over_spawned_by(
    catalog: SessionCatalog, store: Store
) -> None:
    catalog.patch(S1, {"spawnedBy": MAIN, "parentSessionKey": D1})
    entry = _get(store, S1)
    assert entry.lineage_path == (D1, S1)
    assert [e.key for e in store.children(D1)] == [S1]
    assert store.children(MAIN) == []


def test_lineage_path_size_is_bounded(catalog: SessionCatalog, backend: Backend) -> None:
    long_keys = [f"agent:main:dashboard:{i}{'x' * 480}" for i in range(5)]
    catalog.patch(long_keys[0], {})
    for parent, child in itertools.pairwise(long_keys[:4]):
        catalog.patch(child, {"parentSessionKey": parent})
    before = backend.dump()
    with pytest.raises(LineageError) as error:
        catalog.patch(long_keys[4], {"parentSessionKey": long_keys[3]})
    assert str(error.value) == ("lineage too deep: the path from the root would exceed 2048 bytes")
    assert backend.dump() == before


def test_graft_that_would_make_a_descendant_path_too_long(
    catalog: SessionCatalog, backend: Backend
) -> None:
    keys = [f"agent:main:dashboard:{i}{'y' * 490}" for i in range(4)]
    catalog.patch(keys[1], {})
    catalog.patch(keys[2], {"parentSessionKey": keys[1]})
    catalog.patch(keys[3], {"parentSessionKey": keys[2]})
    catalog.patch(keys[0], {})
    before = backend.dump()
    with pytest.raises(LineageError):
        catalog.patch(keys[1], {"parentSessionKey": keys[0]})
    assert backend.dump() == before


# --- regressions: a late parent adopts earlier children; cycles through deleted sessions ---


def test_session_created_with_a_parent_adopts_earlier_children(
    catalog: SessionCatalog, store: Store
) -> None:
    catalog.patch(MAIN, {})
    catalog.patch(S2, {"spawnedBy": S1})  # S1 does not exist yet: S2's path is (S1, S2)
    catalog.patch(S1, {"spawnedBy": MAIN})
    s1, s2 = _get(store, S1), _get(store, S2)
    assert s2.lineage_path == (MAIN, S1, S2)
    assert (s2.root_session_key, s2.trace_id) == (MAIN, s1.trace_id)


def test_parent_below_a_deleted_descendant_is_a_cycle(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(D1, {})
    catalog.patch(S1, {"spawnedBy": D1})
    catalog.patch(S2, {"spawnedBy": S1})
    catalog.delete(S1)
    before = backend.dump()
    with pytest.raises(LineageCycle):  # S2 still descends from D1 through S1
        catalog.patch(D1, {"parentSessionKey": S1})
    assert backend.dump() == before
