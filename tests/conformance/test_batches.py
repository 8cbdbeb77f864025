"""Batch reads used to build listing rows: child keys, transcript heads and last events."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import LineageCycle
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery, Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"


def test_child_keys_groups_direct_children_newest_first(
    catalog: SessionCatalog, store: Store, clock: FakeClock
) -> None:
    catalog.patch(MAIN, {})
    catalog.patch("agent:main:subagent:a", {"spawnedBy": MAIN})
    clock.advance(5)
    catalog.patch("agent:main:subagent:b", {"spawnedBy": MAIN})
    catalog.patch("agent:main:subagent:c", {"spawnedBy": "agent:main:subagent:a"})
    catalog.patch("agent:main:dashboard:d", {"parentSessionKey": MAIN})
    found = store.child_keys([MAIN, "agent:main:subagent:a", "agent:main:subagent:b"])
    assert found == {
        MAIN: ["agent:main:subagent:b", "agent:main:dashboard:d", "agent:main:subagent:a"],
        "agent:main:subagent:a": ["agent:main:subagent:c"],
    }
    assert store.child_keys([]) == {}


def test_heads_and_lasts_read_many_transcripts_at_once(
    catalog: SessionCatalog, store: Store
) -> None:
    ids = []
    for name in ("x", "y", "z"):
        entry = catalog.patch(f"agent:main:{name}", {}).after
        assert entry is not None
        ids.append(entry.session_id)
    for number in range(1, 5):
        catalog.append("agent:main:x", "message", {"role": "user", "n": number})
    catalog.append("agent:main:y", "message", {"role": "assistant", "n": 1})
    heads = store.heads(ids, 2)
    assert [(e.seq, e.data["n"]) for e in heads[ids[0]]] == [(1, 1), (2, 2)]
    assert [(e.seq, e.data["n"]) for e in heads[ids[1]]] == [(1, 1)]
    assert ids[2] not in heads
    lasts = store.lasts(ids)
    assert (lasts[ids[0]].seq, lasts[ids[0]].data["n"]) == (4, 4)
    assert lasts[ids[1]].data["role"] == "assistant"
    assert ids[2] not in lasts
    assert store.heads([], 3) == {}
    assert store.lasts([]) == {}


def test_agent_filter_leaves_out_the_literal_buckets(catalog: SessionCatalog, store: Store) -> None:
    for key in ("global", "unknown", MAIN, "agent:ops:main"):
        catalog.patch(key, {})
    listed = [e.key for e in store.page(SessionQuery(agent_id="main"), None, 10).entries]
    assert listed == [MAIN]
    assert store.count(SessionQuery(agent_id="main")) == 1


def test_cycle_through_a_recreated_session_is_refused(
    catalog: SessionCatalog, backend: Backend
) -> None:
    # A → B → C; B is deleted and created again under D; making D a child of C would put B
    # below itself (C's stored path still runs through the old B).
    a, b, c, d = (f"agent:main:dashboard:{name}" for name in "abcd")
    catalog.patch(a, {})
    catalog.patch(b, {"parentSessionKey": a})
    catalog.patch(c, {"parentSessionKey": b})
    catalog.delete(b)
    catalog.patch(d, {})
    catalog.patch(b, {"parentSessionKey": d})
    before = backend.dump()
    with pytest.raises(LineageCycle):
        catalog.patch(d, {"parentSessionKey": c})
    assert backend.dump() == before
