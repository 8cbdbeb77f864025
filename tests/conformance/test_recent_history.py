"""A turn's history read (``clawline.agents.recent_history``): after the first read of a session,
the next reads ask the store only for the events after the newest seq seen, on both backends,
and still see what anyone else appended — another catalog on the same data standing for
another gateway instance."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.agents.chat_history import read_messages
from clawline.agents.conversation import convert
from clawline.agents.messages import MESSAGE_EVENT
from clawline.agents.recent_history import RecentHistory
from clawline.records.transcript import message_json
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.testing import FakeClock
from tests.conformance.conftest import Backend

KEY = "agent:main:main"


class CountingStore:
    """The store, with the events it hands out counted (``tail`` and ``events`` reads)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.handed = 0

    def tail(self, session_id: str, limit: int) -> Any:
        found = self.store.tail(session_id, limit)
        self.handed += len(found)
        return found

    def events(self, session_id: str, *, after_seq: int = 0, limit: int = 1000) -> Any:
        found = self.store.events(session_id, after_seq=after_seq, limit=limit)
        self.handed += len(found)
        return found


def say(catalog: SessionCatalog, text: str, role: str = "user") -> None:
    catalog.append(KEY, MESSAGE_EVENT, {"role": role, "content": [{"type": "text", "text": text}]})


def texts(history: RecentHistory, store: CountingStore, session_id: str, limit: int) -> list[str]:
    read = history.read(store, session_id, limit)  # type: ignore[arg-type]
    return [message.model.content for message in read if message.model is not None]


@pytest.fixture
def session_id(catalog: SessionCatalog) -> str:
    catalog.patch(KEY, {})
    entry = catalog.get(KEY)
    assert entry is not None
    return entry.session_id


def test_a_later_read_reads_only_what_followed(
    catalog: SessionCatalog, store: Store, session_id: str
) -> None:
    for n in range(50):
        say(catalog, f"m{n}")
    counting, history = CountingStore(store), RecentHistory()
    first = history.read(counting, session_id, 1000)  # type: ignore[arg-type]
    assert [m.model.content for m in first if m.model] == [f"m{n}" for n in range(50)]
    assert counting.handed == 50
    say(catalog, "m50")
    catalog.append(KEY, "custom", {"note": "not a message"})
    say(catalog, "m51", role="assistant")
    counting.handed = 0
    second = history.read(counting, session_id, 1000)  # type: ignore[arg-type]
    assert counting.handed == 3  # the three new events, not the 53
    assert [m.model.content for m in second if m.model] == [f"m{n}" for n in range(52)]
    # the messages read before are the same objects: converted once
    assert all(a is b for a, b in zip(first, second[:50], strict=True))
    # and what it answers is what a fresh read of the store answers
    fresh = [convert(message_json(event)) for event in read_messages(store, session_id, 1000)]
    assert [m.model for m in second] == fresh
    assert history.fresh_reads == 1


def test_another_instances_appends_are_seen(
    catalog: SessionCatalog, backend: Backend, session_id: str
) -> None:
    other = SessionCatalog(backend.open(), clock=FakeClock())
    counting, history = CountingStore(catalog.store), RecentHistory()
    say(catalog, "here")
    assert texts(history, counting, session_id, 100) == ["here"]
    say(other, "there")
    say(catalog, "here again")
    assert texts(history, counting, session_id, 100) == ["here", "there", "here again"]
    assert history.fresh_reads == 1


def test_the_limit_holds_and_a_larger_one_reads_afresh(
    catalog: SessionCatalog, store: Store, session_id: str
) -> None:
    for n in range(10):
        say(catalog, f"m{n}")
    counting, history = CountingStore(store), RecentHistory()
    assert texts(history, counting, session_id, 4) == ["m6", "m7", "m8", "m9"]
    say(catalog, "m10")
    assert texts(history, counting, session_id, 4) == ["m7", "m8", "m9", "m10"]
    assert history.fresh_reads == 1
    # only 4 are held: 8 cannot be answered from them
    assert texts(history, counting, session_id, 8) == [f"m{n}" for n in range(3, 11)]
    assert history.fresh_reads == 2
    # many new events at once (more than the limit): read afresh, still the last ones
    for n in range(11, 30):
        say(catalog, f"m{n}")
    assert texts(history, counting, session_id, 8) == [f"m{n}" for n in range(22, 30)]
    assert history.fresh_reads == 3


def test_what_is_held_is_bounded(catalog: SessionCatalog, store: Store) -> None:
    history = RecentHistory(max_messages=10)
    ids = []
    for n in range(3):
        key = f"agent:main:s{n}"
        catalog.patch(key, {})
        entry = catalog.get(key)
        assert entry is not None
        for m in range(4):
            catalog.append(key, MESSAGE_EVENT, {"role": "user", "content": f"{n}.{m}"})
        ids.append(entry.session_id)
    for session in ids:
        history.read(store, session, 100)
    assert history.fresh_reads == 3
    assert history.held_messages <= 10
    history.read(store, ids[2], 100)  # the newest is held
    assert history.fresh_reads == 3
    history.read(store, ids[0], 100)  # the oldest was dropped
    assert history.fresh_reads == 4
