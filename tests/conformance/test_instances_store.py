"""The gateway instance tables, per backend (clawline.store.instances): registration, the
heartbeat, take-over (exactly one taker, only once the lease lapsed), and which runs and
sub-agent records a running instance answers for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clawline.records.collab import SubagentRun
from clawline.records.instance import InstanceRecord
from clawline.store.base import Store
from clawline.types import JSON

LEASE = 1_000


def register(store: Store, instance_id: str, at: int) -> None:
    with store.transaction() as tx:
        tx.instances.register(InstanceRecord(instance_id, "host", 1, at, at, LEASE))


def record(run_id: str, at: int) -> SubagentRun:
    return SubagentRun(
        run_id=run_id,
        child_session_key=f"agent:main:subagent:{run_id}",
        requester_session_key="agent:main:main",
        task="t",
        created_at=at,
    )


def test_heartbeat_and_take_over(store: Store) -> None:
    register(store, "a", 100)
    register(store, "b", 200)
    with store.transaction() as tx:
        assert tx.instances.heartbeat("a", 900, "ws://127.0.0.1:1")
        assert not tx.instances.take_over("a", "b", 1_800)  # within its lease
        assert tx.instances.take_over("a", "b", 1_901)
        assert not tx.instances.take_over("a", "c", 1_902)  # one taker only
        assert not tx.instances.heartbeat("a", 1_903, None)  # its lease is gone for good
    taken = store.instances.get("a")
    assert taken is not None
    assert (taken.recovered_by, taken.recovered_at, taken.url) == ("b", 1_901, "ws://127.0.0.1:1")
    assert taken.state(1_903) == "recovered"
    assert [r.instance_id for r in store.instances.running()] == ["b"]
    with store.transaction() as tx:
        tx.instances.stop("b", 2_000)
        assert tx.instances.take_over("b", "c", 2_001, lapsed_only=False) is False
    assert store.instances.running() == []
    assert [r.instance_id for r in store.instances.recent(10)] == ["b", "a"]


def test_what_a_running_instance_answers_for(store: Store) -> None:
    register(store, "a", 100)
    register(store, "b", 100)
    for owner, run_id, key in (("a", "r1", "s1"), ("b", "r2", "s2"), (None, "r3", "s3")):
        store.instance_id = owner
        with store.transaction() as tx:
            tx.run_owners.add(run_id, key, 100)
            tx.runs.insert(record(run_id, 100))
    assert store.run_owners.answered_runs(["r1", "r2", "r3"]) == {"r1", "r2"}
    assert store.run_owners.answered_sessions(["s1", "s2", "s3"]) == {"s1", "s2"}
    assert [o.run_id for o in store.run_owners.unanswered(10)] == ["r3"]  # the anonymous one
    assert [r.run_id for r in store.runs.unanswered()] == ["r3"]
    assert store.run_owners.counts() == {"a": 1, "b": 1, "": 1}
    with store.transaction() as tx:
        assert tx.instances.take_over("b", "a", 100, lapsed_only=False)
    assert store.run_owners.answered_runs(["r1", "r2", "r3"]) == {"r1"}
    assert [o.run_id for o in store.run_owners.unanswered(10)] == ["r2", "r3"]
    assert [r.run_id for r in store.runs.unanswered()] == ["r2", "r3"]
    with store.transaction() as tx:
        assert tx.run_owners.remove(["r2", "r3", "nothing"]) == 2
    assert store.run_owners.counts() == {"a": 1}


def test_claims_are_held_by_one_running_instance_and_freed_by_its_end(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(store, "a", 100)
    register(store, "b", 100)
    monkeypatch.setattr(store, "instance_id", "a")
    with store.transaction() as tx:
        assert tx.claims.take("channel", "matrix", 110)
        assert tx.claims.take("channel", "matrix", 120)  # again: still a's
        assert tx.claims.take("acp", "agent:codex:acp:1", 130)
    monkeypatch.setattr(store, "instance_id", "b")
    with store.transaction() as tx:
        assert not tx.claims.take("channel", "matrix", 140)  # a runs: it keeps it
        assert tx.claims.release("channel", ["matrix"]) == 0  # not b's to release
    assert store.claims.holder("channel", "matrix") == "a"
    assert store.claims.unanswered("channel", 10) == []
    assert store.claims.counts() == {"a": {"channel": 1, "acp": 1}}
    with store.transaction() as tx:
        assert tx.instances.take_over("a", "b", 5_000)
    assert store.claims.holder("channel", "matrix") is None
    assert [c.name for c in store.claims.unanswered("acp", 10)] == ["agent:codex:acp:1"]
    with store.transaction() as tx:
        assert tx.claims.take("channel", "matrix", 5_010)  # a is gone: b takes it
    held = store.claims.held_by("b", "channel")
    assert [(c.name, c.instance_id, c.claimed_at) for c in held] == [("matrix", "b", 5_010)]
    with store.transaction() as tx:
        assert tx.claims.release("channel", ["matrix", "telegram"]) == 1
    assert store.claims.held_by("b", "channel") == []


def test_a_deferred_outcome_is_stored_with_its_record(store: Store) -> None:
    with store.transaction() as tx:
        tx.runs.insert(record("r1", 100))
    stored = store.runs.get("r1")
    assert stored is not None
    assert stored.deferred_outcome is None
    outcome: dict[str, JSON] = {"status": "done", "text": "all four found", "usage": {"output": 3}}
    with store.transaction() as tx:
        tx.runs.update(replace(stored, deferred_outcome=outcome))
    again = store.runs.get("r1")
    assert again is not None
    assert again.deferred_outcome == outcome


def test_run_stops_are_claimed_once_by_their_target(store: Store) -> None:
    register(store, "a", 100)
    register(store, "b", 100)
    with store.transaction() as tx:
        tx.run_stops.add("s1", "r1", "a", 110)
        tx.run_stops.add("s2", None, "a", 120)
        tx.run_stops.add("s3", None, "b", 130)
        tx.run_stops.add("s4", None, "gone", 140)
    with store.transaction() as tx:
        claimed = tx.run_stops.claim("a", 10)
    assert [(s.session_key, s.run_id, s.created_at) for s in claimed] == [
        ("s1", "r1", 110),
        ("s2", None, 120),
    ]
    with store.transaction() as tx:
        assert tx.run_stops.claim("a", 10) == []  # taken once
        assert tx.run_stops.drop_unanswered() == 1  # the one for no running instance
        assert [s.session_key for s in tx.run_stops.claim("b", 10)] == ["s3"]


def test_the_runs_of_a_session_running_instances_answer_for(store: Store) -> None:
    register(store, "a", 100)
    for owner, run_id, at in (("a", "r1", 100), ("gone", "r2", 90), ("a", "r3", 120)):
        with store.transaction() as tx:
            tx.run_owners.add(run_id, "s1", at, owner)
    assert [(o.run_id, o.instance_id) for o in store.run_owners.of_session("s1")] == [
        ("r1", "a"),
        ("r3", "a"),
    ]
    assert store.run_owners.of_session("s2") == []
