"""The dispatcher when delivery cannot happen: a requester that no longer exists (as in
OpenClaw: hand the rows to its own requester, else retire them) and a store that fails (retries with
backoff, then give up after ``ANNOUNCE_GIVE_UP_MS``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from clawline.collab.announce import ANNOUNCE_GIVE_UP_MS, ANNOUNCE_RETRY_DELAYS_MS
from clawline.errors import StoreError
from clawline.records.transcript import TranscriptEvent
from clawline.runtime import Runtime
from clawline.store.sqlite.store import _Transaction
from clawline.testing import FakeClock
from clawline.types import JSONObject
from tests.collab.conftest import MakeServices
from tests.collab.support import runner_of, transcript
from tests.collab.test_announce_support import (
    MAIN,
    Gate,
    announcing,
    child,
    eventually,
    inbox_row,
    occurrences,
    quiesce,
    record,
    requester,
    run_child,
    start_child,
    task_of,
    user_messages,
)

OTHER = "agent:main:other"


@pytest.fixture
async def make(make_services: MakeServices) -> AsyncIterator[MakeServices]:
    async with announcing(make_services) as factory:
        yield factory


# --- the requester is gone -----------------------------------------------------------------


async def test_rows_of_a_deleted_subagent_requester_go_to_its_requester(
    make: MakeServices,
) -> None:
    services = await make({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}})
    await requester(services)
    runner_of(services).script(MAIN, "the grandchild finished")
    orchestrator = await run_child(services, reply="ANNOUNCE_SKIP", max_depth=2)
    gate = Gate("grandchild result")
    leaf = await child(services, orchestrator.child_key, reply=gate, max_depth=2)
    await start_child(services, leaf)
    await asyncio.wait_for(gate.entered.wait(), 5)
    await services.call(services.catalog.delete, orchestrator.child_key)
    gate.open()
    await eventually(lambda: not record(services, leaf.run_id).active)
    await quiesce(services)

    row = inbox_row(services, leaf.run_id)
    assert row.requester_session_key == MAIN
    assert row.delivery_seq is not None
    assert occurrences(services, ["\ngrandchild result\n"]) == [1]
    assert task_of(services, leaf).delivery_status == "delivered"
    assert [turn.message for turn in runner_of(services).calls_on(MAIN)] == [row.payload["text"]]


async def test_rows_of_a_deleted_top_level_requester_are_retired(make: MakeServices) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services, OTHER)
    gate = Gate("nobody hears this")
    plan = await child(services, OTHER, reply=gate)
    await start_child(services, plan)
    await asyncio.wait_for(gate.entered.wait(), 5)
    await services.call(services.catalog.delete, OTHER)
    gate.open()
    await eventually(lambda: not record(services, plan.run_id).active)
    await quiesce(services)
    row = inbox_row(services, plan.run_id)
    assert (row.requester_session_key, row.delivered_at, row.delivery_seq) == (
        OTHER,
        clock.now_ms(),
        None,
    )
    assert task_of(services, plan).delivery_status == "parent_missing"
    assert services.store.get(OTHER) is None  # not re-created by a delivery
    assert runner_of(services).calls_on(OTHER) == []
    assert services.store.inbox.requesters_with_pending() == []


async def test_rows_are_retired_when_requester_and_its_requester_are_gone(
    make: MakeServices,
) -> None:
    services = await make({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}})
    await requester(services)
    orchestrator = await run_child(services, reply="NO_REPLY", max_depth=2)
    gate = Gate("orphaned result")
    leaf = await child(services, orchestrator.child_key, reply=gate, max_depth=2)
    await start_child(services, leaf)
    await asyncio.wait_for(gate.entered.wait(), 5)
    await services.call(services.catalog.delete, orchestrator.child_key)
    await services.call(services.catalog.delete, MAIN)
    gate.open()
    await eventually(lambda: not record(services, leaf.run_id).active)
    await quiesce(services)
    row = inbox_row(services, leaf.run_id)
    assert (row.requester_session_key, row.delivery_seq) == (orchestrator.child_key, None)
    assert row.delivered_at is not None
    assert task_of(services, leaf).delivery_status == "parent_missing"
    assert services.store.get(MAIN) is None
    assert runner_of(services).calls_on(MAIN) == []
    # Its own run only: nothing was delivered to it.
    assert len(runner_of(services).calls_on(orchestrator.child_key)) == 1


# --- a failing store -----------------------------------------------------------------------


class BrokenTranscript:
    """Appending to one session's transcript raises ``StoreError`` while ``failing`` (the
    store's own write failing, e.g. a full disk), and counts the attempts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, session_id: str) -> None:
        self.failing = True
        self.attempts = 0
        original = _Transaction.append_event

        def append_event(
            tx: _Transaction,
            sid: str,
            ts: int,
            type: str,
            data: JSONObject,
            *,
            session_key: str = "",
        ) -> TranscriptEvent:
            if sid == session_id:
                self.attempts += 1
                if self.failing:
                    raise StoreError("disk I/O error")
            return original(tx, sid, ts, type, data, session_key=session_key)

        monkeypatch.setattr(_Transaction, "append_event", append_event)


async def broken_main(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> tuple[Runtime, FakeClock, BrokenTranscript]:
    clock = FakeClock()
    services = await make(clock=clock)
    main = await requester(services)
    return services, clock, BrokenTranscript(monkeypatch, main.session_id)


async def test_a_failed_delivery_is_retried_with_backoff(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    services, clock, broken = await broken_main(make, monkeypatch)
    plan = await run_child(services, reply="will arrive eventually")
    await quiesce(services)
    assert broken.attempts == 1  # tried right after the completion was written
    assert inbox_row(services, plan.run_id).pending
    announcer = services.announcer
    delays = [*ANNOUNCE_RETRY_DELAYS_MS, ANNOUNCE_RETRY_DELAYS_MS[-1]]
    assert delays == [1_000, 2_000, 4_000, 8_000, 8_000]
    for attempt, delay in enumerate(delays, start=2):
        clock.advance(delay - 1)
        assert await announcer.deliver(MAIN) is None
        await announcer.tick()
        await quiesce(services)
        assert broken.attempts == attempt - 1, f"tried early before attempt {attempt}"
        clock.advance(1)
        await announcer.tick()
        await quiesce(services)
        assert broken.attempts == attempt
        assert inbox_row(services, plan.run_id).pending
    assert user_messages(services) == []
    assert task_of(services, plan).delivery_status == "pending"

    broken.failing = False
    clock.advance(ANNOUNCE_RETRY_DELAYS_MS[-1])
    await announcer.tick()
    await quiesce(services)
    row = inbox_row(services, plan.run_id)
    assert row.delivery_seq is not None
    assert occurrences(services, ["\nwill arrive eventually\n"]) == [1]
    assert task_of(services, plan).delivery_status == "delivered"
    assert len(runner_of(services).calls_on(MAIN)) == 1

    # A success resets the backoff: the next failure waits 1 s again.
    broken.failing = True
    second = await run_child(services, reply="second result")
    await quiesce(services)
    tried = broken.attempts
    clock.advance(ANNOUNCE_RETRY_DELAYS_MS[0])
    await announcer.tick()
    await quiesce(services)
    assert broken.attempts == tried + 1
    assert inbox_row(services, second.run_id).pending


async def test_undeliverable_rows_are_given_up_after_the_limit(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    services, clock, broken = await broken_main(make, monkeypatch)
    plan = await run_child(services, reply="lost cause")
    await quiesce(services)
    written = inbox_row(services, plan.run_id).created_at
    announcer = services.announcer
    for delay in ANNOUNCE_RETRY_DELAYS_MS:
        clock.advance(delay)
        await announcer.tick()
        await quiesce(services)
    assert broken.attempts == len(ANNOUNCE_RETRY_DELAYS_MS) + 1
    clock.set(written + ANNOUNCE_GIVE_UP_MS - 60_000)
    late = await run_child(services, reply="a later completion")
    await quiesce(services)

    clock.set(written + ANNOUNCE_GIVE_UP_MS - 1)
    await announcer.tick()
    await quiesce(services)
    assert inbox_row(services, plan.run_id).pending
    assert task_of(services, plan).delivery_status == "pending"

    clock.set(written + ANNOUNCE_GIVE_UP_MS)
    await announcer.tick()
    await quiesce(services)
    row = inbox_row(services, plan.run_id)
    assert (row.delivered_at, row.delivery_seq) == (written + ANNOUNCE_GIVE_UP_MS, None)
    assert task_of(services, plan).delivery_status == "failed"
    assert inbox_row(services, late.run_id).pending  # not yet past its own limit
    assert task_of(services, late).delivery_status == "pending"

    broken.failing = False
    clock.advance(ANNOUNCE_RETRY_DELAYS_MS[-1])
    await announcer.tick()
    await quiesce(services)
    assert inbox_row(services, late.run_id).delivery_seq is not None
    assert occurrences(services, ["\nlost cause\n", "\na later completion\n"]) == [0, 1]
    assert inbox_row(services, plan.run_id).delivery_seq is None
    assert task_of(services, plan).delivery_status == "failed"


async def test_a_delivery_that_succeeds_as_the_give_up_runs_stays_delivered(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store heals just as the rows reach the give-up limit: the tick's delivery and its
    give-up pass race. Whichever wins, the row and its task must agree."""
    services, clock, broken = await broken_main(make, monkeypatch)
    plan = await run_child(services, reply="just in time")
    await quiesce(services)
    written = inbox_row(services, plan.run_id).created_at
    announcer = services.announcer
    for delay in ANNOUNCE_RETRY_DELAYS_MS:
        clock.advance(delay)
        await announcer.tick()
        await quiesce(services)
    broken.failing = False
    clock.set(written + ANNOUNCE_GIVE_UP_MS)
    await announcer.tick()
    await quiesce(services)
    row = inbox_row(services, plan.run_id)
    delivery = task_of(services, plan).delivery_status
    if row.delivery_seq is None:
        assert delivery == "failed"
        assert occurrences(services, ["\njust in time\n"]) == [0]
    else:
        assert delivery == "delivered"
        assert occurrences(services, ["\njust in time\n"]) == [1]


async def test_a_failed_attempt_writes_nothing(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    services, _clock, broken = await broken_main(make, monkeypatch)
    plan = await run_child(services, reply="not yet")
    await quiesce(services)
    assert broken.attempts == 1
    row = inbox_row(services, plan.run_id)
    assert (row.delivered_at, row.delivery_seq) == (None, None)
    assert transcript(services, MAIN) == []
    assert task_of(services, plan).delivery_status == "pending"
    assert runner_of(services).calls_on(MAIN) == []
    assert services.store.inbox.requesters_with_pending() == [MAIN]
