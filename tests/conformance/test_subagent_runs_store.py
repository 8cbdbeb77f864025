"""``store.runs`` / ``tx.runs``: sub-agent run records."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.errors import Conflict, InvalidField
from clawline.records.collab import FROZEN_RESULT_MAX_BYTES, SubagentRun, cap_result_text
from clawline.store.base import Store

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
OTHER = "agent:main:other"


def make_run(n: int, **changes: object) -> SubagentRun:
    base = SubagentRun(
        run_id=f"r{n:03d}",
        child_session_key=f"agent:main:subagent:c{n}",
        requester_session_key=MAIN,
        task=f"task {n}",
        created_at=1_000 + n,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def insert(store: Store, *runs: SubagentRun) -> None:
    with store.transaction() as tx:
        for run in runs:
            tx.runs.insert(run)


def ids(runs: list[SubagentRun]) -> list[str]:
    return [run.run_id for run in runs]


def test_a_run_round_trips_every_field(store: Store) -> None:
    run = SubagentRun(
        run_id="9a8b",
        child_session_key="agent:reviewer:subagent:0c1d",
        requester_session_key=MAIN,
        task='review ✓ "quoted"',
        created_at=1,
        controller_session_key="agent:main:boss",
        requester_origin={"channel": "webchat", "to": "u1", "accountId": "", "threadId": 7},
        requester_display_key="main",
        cleanup="delete",
        label="reviewer",
        model="openai/gpt-4o-mini",
        workspace_dir="/srv/w",
        run_timeout_seconds=30,
        spawn_mode="run",
        runtime="acp",
        started_at=2,
        ended_at=3,
        outcome={"status": "error", "error": "boom", "nested": {"a": [1, None, True]}},
        archive_at_ms=4,
        cleanup_completed_at=5,
        suppress_announce_reason="killed",
        expects_completion_message=False,
        ended_reason="subagent-killed",
        frozen_result_text="résultat",
        completion_announced_at=6,
        task_id="task-1",
    )
    insert(store, run, make_run(2, expects_completion_message=True))
    assert store.runs.get("9a8b") == run
    with store.transaction() as tx:
        assert tx.runs.get("9a8b") == run
    flagged = [store.runs.get("r002"), store.runs.get("9a8b")]
    assert [r.expects_completion_message if r else None for r in flagged] == [True, False]
    bare = make_run(3)
    insert(store, bare)
    assert store.runs.get("r003") == bare
    assert bare.controller == MAIN
    assert run.controller == "agent:main:boss"
    assert store.runs.get("nope") is None


def test_a_recorded_run_id_is_a_conflict_and_the_transaction_goes_on(store: Store) -> None:
    insert(store, make_run(1))
    with store.transaction() as tx:
        with pytest.raises(Conflict) as error:
            tx.runs.insert(make_run(1, task="again"))
        assert str(error.value) == "subagent run already recorded: r001"
        tx.runs.insert(make_run(2))
    assert store.runs.get("r001") == make_run(1)
    assert store.runs.get("r002") == make_run(2)


def test_frozen_result_text_is_capped_at_100_kib(backend: Backend, store: Store) -> None:
    limit = "é" * (FROZEN_RESULT_MAX_BYTES // 2)  # exactly the cap in UTF-8 bytes
    insert(store, make_run(1, frozen_result_text=limit))
    stored = store.runs.get("r001")
    assert stored is not None
    assert stored.frozen_result_text == limit
    before = backend.dump()
    with pytest.raises(InvalidField) as error:
        insert(store, make_run(2, frozen_result_text=limit + "x"))
    assert str(error.value) == "frozenResultText is longer than 102400 bytes (run r002)"
    with pytest.raises(InvalidField), store.transaction() as tx:
        tx.runs.update(make_run(1, frozen_result_text="x" * (FROZEN_RESULT_MAX_BYTES + 1)))
    assert backend.dump() == before
    capped = cap_result_text(limit + "é")
    assert capped == limit
    assert cap_result_text("a" + "é" * FROZEN_RESULT_MAX_BYTES).encode()[-2:] == "é".encode()


def test_update_and_delete(store: Store) -> None:
    insert(store, make_run(1), make_run(2))
    ended = make_run(1, ended_at=5, outcome={"status": "ok"}, ended_reason="subagent-complete")
    with store.transaction() as tx:
        tx.runs.update(ended)
        assert tx.runs.delete("r002") is True
        assert tx.runs.delete("r002") is False
    assert store.runs.get("r001") == ended
    assert store.runs.get("r002") is None


def test_lookups_by_child_requester_and_controller(store: Store) -> None:
    child = "agent:main:subagent:x"
    insert(
        store,
        make_run(1, child_session_key=child),
        make_run(2, ended_at=9),
        make_run(3, child_session_key=child, controller_session_key=OTHER),
        make_run(4, requester_session_key=OTHER),
        make_run(5),
    )
    assert ids(store.runs.by_child(child)) == ["r003", "r001"]
    assert store.runs.by_child("agent:main:subagent:none") == []
    assert ids(store.runs.for_requester(MAIN)) == ["r001", "r002", "r003", "r005"]
    assert ids(store.runs.for_requester(MAIN, active_only=True)) == ["r001", "r003", "r005"]
    assert ids(store.runs.for_controller(MAIN)) == ["r001", "r002", "r005"]
    assert ids(store.runs.for_controller(OTHER)) == ["r003", "r004"]
    assert ids(store.runs.for_controller(MAIN, active_only=True)) == ["r001", "r005"]
    assert store.runs.count_active(MAIN) == 3
    assert store.runs.count_active(OTHER) == 1
    assert store.runs.count_active("agent:main:nobody") == 0
    assert ids(store.runs.active()) == ["r001", "r003", "r004", "r005"]
    with store.transaction() as tx:
        assert tx.runs.count_active(MAIN) == 3


def test_archive_and_cleanup_queries(store: Store) -> None:
    insert(
        store,
        make_run(1, archive_at_ms=100),
        make_run(2, archive_at_ms=50),
        make_run(3, archive_at_ms=100, cleanup_completed_at=60),  # cleaned up already
        make_run(4, archive_at_ms=101),
        make_run(5, cleanup_completed_at=40),
        make_run(6),
    )
    assert ids(store.runs.archive_due(100, 10)) == ["r002", "r001"]
    assert ids(store.runs.archive_due(100, 1)) == ["r002"]
    assert store.runs.archive_due(49, 10) == []
    assert ids(store.runs.cleaned_before(60, 10)) == ["r005", "r003"]
    assert ids(store.runs.cleaned_before(59, 10)) == ["r005"]


def test_counting_active_children_in_a_transaction_serialises_spawns(backend: Backend) -> None:
    """Two processes checking a requester's child limit cannot both pass it: the second count
    waits until the first spawn commits, then sees its child."""
    first, second = backend.open(), backend.open()
    limit = 1

    def spawn(store: Store, n: int) -> bool:
        with store.transaction() as tx:
            if tx.runs.count_active(MAIN) >= limit:
                return False
            tx.runs.insert(make_run(n))
            return True

    with ThreadPoolExecutor(max_workers=1) as pool, first.transaction() as tx:
        assert tx.runs.count_active(MAIN) == 0
        racing = pool.submit(spawn, second, 2)
        time.sleep(0.2)
        assert not racing.done()
        tx.runs.insert(make_run(1))
    assert racing.result(timeout=10) is False
    assert first.runs.count_active(MAIN) == 1
    assert ids(first.runs.active()) == ["r001"]
