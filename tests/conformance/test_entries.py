"""Creating, patching, reading, deleting and resetting sessions, on every backend."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import InvalidField, InvalidInput, InvalidSessionKey, SessionNotFound
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
SUB = "agent:main:subagent:s1"


def test_patch_creates_a_session_with_defaults(catalog: SessionCatalog, clock: FakeClock) -> None:
    change = catalog.patch("main", {})
    entry = change.after
    assert change.created
    assert change.before is None
    assert entry is not None
    assert entry.key == MAIN
    assert entry.created_at == entry.updated_at == clock.now_ms()
    assert entry.root_session_key == MAIN
    assert entry.lineage_path == (MAIN,)
    assert len(entry.trace_id) == 32
    assert entry.extra == {}
    assert entry.plugin_extensions == {}
    assert catalog.store.get(MAIN) == entry


def test_created_session_has_an_empty_open_transcript(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    entry = catalog.patch("agent:main:x", {}).after
    assert entry is not None
    info = store.transcript_info(entry.session_id)
    assert info is not None
    assert (info.session_key, info.created_at, info.last_seq) == ("agent:main:x", clock.now_ms(), 0)
    assert info.archived_at is None


def test_patch_updates_and_touches(catalog: SessionCatalog, clock: FakeClock) -> None:
    created = catalog.patch("agent:main:x", {"displayName": "One", "status": "running"}).after
    clock.advance(5)
    change = catalog.patch("agent:main:x", {"displayName": "Two"})
    assert change.before == created
    assert not change.created
    after = change.after
    assert after is not None
    assert created is not None
    assert after.display_name == "Two"
    assert after.status == "running"
    assert after.updated_at == created.updated_at + 5
    assert after.created_at == created.created_at
    assert after.session_id == created.session_id
    assert catalog.store.get("agent:main:x") == after


def test_patch_without_touch_keeps_updated_at(catalog: SessionCatalog, clock: FakeClock) -> None:
    created = catalog.patch("agent:main:x", {}).after
    clock.advance(100)
    after = catalog.patch("agent:main:x", {"displayName": "quiet"}, touch=False).after
    assert after is not None
    assert created is not None
    assert after.updated_at == created.updated_at
    assert catalog.store.get("agent:main:x") == after


def test_updated_at_never_goes_back(catalog: SessionCatalog, clock: FakeClock) -> None:
    clock.advance(1000)
    catalog.patch("agent:main:x", {})
    clock.set(clock.now_ms() - 500)
    entry = catalog.patch("agent:main:x", {"displayName": "late"}).after
    assert entry is not None
    assert entry.updated_at == clock.now_ms() + 500


def test_patch_with_create_false_refuses_a_missing_session(
    catalog: SessionCatalog, backend: Backend
) -> None:
    before = backend.dump()
    with pytest.raises(SessionNotFound) as error:
        catalog.patch("agent:main:ghost", {"displayName": "x"}, create=False)
    assert str(error.value) == "session not found: agent:main:ghost"
    assert backend.dump() == before


def test_upsert_round_trip_through_a_second_store_object(
    catalog: SessionCatalog, backend: Backend
) -> None:
    entry = catalog.patch(
        SUB,
        {
            "spawnedBy": MAIN,
            "spawnDepth": 1,
            "subagentRole": "leaf",
            "subagentControlScope": "none",
            "spawnedWorkspaceDir": "/work",
            "spawnedCwd": "/work/sub",
            "label": "Ünïcode label ✓",
            "displayName": "Display",
            "status": "running",
            "startedAt": 1,
            "endedAt": 2,
            "model": "gpt",
            "nested": {"list": [1, 2.5, "three", None, True], "deep": {"x": {}}},
            "pluginExtensions": {"plug": {"ns": {"a": [1]}}},
        },
    ).after
    assert entry is not None
    reopened = backend.open()
    assert reopened.get(SUB) == entry
    assert reopened.get(SUB).to_json() == entry.to_json()  # type: ignore[union-attr]


def test_keys_are_canonicalised(catalog: SessionCatalog) -> None:
    catalog.patch("Agent:Main:Dashboard:ABC", {})
    catalog.patch("some-thing", {})
    assert catalog.get("agent:main:dashboard:abc") is not None
    assert catalog.get("agent:main:some-thing") is not None
    assert catalog.get("MAIN") is None
    with pytest.raises(InvalidSessionKey) as error:
        catalog.patch("agent:main:bad key", {})
    assert str(error.value) == (
        "invalid session key: whitespace or control characters are not allowed: "
        "'agent:main:bad key'"
    )


def test_get_many(catalog: SessionCatalog, store: Store) -> None:
    keys = [f"agent:main:k{i}" for i in range(7)]
    for key in keys:
        catalog.patch(key, {})
    found = store.get_many([keys[0], keys[3], keys[3], "agent:main:missing", keys[6]])
    assert set(found) == {keys[0], keys[3], keys[6]}
    assert all(found[key] == store.get(key) for key in found)
    assert store.get_many([]) == {}
    many = store.get_many([f"agent:main:k{i % 7}" for i in range(1200)])
    assert set(many) == set(keys)


def test_extra_fields_set_replace_and_remove(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:x", {"model": "a", "thinkingLevel": "high", "n": 1})
    catalog.patch("agent:main:x", {"model": "b", "thinkingLevel": None})
    entry = store.get("agent:main:x")
    assert entry is not None
    assert entry.extra == {"model": "b", "n": 1}
    assert entry.to_json()["model"] == "b"
    catalog.patch("agent:main:x", {"model": None, "n": None})
    cleared = store.get("agent:main:x")
    assert cleared is not None
    assert cleared.extra == {}


def test_plugin_extensions_merge_and_remove(catalog: SessionCatalog, store: Store) -> None:
    key = "agent:main:x"
    catalog.patch(key, {"pluginExtensions": {"p1": {"a": 1, "b": {"deep": [1]}}, "p2": {"z": 0}}})
    catalog.patch(key, {"pluginExtensions": {"p1": {"c": "new", "a": None}}})
    entry = store.get(key)
    assert entry is not None
    assert entry.plugin_extensions == {"p1": {"b": {"deep": [1]}, "c": "new"}, "p2": {"z": 0}}
    catalog.patch(key, {"pluginExtensions": {"p2": None}})
    catalog.patch(key, {"pluginExtensions": {"p1": {"b": None, "c": None}}})
    emptied = store.get(key)
    assert emptied is not None
    assert emptied.plugin_extensions == {}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"status": "sleeping"},
            'invalid status (use "running", "done", "failed", "killed" or "timeout")',
        ),
        ({"displayName": 5}, "invalid displayName (use a string of at most 1024 characters)"),
        (
            {"displayName": "x" * 1025},
            "invalid displayName (use a string of at most 1024 characters)",
        ),
        ({"startedAt": -1}, "invalid startedAt (use epoch milliseconds >= 0)"),
        ({"endedAt": "soon"}, "invalid endedAt (use epoch milliseconds >= 0)"),
        ({"agentId": "x"}, "agentId is maintained by clawline and cannot be set"),
        ({"rootSessionKey": MAIN}, "rootSessionKey is maintained by clawline and cannot be set"),
        ({"updatedAt": 1}, "updatedAt is maintained by clawline and cannot be set"),
        (
            {"model": {1, 2}},
            "invalid model: set is not JSON",
        ),
        ({"pluginExtensions": []}, "invalid pluginExtensions: must be an object of plugin ids"),
        ({"pluginExtensions": {"p": 1}}, "invalid pluginExtensions.p: must be an object"),
        (
            {"pluginExtensions": {"": {}}},
            "invalid pluginExtensions: plugin ids must be non-empty strings",
        ),
    ],
)
def test_invalid_fields_are_refused_and_write_nothing(
    catalog: SessionCatalog, backend: Backend, changes: dict[str, object], message: str
) -> None:
    catalog.patch("agent:main:x", {"displayName": "kept"})
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:x", changes)
    assert str(error.value) == message
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:new", changes)
    assert str(error.value) == message
    assert backend.dump() == before


def test_session_id_and_trace_id_are_fixed_after_creation(
    catalog: SessionCatalog, backend: Backend
) -> None:
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:x", {"traceId": "0" * 32})
    assert str(error.value) == "invalid traceId (use 32 lower-case hex digits, not all zero)"
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:x", {"sessionId": "Bad Id"})
    assert str(error.value) == "Invalid session ID: Bad Id"
    assert backend.dump() == before
    trace = "ab" * 16
    entry = catalog.patch("agent:main:x", {"sessionId": "my-session.1", "traceId": trace}).after
    assert entry is not None
    assert (entry.session_id, entry.trace_id) == ("my-session.1", trace)
    same = catalog.patch("agent:main:x", {"sessionId": "my-session.1", "traceId": trace}).after
    assert same == entry
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:x", {"sessionId": "other"})
    assert str(error.value) == "sessionId cannot be patched; reset the session instead"
    with pytest.raises(InvalidField) as error:
        catalog.patch("agent:main:x", {"traceId": "cd" * 16})
    assert str(error.value) == "traceId is fixed when a session is created"
    assert backend.dump() == before


def test_delete_removes_exactly_one_session(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    catalog.patch("agent:main:x", {})
    catalog.patch("agent:main:x:thread:1", {})
    catalog.patch("agent:main:xy", {})
    doomed = store.get("agent:main:x")
    assert doomed is not None
    clock.advance(7)
    change = catalog.delete("agent:main:x")
    assert change.before == doomed
    assert change.after is None
    assert store.get("agent:main:x") is None
    assert set(store.get_many(["agent:main:x:thread:1", "agent:main:xy"])) == {
        "agent:main:x:thread:1",
        "agent:main:xy",
    }
    info = store.transcript_info(doomed.session_id)
    assert info is not None
    assert (info.archived_at, info.archive_reason) == (clock.now_ms(), "deleted")


def test_delete_can_keep_the_transcript_open(catalog: SessionCatalog, store: Store) -> None:
    entry = catalog.patch("agent:main:x", {}).after
    assert entry is not None
    catalog.delete("agent:main:x", archive_transcript=False)
    info = store.transcript_info(entry.session_id)
    assert info is not None
    assert info.archived_at is None


def test_delete_of_a_missing_session_changes_nothing(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch("agent:main:x", {})
    before = backend.dump()
    with pytest.raises(SessionNotFound) as error:
        catalog.delete("agent:main:y")
    assert str(error.value) == "session not found: agent:main:y"
    assert backend.dump() == before


def test_reset_gives_a_new_incarnation(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    key = "agent:main:subagent:r"
    catalog.patch(MAIN, {})
    old = catalog.patch(
        key,
        {"spawnedBy": MAIN, "label": "keep", "status": "done", "startedAt": 5, "endedAt": 9},
    ).after
    assert old is not None
    catalog.append(key, "message", {"text": "hi"})
    catalog.append(key, "message", {"text": "again"})
    clock.advance(10)
    change = catalog.reset(key)
    new = change.after
    assert new is not None
    assert change.before is not None
    assert change.before.session_id == old.session_id
    assert new.session_id != old.session_id
    assert (new.status, new.started_at, new.ended_at) == (None, None, None)
    assert (new.label, new.spawned_by, new.lineage_path, new.trace_id) == (
        old.label,
        old.spawned_by,
        old.lineage_path,
        old.trace_id,
    )
    assert new.updated_at == clock.now_ms()
    assert store.get(key) == new
    archived = store.transcript_info(old.session_id)
    assert archived is not None
    assert (archived.archived_at, archived.archive_reason, archived.last_seq) == (
        clock.now_ms(),
        "reset",
        2,
    )
    fresh = store.transcript_info(new.session_id)
    assert fresh is not None
    assert (fresh.last_seq, fresh.archived_at, fresh.session_key) == (0, None, key)
    event = catalog.append(key, "message", {"text": "after reset"})
    assert (event.session_id, event.seq) == (new.session_id, 1)
    assert [e.seq for e in store.events(old.session_id)] == [1, 2]
    assert store.by_session_id(old.session_id) == []
    assert store.by_session_id(new.session_id) == [store.get(key)]


def test_reset_of_a_missing_session(catalog: SessionCatalog, backend: Backend) -> None:
    before = backend.dump()
    with pytest.raises(SessionNotFound) as error:
        catalog.reset("agent:main:nope")
    assert str(error.value) == "session not found: agent:main:nope"
    assert backend.dump() == before


def test_listeners_hear_committed_changes_only(catalog: SessionCatalog, clock: FakeClock) -> None:
    heard: list[tuple[str, bool, bool]] = []
    catalog.on_change(lambda c: heard.append((c.key, c.before is None, c.after is None)))
    catalog.patch("agent:main:x", {})
    catalog.patch("agent:main:x", {})  # same time, nothing changes: no event
    with pytest.raises(InvalidField):
        catalog.patch("agent:main:x", {"status": "bogus"})
    clock.advance(1)
    catalog.patch("agent:main:x", {"displayName": "d"})
    catalog.delete("agent:main:x")
    assert heard == [
        ("agent:main:x", True, False),
        ("agent:main:x", False, False),
        ("agent:main:x", False, True),
    ]


BIG = 2**63


@pytest.mark.parametrize(
    ("key", "changes", "message"),
    [
        (
            "agent:main:x",
            {"displayName": "a\x00b"},
            "invalid displayName: NUL characters are not allowed",
        ),
        ("agent:main:x", {"label": "a\x00b"}, "invalid label: NUL characters are not allowed"),
        ("agent:main:x", {"model": "gpt\x00"}, "invalid model: NUL characters are not allowed"),
        ("agent:main:x", {"model": {"k\x00": 1}}, "invalid model: NUL characters are not allowed"),
        ("agent:main:x", {"model": [["\x00"]]}, "invalid model: NUL characters are not allowed"),
        ("agent:main:x", {"mo\x00del": 1}, "invalid field name: 'mo\\x00del'"),
        (
            "agent:main:x",
            {"pluginExtensions": {"p": {"n": {"deep": "\x00"}}}},
            "invalid pluginExtensions.p.n: NUL characters are not allowed",
        ),
        (
            "agent:main:x",
            {"pluginExtensions": {"p\x00": {"n": 1}}},
            "invalid pluginExtensions: plugin ids must be non-empty strings",
        ),
        (
            "agent:main:x",
            {"pluginExtensions": {"p": {"n\x00": 1}}},
            "invalid pluginExtensions.p: namespaces must be non-empty strings",
        ),
        (
            "agent:main:subagent:x",
            {"spawnedCwd": "/a\x00"},
            "invalid spawnedCwd: NUL characters are not allowed",
        ),
        (
            "agent:main:subagent:x",
            {"spawnedWorkspaceDir": "\x00"},
            "invalid spawnedWorkspaceDir: NUL characters are not allowed",
        ),
        ("agent:main:subagent:x", {"spawnDepth": BIG}, "invalid spawnDepth (use an integer >= 0)"),
        ("agent:main:x", {"startedAt": BIG}, "invalid startedAt (use epoch milliseconds >= 0)"),
        ("agent:main:x", {"endedAt": BIG * 4}, "invalid endedAt (use epoch milliseconds >= 0)"),
    ],
)
def test_values_no_backend_can_store_are_refused(
    catalog: SessionCatalog, backend: Backend, key: str, changes: dict[str, object], message: str
) -> None:
    catalog.patch(key, {})
    before = backend.dump()
    with pytest.raises(InvalidInput) as error:
        catalog.patch(key, changes)
    assert str(error.value) == message
    assert backend.dump() == before


def test_largest_integers_round_trip(catalog: SessionCatalog, backend: Backend) -> None:
    entry = catalog.patch(
        "agent:main:subagent:x",
        {"spawnDepth": BIG - 1, "startedAt": BIG - 1, "count": BIG * 8, "ratio": 0.1},
    ).after
    assert entry is not None
    assert backend.open().get("agent:main:subagent:x") == entry


@pytest.mark.parametrize(
    ("event_type", "data", "message"),
    [
        ("", {}, "invalid event type (use a non-empty string)"),
        (5, {}, "invalid event type (use a non-empty string)"),
        ("a\x00", {}, "invalid event type: NUL characters are not allowed"),
        ("message", [], "invalid event data: must be an object"),
        ("message", {"t": "\x00"}, "invalid event data: NUL characters are not allowed"),
        (
            "message",
            {"t": {1, 2}},
            "invalid event data: set is not JSON",
        ),
    ],
)
def test_invalid_events_are_refused(
    catalog: SessionCatalog, backend: Backend, event_type: object, data: object, message: str
) -> None:
    catalog.patch("agent:main:x", {})
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        catalog.append("agent:main:x", event_type, data)  # type: ignore[arg-type]
    assert str(error.value) == message
    assert backend.dump() == before
