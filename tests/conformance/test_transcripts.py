"""Transcripts: per-incarnation sequence numbers, reads, headers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import SessionNotFound
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.testing import FakeClock
from clawline.types import JSONObject

if TYPE_CHECKING:
    from .conftest import Backend


def _session_id(store: Store, key: str) -> str:
    entry = store.get(key)
    assert entry is not None
    return entry.session_id


def test_append_counts_per_session_from_one(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    catalog.patch("agent:main:a", {})
    catalog.patch("agent:main:b", {})
    seqs = []
    for i in range(3):
        clock.advance(1)
        seqs.append(catalog.append("agent:main:a", "message", {"i": i}).seq)
        if i == 1:
            assert catalog.append("agent:main:b", "message", {}).seq == 1
    assert seqs == [1, 2, 3]
    assert catalog.append("agent:main:b", "message", {}).seq == 2
    a_id = _session_id(store, "agent:main:a")
    events = store.events(a_id)
    assert [(e.seq, e.type, dict(e.data)) for e in events] == [
        (1, "message", {"i": 0}),
        (2, "message", {"i": 1}),
        (3, "message", {"i": 2}),
    ]
    start = clock.now_ms() - 2
    assert [e.ts for e in events] == [start, start + 1, start + 2]
    assert all(e.session_id == a_id for e in events)
    info = store.transcript_info(a_id)
    assert info is not None
    assert (info.session_id, info.session_key, info.last_seq) == (a_id, "agent:main:a", 3)


def test_events_after_seq_limit_and_tail(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:a", {})
    for i in range(10):
        catalog.append("agent:main:a", "tick", {"i": i})
    sid = _session_id(store, "agent:main:a")
    assert [e.seq for e in store.events(sid, after_seq=7)] == [8, 9, 10]
    assert [e.seq for e in store.events(sid, after_seq=2, limit=3)] == [3, 4, 5]
    assert store.events(sid, after_seq=10) == []
    assert [e.seq for e in store.tail(sid, 3)] == [8, 9, 10]
    assert [e.seq for e in store.tail(sid, 50)] == list(range(1, 11))
    assert store.events("no-such-session") == []
    assert store.tail("no-such-session", 5) == []
    assert store.transcript_info("no-such-session") is None


def test_event_data_round_trips(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:a", {})
    data: JSONObject = {
        "text": "héllo ✓ \\ \" '",
        "parts": [{"kind": "tool", "args": {"n": 1, "f": 0.25, "ok": False, "none": None}}],
        "empty": {},
    }
    event = catalog.append("agent:main:a", "message", data)
    assert event.to_json() == {"seq": 1, "ts": event.ts, "type": "message", "data": data}
    (stored,) = store.events(event.session_id)
    assert stored == event


def test_append_touches_the_session_unless_told_not_to(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    created = catalog.patch("agent:main:a", {}).after
    assert created is not None
    clock.advance(10)
    catalog.append("agent:main:a", "message", {})
    assert store.get("agent:main:a").updated_at == created.updated_at + 10  # type: ignore[union-attr]
    clock.advance(10)
    catalog.append("agent:main:a", "message", {}, touch=False)
    assert store.get("agent:main:a").updated_at == created.updated_at + 10  # type: ignore[union-attr]


def test_append_to_a_missing_session(catalog: SessionCatalog, backend: Backend) -> None:
    before = backend.dump()
    with pytest.raises(SessionNotFound) as error:
        catalog.append("agent:main:nobody", "message", {})
    assert str(error.value) == "session not found: agent:main:nobody"
    assert backend.dump() == before


def test_events_of_a_deleted_session_stay_readable(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:a", {})
    event = catalog.append("agent:main:a", "message", {"keep": True})
    catalog.delete("agent:main:a")
    assert store.events(event.session_id) == [event]
    info = store.transcript_info(event.session_id)
    assert info is not None
    assert (info.last_seq, info.archive_reason) == (1, "deleted")


def test_recreated_session_starts_a_new_transcript(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:a", {})
    first = catalog.append("agent:main:a", "message", {})
    catalog.delete("agent:main:a")
    catalog.patch("agent:main:a", {})
    second = catalog.append("agent:main:a", "message", {})
    assert second.session_id != first.session_id
    assert second.seq == 1
