"""Spawn keys (``SubagentRun.spawn_key``, :mod:`clawline.collab.spawn_key`): one child per key,
even when two processes spawn with the same key at once.

The race tests use two store objects on the same data (two connections, as two gateway
processes would) and the real spawn transaction (:meth:`SubagentRegistry.create`'s, through a
:class:`~clawline.runtime.Runtime` per store object).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any, cast

import pytest

from clawline.collab.spawn_key import AlreadySpawned
from clawline.collab.spawn_plan import ChildPlan, plan_child
from clawline.config import Settings
from clawline.errors import Conflict
from clawline.records.collab import SubagentRun
from clawline.runtime import Runtime
from clawline.store.base import Store, StoreTransaction

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
OTHER = "agent:main:other"
KEY = "5f0c-session-id/call_0"
WAIT = 0.2
"""How long a blocked spawn is given to (wrongly) finish."""


def make_run(n: int, **changes: Any) -> SubagentRun:
    base = SubagentRun(
        run_id=f"r{n:03d}",
        child_session_key=f"agent:main:subagent:c{n}",
        requester_session_key=MAIN,
        task=f"task {n}",
        created_at=1_000 + n,
    )
    return replace(base, **changes)


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


def test_a_spawn_key_is_found_and_unique_per_requester(store: Store) -> None:
    keyed = make_run(1, spawn_key=KEY)
    with store.transaction() as tx:
        tx.runs.insert(keyed)
        tx.runs.insert(make_run(2))
        tx.runs.insert(make_run(3))  # runs without a key never conflict
        tx.runs.insert(make_run(4, requester_session_key=OTHER, spawn_key=KEY))
    assert store.runs.by_spawn_key(MAIN, KEY) == keyed
    assert store.runs.by_spawn_key(MAIN, "5f0c-session-id/call_1") is None
    assert store.runs.get("r001") == keyed
    other = store.runs.by_spawn_key(OTHER, KEY)
    assert other is not None
    assert other.run_id == "r004"
    assert keyed.to_json()["spawnKey"] == KEY
    with store.transaction() as tx:
        assert tx.runs.by_spawn_key(MAIN, KEY) == keyed
        with pytest.raises(Conflict) as error:
            tx.runs.insert(make_run(5, spawn_key=KEY))
        assert str(error.value) == f"subagent run already recorded for spawn key {KEY}"
        tx.runs.insert(make_run(6, spawn_key="5f0c-session-id/call_1"))  # the tx goes on
    assert store.runs.get("r005") is None
    assert store.runs.get("r006") is not None
    ended = replace(keyed, ended_at=9, outcome={"status": "ok"})
    with store.transaction() as tx:
        tx.runs.update(ended)
    assert store.runs.by_spawn_key(MAIN, KEY) == ended  # ended runs keep their key


def test_inserts_racing_with_one_key_leave_one_record(backend: Backend, store: Store) -> None:
    """The unique index is the last word: the second insert waits for the first transaction,
    then conflicts."""
    second = backend.open()

    def insert_second() -> None:
        with second.transaction() as tx:
            tx.runs.insert(make_run(2, spawn_key=KEY))

    with ThreadPoolExecutor(max_workers=1) as pool, store.transaction() as tx:
        tx.runs.insert(make_run(1, spawn_key=KEY))
        racing = pool.submit(insert_second)
        time.sleep(WAIT)
        assert not racing.done()
    with pytest.raises(Conflict):
        racing.result(timeout=10)
    assert [run.run_id for run in store.runs.for_requester(MAIN)] == ["r001"]


class _PausingStore:
    """Wraps a store: a spawn transaction stops right after it took the requester's spawn
    lock (``tx.runs.count_active``), until :attr:`resume` is set."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.paused = Event()
        self.resume = Event()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        with self.store.transaction() as tx:
            runs = tx.runs
            original = runs.count_active

            def count_then_wait(requester: str) -> int:
                active = original(requester)
                self.paused.set()
                assert self.resume.wait(10)
                return active

            runs.count_active = count_then_wait  # type: ignore[method-assign,assignment]
            yield tx

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _services(store: Store, state: Path) -> Runtime:
    state.mkdir()
    return Runtime(Settings(state_dir=state, raw={}), store)


def _plan(spawn_key: str | None) -> ChildPlan:
    return plan_child(
        requester=MAIN,
        requester_depth=0,
        max_depth=1,
        target_agent_id="main",
        task="count to ten",
        label=None,
        mode="run",
        cleanup="keep",
        workspace_dir="/tmp",
        run_timeout_seconds=0,
        expects_completion_message=True,
        spawn_key=spawn_key,
    )


def _create(services: Runtime, plan: ChildPlan) -> SubagentRun:
    return services.subagents._create_now(plan, 5, None)


def test_two_spawns_racing_with_one_key_make_one_child(
    backend: Backend, store: Store, tmp_path: Path, pool: ThreadPoolExecutor
) -> None:
    """The second spawn waits on the requester's spawn lock while the first one's transaction
    is open, then finds the first one's record: it raises ``AlreadySpawned`` and writes
    nothing (no child entry, no task, no record)."""
    pausing = _PausingStore(store)
    first = _services(cast(Store, pausing), tmp_path / "first")
    second = _services(backend.open(), tmp_path / "second")
    one_plan, two_plan = _plan(KEY), _plan(KEY)
    one = pool.submit(_create, first, one_plan)
    assert pausing.paused.wait(10)
    two: Future[SubagentRun] = pool.submit(_create, second, two_plan)
    time.sleep(WAIT)
    blocked = not two.done()
    pausing.resume.set()
    assert blocked, "the second spawn did not wait for the first one's transaction"
    created = one.result(timeout=10)
    with pytest.raises(AlreadySpawned) as error:
        two.result(timeout=10)
    assert error.value.record == created
    assert created.spawn_key == KEY
    assert created.child_session_key == one_plan.child_key
    assert [run.run_id for run in store.runs.for_requester(MAIN)] == [one_plan.run_id]
    assert store.get(two_plan.child_key) is None
    assert store.tasks.get(two_plan.task_id) is None
    assert store.tasks.get(one_plan.task_id) is not None
    assert [entry.key for entry in store.children(MAIN)] == [one_plan.child_key]
    # without a key every spawn creates its own child
    _create(second, _plan(None))
    _create(second, _plan(None))
    assert len(store.runs.for_requester(MAIN)) == 3
