"""``store.bindings`` / ``tx.bindings``: thread bindings and their expiry."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.errors import Conflict
from clawline.records.collab import ThreadBinding
from clawline.store.base import Store

if TYPE_CHECKING:
    from .conftest import Backend

CHILD = "agent:main:subagent:c1"
HOUR = 3_600_000


def make_binding(conversation: str = "t1", **changes: object) -> ThreadBinding:
    base = ThreadBinding(
        channel="webchat",
        account_id="default",
        conversation_id=conversation,
        session_key=CHILD,
        placement="child",
        bound_at=1_000,
        last_activity_at=1_000,
        idle_ms=24 * HOUR,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def bind(store: Store, *bindings: ThreadBinding) -> list[ThreadBinding]:
    with store.transaction() as tx:
        return [tx.bindings.bind(binding) for binding in bindings]


def test_bind_gives_an_id_and_round_trips(store: Store) -> None:
    (bound,) = bind(store, make_binding(max_age_ms=5, placement="current"))
    assert bound.id is not None
    assert bound == make_binding(max_age_ms=5, placement="current", id=bound.id)
    assert store.bindings.get(bound.id) == bound
    assert store.bindings.active("webchat", "default", "t1") == bound
    with store.transaction() as tx:
        assert tx.bindings.get_active("webchat", "default", "t1") == bound
        assert tx.bindings.get_active("webchat", "default", "t2") is None
    assert store.bindings.active("webchat", "other", "t1") is None
    assert store.bindings.get(bound.id + 1000) is None


def test_one_active_binding_per_conversation(backend: Backend, store: Store) -> None:
    (first,) = bind(store, make_binding())
    with store.transaction() as tx:
        with pytest.raises(Conflict) as error:
            tx.bindings.bind(make_binding(session_key="agent:main:subagent:c2"))
        assert str(error.value) == "conversation already bound: webchat/default/t1"
        # The transaction goes on; other accounts, channels and conversations are separate.
        tx.bindings.bind(make_binding(account_id="second"))
        tx.bindings.bind(make_binding(channel="discord"))
        tx.bindings.bind(make_binding("t2"))
    assert store.bindings.active("webchat", "default", "t1") == first
    assert len(store.bindings.for_session(CHILD)) == 4
    with store.transaction() as tx:
        assert first.id is not None
        ended = tx.bindings.unbind(first.id, 2_000, "unfocus")
        again = tx.bindings.bind(make_binding(session_key="agent:main:subagent:c2", bound_at=2_000))
    assert ended == replace(first, unbound_at=2_000, unbind_reason="unfocus")
    assert store.bindings.active("webchat", "default", "t1") == again
    history = store.bindings.for_session(CHILD, active_only=False)
    assert ended in history
    assert ended not in store.bindings.for_session(CHILD)


def test_two_binders_of_one_conversation(backend: Backend) -> None:
    first, second = backend.open(), backend.open()

    def bind_second() -> str:
        try:
            bind(second, make_binding(session_key="agent:main:subagent:late"))
        except Conflict as error:
            return str(error)
        return "bound"

    with ThreadPoolExecutor(max_workers=1) as pool, first.transaction() as tx:
        tx.bindings.bind(make_binding())
        racing = pool.submit(bind_second)
        time.sleep(0.2)
        assert not racing.done()
    assert racing.result(timeout=10) == "conversation already bound: webchat/default/t1"
    active = first.bindings.active("webchat", "default", "t1")
    assert active is not None
    assert active.session_key == CHILD


def test_touch_only_moves_activity_forward_on_active_bindings(store: Store) -> None:
    (bound,) = bind(store, make_binding())
    assert bound.id is not None
    with store.transaction() as tx:
        assert tx.bindings.touch(bound.id, 5_000) is True
        assert tx.bindings.touch(bound.id, 4_000) is True  # still active; time kept
        assert tx.bindings.touch(bound.id + 1000, 5_000) is False
    touched = store.bindings.get(bound.id)
    assert touched is not None
    assert touched.last_activity_at == 5_000
    with store.transaction() as tx:
        assert tx.bindings.unbind(bound.id, 6_000, "idle-expired") is not None
        assert tx.bindings.unbind(bound.id, 7_000, "again") is None
        assert tx.bindings.touch(bound.id, 8_000) is False
    ended = store.bindings.get(bound.id)
    assert ended is not None
    assert (ended.unbound_at, ended.unbind_reason, ended.last_activity_at) == (
        6_000,
        "idle-expired",
        5_000,
    )


def test_unbind_session_ends_all_its_active_bindings(store: Store) -> None:
    a, b, other = bind(
        store,
        make_binding("t1", bound_at=1),
        make_binding("t2", bound_at=2),
        make_binding("t3", session_key="agent:main:x"),
    )
    with store.transaction() as tx:
        ended = tx.bindings.unbind_session(CHILD, 9, "session-delete")
        assert tx.bindings.unbind_session(CHILD, 10, "again") == []
    assert ended == [
        replace(b, unbound_at=9, unbind_reason="session-delete"),
        replace(a, unbound_at=9, unbind_reason="session-delete"),
    ]
    assert store.bindings.for_session(CHILD) == []
    assert store.bindings.for_session("agent:main:x") == [other]


def test_expiring_uses_the_earlier_of_idle_and_max_age(store: Store) -> None:
    idle, aged, both, never, ended = bind(
        store,
        make_binding("idle", idle_ms=100, last_activity_at=1_500),  # 1_600 idle
        make_binding("aged", idle_ms=0, max_age_ms=300),  # 1_300 max age
        make_binding("both", idle_ms=1_000, max_age_ms=450, last_activity_at=1_100),  # 1_450
        make_binding("never", idle_ms=0, max_age_ms=0),
        make_binding("ended", idle_ms=1),
    )
    assert ended.id is not None
    with store.transaction() as tx:
        tx.bindings.unbind(ended.id, 1_001, "manual")
    assert store.bindings.expiring(1_299, 10) == []
    assert store.bindings.expiring(1_300, 10) == [aged]
    assert store.bindings.expiring(1_600, 10) == [aged, both, idle]
    assert store.bindings.expiring(10**15, 2) == [aged, both]
    assert [b.expiry() for b in (idle, aged, both, never)] == [
        (1_600, "idle-expired"),
        (1_300, "max-age-expired"),
        (1_450, "max-age-expired"),
        None,
    ]
    assert idle.id is not None
    with store.transaction() as tx:
        tx.bindings.touch(idle.id, 2_000)
    assert store.bindings.expiring(1_600, 10) == [aged, both]


def test_stored_expiry_agrees_with_the_record(store: Store) -> None:
    rng = random.Random(7)
    bindings = [
        make_binding(
            f"c{n}",
            bound_at=rng.randrange(0, 1_000),
            last_activity_at=rng.randrange(0, 2_000),
            idle_ms=rng.choice([0, 1, 500, 1_000]),
            max_age_ms=rng.choice([0, 1, 700, 2_000]),
        )
        for n in range(60)
    ]
    due: list[tuple[int, int, ThreadBinding]] = []
    for binding in bind(store, *bindings):
        expiry = binding.expiry()
        if expiry is not None:
            assert binding.id is not None
            due.append((expiry[0], binding.id, binding))
    due.sort(key=lambda item: item[:2])
    for cutoff in (0, 400, 1_000, 1_700, 2_500, 4_000):
        expected = [binding for at, _, binding in due if at <= cutoff]
        assert store.bindings.expiring(cutoff, 1_000) == expected, cutoff
