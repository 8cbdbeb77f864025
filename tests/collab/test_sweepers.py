"""The collaboration sweeps (``clawline.collab.sweepers``): ``cleanup: "delete"`` run-mode
children are archived once ``archiveAtMs`` has passed (never while running), and delivered
inbox rows are pruned after ``INBOX_RETENTION_MS`` (pending ones never)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from clawline.collab.sweepers import INBOX_RETENTION_MS, Sweepers
from clawline.events import DomainEvent, SessionChanged
from clawline.records.collab import ThreadBinding
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from tests.collab.conftest import MakeServices
from tests.collab.support import runner_of
from tests.collab.test_announce_support import (
    MAIN,
    Gate,
    announcing,
    child,
    entry,
    inbox_row,
    quiesce,
    record,
    requester,
    run_child,
    start_child,
    task_of,
)

MINUTE = 60_000
BUSY = "agent:main:busy"


@pytest.fixture
async def make(make_services: MakeServices) -> AsyncIterator[MakeServices]:
    async with announcing(make_services) as factory:
        yield factory


def bind(services: Runtime, key: str, conversation: str) -> ThreadBinding:
    now = services.clock.now_ms()
    with services.store.transaction() as tx:
        return tx.bindings.bind(
            ThreadBinding(
                channel="webchat",
                account_id="default",
                conversation_id=conversation,
                session_key=key,
                placement="child",
                bound_at=now,
                last_activity_at=now,
            )
        )


def deleted_events(services: Runtime) -> list[str]:
    seen: list[str] = []

    def tap(event: DomainEvent) -> None:
        if isinstance(event, SessionChanged) and event.reason == "delete":
            seen.append(event.session_key)

    services.events.subscribe(tap)
    return seen


async def test_a_delete_cleanup_child_is_archived_once_due(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    plan = await run_child(services, reply="temporary work", cleanup="delete")
    await quiesce(services)
    ended = record(services, plan.run_id)
    assert ended.ended_at is not None
    assert ended.archive_at_ms == ended.ended_at + 60 * MINUTE  # archiveAfterMinutes default
    child_entry = entry(services, plan.child_key)
    binding = await services.call(bind, services, plan.child_key, "thread-1")
    published = deleted_events(services)

    clock.set(ended.archive_at_ms - 1)
    assert await services.sweepers.sweep_once() == ([], 0)
    assert services.store.get(plan.child_key) is not None

    clock.set(ended.archive_at_ms)
    deleted, pruned = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [plan.child_key]
    assert pruned == 0
    assert services.store.get(plan.child_key) is None
    assert services.store.runs.by_child(plan.child_key) == []
    info = services.store.transcript_info(child_entry.session_id)
    assert info is not None
    assert (info.archived_at, info.archive_reason) == (ended.archive_at_ms, "deleted")
    ended_binding = services.store.bindings.get(binding.id or -1)
    assert ended_binding is not None
    assert (ended_binding.unbound_at, ended_binding.unbind_reason) == (
        ended.archive_at_ms,
        "archived",
    )
    assert published == [plan.child_key]
    # The task and the delivered completion outlive the child (their own retention).
    assert task_of(services, plan).status == "succeeded"
    assert inbox_row(services, plan.run_id).delivery_seq is not None
    assert await services.sweepers.sweep_once() == ([], 0)  # nothing left to do


async def test_a_due_child_is_not_archived_while_it_runs(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    plan = await run_child(services, reply="first task done", cleanup="delete")
    await quiesce(services)
    due = record(services, plan.run_id).archive_at_ms
    assert due is not None
    gate = Gate("follow-up done")
    runner_of(services).script(plan.child_key, gate)
    await services.runs.send(
        session_key=plan.child_key, message="one more thing", idempotency_key="follow-up"
    )
    await asyncio.wait_for(gate.entered.wait(), 5)
    clock.set(due + MINUTE)
    assert await services.sweepers.sweep_once() == ([], 0)
    assert services.store.get(plan.child_key) is not None
    assert services.store.runs.get(plan.run_id) is not None

    gate.open()
    await quiesce(services)
    deleted, _ = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [plan.child_key]
    assert services.store.get(plan.child_key) is None


async def test_an_active_record_is_never_archived(make: MakeServices) -> None:
    """A record is only due once it has ended (``archiveAtMs`` is set at the end)."""
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    gate = Gate()
    plan = await child(services, reply=gate, cleanup="delete")
    await start_child(services, plan)
    await asyncio.wait_for(gate.entered.wait(), 5)
    clock.advance(24 * 60 * MINUTE)
    assert await services.sweepers.sweep_once() == ([], 0)
    assert record(services, plan.run_id).archive_at_ms is None
    gate.open()
    await quiesce(services)


@pytest.mark.parametrize(
    ("options", "raw"),
    [
        ({"cleanup": "keep"}, None),
        ({"cleanup": "delete", "mode": "session"}, None),
        (
            {"cleanup": "delete"},
            {"agents": {"defaults": {"subagents": {"archiveAfterMinutes": 0}}}},
        ),
    ],
    ids=["keep", "session-mode", "archive-disabled"],
)
async def test_children_that_are_not_archived_stay(
    make: MakeServices, options: dict[str, str], raw: dict[str, object] | None
) -> None:
    clock = FakeClock()
    services = await make(raw, clock=clock)
    await requester(services)
    plan = await run_child(services, reply="kept work", **options)
    await quiesce(services)
    assert record(services, plan.run_id).archive_at_ms is None
    clock.advance(365 * 24 * 60 * MINUTE)
    deleted, _ = await services.sweepers.sweep_once()
    assert deleted == []
    assert services.store.get(plan.child_key) is not None
    assert not record(services, plan.run_id).active


async def test_archived_is_only_the_due_child(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    early = await run_child(services, reply="early", cleanup="delete")
    clock.advance(30 * MINUTE)
    late = await run_child(services, reply="late", cleanup="delete")
    kept = await run_child(services, reply="kept", cleanup="keep")
    await quiesce(services)
    clock.advance(30 * MINUTE)
    deleted, _ = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [early.child_key]
    assert services.store.get(late.child_key) is not None
    assert services.store.get(kept.child_key) is not None
    clock.advance(30 * MINUTE)
    deleted, _ = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [late.child_key]
    assert services.store.get(kept.child_key) is not None


async def test_the_runtime_start_runs_an_archive_sweep(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    plan = await run_child(services, reply="done", cleanup="delete")
    await quiesce(services)
    clock.advance(61 * MINUTE)
    await services.start()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while services.store.get(plan.child_key) is not None:
        assert loop.time() < deadline
        await asyncio.sleep(0.005)
    assert services.store.runs.get(plan.run_id) is None


# --- inbox pruning -------------------------------------------------------------------------


async def test_delivered_rows_are_pruned_after_retention_and_pending_never(
    make: MakeServices,
) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    delivered = await run_child(services, reply="delivered result")
    await quiesce(services)
    delivered_at = inbox_row(services, delivered.run_id).delivered_at
    assert delivered_at is not None

    await requester(services, BUSY)
    gate = Gate("long turn done")
    pending = await child(services, BUSY, reply="pending result")
    runner_of(services).script(BUSY, gate)
    await services.runs.send(session_key=BUSY, message="long turn", idempotency_key="busy-turn")
    await asyncio.wait_for(gate.entered.wait(), 5)
    await start_child(services, pending)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while services.store.inbox.by_run(pending.run_id) is None:
        assert loop.time() < deadline
        await asyncio.sleep(0.005)

    # The sweeps look at the weeks ahead on a clock of their own: on the runtime's clock the
    # gated turn would time out (its timer runs in virtual time too) and take the row.
    sweep_clock = FakeClock(start_ms=clock.now_ms())
    sweepers = Sweepers(
        catalog=services.catalog,
        store=services.store,
        workers=services.workers,
        tasks=services.tasks,
        clock=sweep_clock,
        runs=services.runs,
    )
    sweep_clock.set(delivered_at + INBOX_RETENTION_MS)
    assert await sweepers.sweep_once() == ([], 0)
    assert services.store.inbox.by_run(delivered.run_id) is not None

    sweep_clock.advance(1)
    assert await sweepers.sweep_once() == ([], 1)
    assert services.store.inbox.by_run(delivered.run_id) is None
    still = inbox_row(services, pending.run_id)
    assert still.pending
    sweep_clock.advance(10 * INBOX_RETENTION_MS)
    assert await sweepers.sweep_once() == ([], 0)
    assert inbox_row(services, pending.run_id).pending
    assert task_of(services, delivered).delivery_status == "delivered"  # tasks stay
    gate.open()
    await quiesce(services)
    assert inbox_row(services, pending.run_id).delivery_seq is not None  # still deliverable


async def test_an_orchestrator_is_not_archived_while_its_children_run(make: MakeServices) -> None:
    """An orchestrator's completions still arrive after it ended; archiving it while its own
    children run would drop the record that leads their completions to its requester."""
    clock = FakeClock()
    services = await make(
        {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}}, clock=clock
    )
    await requester(services)
    runner_of(services).script(MAIN, "orchestrator reported", "leaf reported")
    orchestrator = await run_child(services, reply="delegated", cleanup="delete", max_depth=2)
    gate = Gate("leaf result")
    leaf = await child(services, orchestrator.child_key, reply=gate, max_depth=2)
    await start_child(services, leaf)
    await asyncio.wait_for(gate.entered.wait(), 5)
    due = record(services, orchestrator.run_id).archive_at_ms
    assert due is not None
    clock.set(due + MINUTE)
    deleted, _ = await services.sweepers.sweep_once()
    assert deleted == []
    assert services.store.get(orchestrator.child_key) is not None

    gate.open()
    await quiesce(services)
    row = inbox_row(services, leaf.run_id)
    assert row.delivery_seq is not None
    assert row.requester_session_key == orchestrator.child_key
    deleted, _ = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [orchestrator.child_key]


async def test_a_child_with_undelivered_completions_is_not_archived(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    plan = await run_child(services, reply="done", cleanup="delete")
    await quiesce(services)
    due = record(services, plan.run_id).archive_at_ms
    assert due is not None
    with services.store.transaction() as tx:  # written, not yet delivered
        item = tx.inbox.add(
            requester_session_key=plan.child_key,
            child_session_key="agent:main:subagent:grandchild",
            run_id="grandchild-run",
            status="succeeded",
            payload={"text": "grandchild result"},
            created_at=clock.now_ms(),
        )
    assert item is not None
    clock.set(due)
    deleted, _ = await services.sweepers.sweep_once()
    assert deleted == []
    await services.announcer.deliver(plan.child_key)
    await quiesce(services)
    assert inbox_row(services, "grandchild-run").delivery_seq is not None
    deleted, _ = await services.sweepers.sweep_once()
    assert [e.key for e in deleted] == [plan.child_key]
