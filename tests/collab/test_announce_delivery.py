"""The announce dispatcher delivering the durable inbox (design-agents.md, "Spawning,
completion and the durable announce inbox"): to idle requesters at once, to busy ones when
their run ends (all pending completions together, in order, in one turn), exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

import pytest

from clawline.agents.runner import RunContext
from clawline.collab import announce as announce_module
from clawline.collab.announce import ANNOUNCE_QUEUE_AFTER_MS, Announcer
from clawline.collab.spawn_plan import subagent_system_prompt
from clawline.events import DomainEvent, MessageAppended
from clawline.records.collab import InboxItem
from clawline.runtime import Runtime
from clawline.testing import FakeClock, drained
from tests.collab.conftest import MakeServices
from tests.collab.support import ScriptedRunner, runner_of, transcript
from tests.collab.test_announce_support import (
    MAIN,
    Gate,
    announcing,
    child,
    entry,
    eventually,
    inbox_row,
    occurrences,
    quiesce,
    requester,
    run_child,
    start_child,
    task_of,
    text_of,
    user_messages,
)


@pytest.fixture
async def make(make_services: MakeServices) -> AsyncIterator[MakeServices]:
    async with announcing(make_services) as factory:
        yield factory


def completion_text(rows: list[InboxItem]) -> str:
    texts = [row.payload["text"] for row in rows]
    assert all(isinstance(text, str) for text in texts)
    return "\n\n".join(str(text) for text in texts)


def seq_of(services: Runtime, key: str, run_id: str, role: str = "user") -> int:
    events = services.store.events(entry(services, key).session_id)
    found = [
        event.seq
        for event in events
        if event.data.get("runId") == run_id and event.data.get("role") == role
    ]
    assert len(found) == 1, found
    return found[0]


async def busy_main(services: Runtime, gate: Gate, *after: str) -> None:
    """Start a turn on MAIN that holds until ``gate`` opens."""
    runner_of(services).script(MAIN, gate, *after)
    await services.runs.send(session_key=MAIN, message="do the work", idempotency_key="main-turn")
    await asyncio.wait_for(gate.entered.wait(), 5)


# --- an idle requester ---------------------------------------------------------------------


async def test_an_idle_requester_gets_the_completion_and_a_turn_on_it(
    make: MakeServices,
) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    published: list[DomainEvent] = []
    services.events.subscribe(published.append)
    runner_of(services).script(MAIN, "Your build check says step 3 failed.")
    plan = await run_child(services, reply="step 3 failed", label="build check")
    await quiesce(services)

    row = inbox_row(services, plan.run_id)
    run_id = f"announce:{row.id}-{row.id}"
    messages = transcript(services, MAIN)
    assert [message.get("role") for message in messages] == ["user", "assistant"]
    user, reply = messages
    assert user == {
        "role": "user",
        "content": [{"type": "text", "text": row.payload["text"]}],
        "runId": run_id,
        "provenance": {
            "kind": "inter_session",
            "sourceTool": "subagent_announce",
            "sourceChannel": "webchat",
            "sourceSessionKeys": [plan.child_key],
        },
        "internalEvents": [row.payload["event"]],
        "announce": {"inboxIds": [row.id], "runIds": [plan.run_id]},
    }
    assert (reply.get("runId"), text_of(reply)) == (run_id, "Your build check says step 3 failed.")

    assert row.delivered_at == clock.now_ms()
    assert row.delivery_seq == seq_of(services, MAIN, run_id)
    assert task_of(services, plan).delivery_status == "delivered"
    [turn] = runner_of(services).calls_on(MAIN)
    assert (turn.run_id, turn.message, turn.origin, turn.lane, turn.extra) == (
        run_id,
        row.payload["text"],
        "agent",
        None,
        None,
    )
    assert entry(services, MAIN).status == "done"
    assert services.announcer.pending_requesters() == set()
    [shown] = [
        e
        for e in published
        if isinstance(e, MessageAppended)
        and e.run_id == run_id
        and e.event.data.get("role") == "user"
    ]
    assert shown.session_key == MAIN
    assert shown.event.seq == row.delivery_seq


async def test_the_turn_reads_the_delivered_message_without_writing_another(
    make: MakeServices,
) -> None:
    services = await make()
    await requester(services)
    seen: list[int | None] = []

    async def turn(ctx: RunContext) -> str:
        seen.append(ctx.message_seq)
        return "noted"

    runner_of(services).script(MAIN, turn)
    plan = await run_child(services, reply="42")
    await quiesce(services)
    row = inbox_row(services, plan.run_id)
    assert seen == [row.delivery_seq]
    assert [text_of(m) for m in user_messages(services)] == [row.payload["text"]]


async def test_a_subagent_requester_runs_its_turn_on_the_subagent_lane(
    make: MakeServices,
) -> None:
    services = await make({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}})
    await requester(services)
    orchestrator = await child(services, reply=None, label="orch", max_depth=2)
    leaf = await run_child(services, orchestrator.child_key, reply="leaf done", max_depth=2)
    await quiesce(services)
    row = inbox_row(services, leaf.run_id)
    assert row.delivery_seq is not None
    [turn] = runner_of(services).calls_on(orchestrator.child_key)
    assert (turn.lane, turn.message) == ("subagent", row.payload["text"])
    assert turn.extra == subagent_system_prompt(
        requester=MAIN, child_key=orchestrator.child_key, label="orch", depth=1, max_depth=2
    )
    assert runner_of(services).calls_on(MAIN) == []


# --- a busy requester ----------------------------------------------------------------------


async def test_a_busy_requester_gets_all_completions_in_one_turn_after_its_run(
    make: MakeServices,
) -> None:
    services = await make()
    await requester(services)
    gate = Gate("main turn done")
    await busy_main(services, gate, "ack of all three")
    plans = [await run_child(services, reply=f"result {n}", label=f"c{n}") for n in range(3)]
    await drained(services)
    rows = [inbox_row(services, plan.run_id) for plan in plans]
    assert all(row.pending for row in rows)
    assert [text_of(m) for m in user_messages(services)] == ["do the work"]
    assert services.announcer.pending_requesters() == {MAIN}
    assert [task_of(services, plan).delivery_status for plan in plans] == ["pending"] * 3

    gate.open()
    await quiesce(services)
    rows = [inbox_row(services, plan.run_id) for plan in plans]
    assert [row.id for row in rows] == sorted(row.id for row in rows)
    run_id = f"announce:{rows[0].id}-{rows[-1].id}"
    messages = transcript(services, MAIN)
    assert [(m.get("role"), m.get("runId")) for m in messages] == [
        ("user", "main-turn"),
        ("assistant", "main-turn"),
        ("user", run_id),
        ("assistant", run_id),
    ]
    delivered = messages[2]
    assert text_of(delivered) == completion_text(rows)
    assert delivered["internalEvents"] == [row.payload["event"] for row in rows]
    announce = delivered["announce"]
    assert isinstance(announce, Mapping)
    assert announce["inboxIds"] == [row.id for row in rows]
    seq = seq_of(services, MAIN, run_id)
    assert [row.delivery_seq for row in rows] == [seq] * 3
    assert [task_of(services, plan).delivery_status for plan in plans] == ["delivered"] * 3
    turns = runner_of(services).calls_on(MAIN)
    assert [turn.run_id for turn in turns] == ["main-turn", run_id]
    assert occurrences(services, [f"\nresult {n}\n" for n in range(3)]) == [1, 1, 1]


async def test_completions_arriving_during_an_announce_turn_get_the_next_turn(
    make: MakeServices,
) -> None:
    services = await make()
    await requester(services)
    announce_gate = Gate("first ack")
    runner_of(services).script(MAIN, announce_gate, "second ack")
    first = await run_child(services, reply="first result")
    await asyncio.wait_for(announce_gate.entered.wait(), 5)
    second = await run_child(services, reply="second result")
    third = await run_child(services, reply="third result")
    await drained(services)
    assert inbox_row(services, second.run_id).pending
    announce_gate.open()
    await quiesce(services)
    one, two, three = (inbox_row(services, p.run_id) for p in (first, second, third))
    assert one.delivery_seq is not None
    assert two.delivery_seq is not None
    assert two.delivery_seq == three.delivery_seq
    assert two.delivery_seq > one.delivery_seq
    assert [turn.message for turn in runner_of(services).calls_on(MAIN)] == [
        completion_text([one]),
        completion_text([two, three]),
    ]


async def test_a_long_backlog_is_delivered_in_batches_in_order(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(announce_module, "ANNOUNCE_BATCH", 2)
    services = await make()
    await requester(services)
    gate = Gate()
    await busy_main(services, gate)
    plans = [await run_child(services, reply=f"r{n}") for n in range(5)]
    gate.open()
    await quiesce(services)
    rows = [inbox_row(services, plan.run_id) for plan in plans]
    turns = runner_of(services).calls_on(MAIN)[1:]
    assert [turn.message for turn in turns] == [
        completion_text(rows[0:2]),
        completion_text(rows[2:4]),
        completion_text(rows[4:5]),
    ]
    seqs = [row.delivery_seq for row in rows]
    assert seqs[0] == seqs[1]
    assert seqs[2] == seqs[3]
    assert all(isinstance(seq, int) for seq in seqs)
    assert len(set(seqs)) == 3


async def test_a_requester_busy_for_too_long_gets_its_completions_queued(
    make: MakeServices,
) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services)
    gate = Gate("long turn done")
    await busy_main(services, gate, "ack")
    plan = await run_child(services, reply="patient result")
    row = inbox_row(services, plan.run_id)
    clock.set(row.created_at + ANNOUNCE_QUEUE_AFTER_MS - 1)
    await services.announcer.tick()
    await drained(services)
    assert inbox_row(services, plan.run_id).pending

    clock.advance(1)
    await services.announcer.tick()
    await eventually(lambda: not inbox_row(services, plan.run_id).pending)
    assert services.runs.has_active_run(MAIN)  # delivered while the long turn still runs
    run_id = f"announce:{row.id}-{row.id}"
    gate.open()
    await quiesce(services)
    assert [(m.get("role"), m.get("runId")) for m in transcript(services, MAIN)] == [
        ("user", "main-turn"),
        ("user", run_id),
        ("assistant", "main-turn"),
        ("assistant", run_id),
    ]
    assert [turn.run_id for turn in runner_of(services).calls_on(MAIN)] == ["main-turn", run_id]


# --- exactly once --------------------------------------------------------------------------


async def test_concurrent_deliveries_and_kicks_deliver_each_row_once(make: MakeServices) -> None:
    services = await make()
    await requester(services)
    gate = Gate()
    await busy_main(services, gate)
    plans = [await run_child(services, reply=f"only once {n}") for n in range(4)]
    announcer = services.announcer
    second = Announcer(  # another dispatcher on the same store
        catalog=services.catalog,
        store=services.store,
        workers=services.workers,
        clock=services.clock,
        tasks=services.tasks,
        runs=services.runs,
        config=services.agents_config,
        recovery=services.recovery,
    )
    services.runs.on_run_end(second.run_ended)
    gate.open()
    for _ in range(25):
        announcer.kick(MAIN)
    results = await asyncio.gather(
        *(announcer.deliver(MAIN) for _ in range(10)),
        *(announcer.deliver(MAIN, force=True) for _ in range(10)),
        *(second.deliver(MAIN, force=True) for _ in range(10)),
    )
    for _ in range(25):
        announcer.kick(MAIN)
        second.kick(MAIN)
    await quiesce(services)
    await second.stop()
    await quiesce(services)
    delivered = [result for result in results if result is not None]
    assert len(delivered) <= 2
    assert occurrences(services, [f"\nonly once {n}\n" for n in range(4)]) == [1, 1, 1, 1]
    rows = [inbox_row(services, plan.run_id) for plan in plans]
    assert all(row.delivery_seq is not None for row in rows)
    completion_turns = [t for t in runner_of(services).calls_on(MAIN) if t.run_id != "main-turn"]
    assert sorted(t.run_id for t in completion_turns) == sorted(
        {f"announce:{ids[0]}-{ids[-1]}" for ids in _batches(services)}
    )


def _batches(services: Runtime) -> list[list[int]]:
    """The inbox ids of every delivered completion message of MAIN."""
    batches: list[list[int]] = []
    for message in user_messages(services):
        announce = message.get("announce")
        if isinstance(announce, Mapping):
            ids = announce["inboxIds"]
            assert isinstance(ids, list)
            batches.append([int(str(i)) for i in ids])
    return batches


async def test_many_children_finishing_together_are_each_delivered_once(
    make: MakeServices,
) -> None:
    services = await make()
    await requester(services)
    plans = [await child(services, reply=f"parallel {n}") for n in range(12)]
    await asyncio.gather(*(start_child(services, plan) for plan in plans))
    await eventually(lambda: all(services.store.inbox.by_run(p.run_id) for p in plans))
    await quiesce(services)
    assert occurrences(services, [f"\nparallel {n}\n" for n in range(12)]) == [1] * 12
    rows = {row.id: row for row in (inbox_row(services, p.run_id) for p in plans)}
    batches = _batches(services)
    assert sorted(i for batch in batches for i in batch) == sorted(rows)
    for batch in batches:
        assert batch == sorted(batch)
        assert len({rows[i].delivery_seq for i in batch}) == 1
    assert len(runner_of(services).calls_on(MAIN)) == len(batches)


async def test_two_gateways_on_one_store_deliver_a_row_once(make: MakeServices) -> None:
    services = await make()
    await requester(services)
    gate = Gate()
    await busy_main(services, gate)
    plans = [await run_child(services, reply=f"shared {n}") for n in range(3)]
    other = Runtime.open(services.settings)
    other.runs.runner = ScriptedRunner("other ack")
    try:
        results = await asyncio.gather(
            services.announcer.deliver(MAIN, force=True),
            other.announcer.deliver(MAIN, force=True),
        )
        assert sum(result is not None for result in results) == 1
        gate.open()
        await quiesce(services)
        await quiesce(other)
    finally:
        await other.runs.shutdown()
        await other.announcer.stop()
        other.close()
    assert occurrences(services, [f"\nshared {n}\n" for n in range(3)]) == [1, 1, 1]
    assert all(inbox_row(services, plan.run_id).delivery_seq is not None for plan in plans)


# --- a crash between the delivery and the requester's turn ----------------------------------


async def test_a_delivery_whose_turn_a_crash_cut_off_gets_its_turn_at_the_next_start(
    make: MakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    services = await make(clock=clock)
    await requester(services, lastChannel="webhook", lastTo="ivy")
    cut_off: list[str] = []

    async def the_process_dies(
        delivery: announce_module.Delivery, *, key: str | None = None
    ) -> None:
        cut_off.append(delivery.run_id)  # committed; the turn never starts

    monkeypatch.setattr(services.announcer, "_start_turn", the_process_dies)
    plan = await run_child(services, reply="step 3 failed")
    await eventually(lambda: bool(cut_off))
    row = inbox_row(services, plan.run_id)
    assert row.delivered_at is not None
    assert [message.get("role") for message in transcript(services, MAIN)] == ["user"]
    monkeypatch.undo()
    runner_of(services).script(MAIN, "Step 3 failed.")

    await services.announcer.start()  # the next start
    await quiesce(services)

    messages = transcript(services, MAIN)
    assert [(m.get("role"), text_of(m)) for m in messages] == [
        ("user", row.payload["text"]),
        ("assistant", "Step 3 failed."),
    ]
    [turn] = runner_of(services).calls_on(MAIN)
    assert turn.run_id == f"{cut_off[0]}:resumed:{clock.now_ms()}"  # a fresh key
    assert turn.message == row.payload["text"]
    [queued] = services.store.outbox.page(None, None, 10)
    assert (queued.kind, queued.text, queued.target.to) == ("completion", "Step 3 failed.", "ivy")

    await services.announcer.start()  # and the one after: answered, nothing again
    await quiesce(services)
    assert len(runner_of(services).calls_on(MAIN)) == 1
    assert len(services.store.outbox.page(None, None, 10)) == 1
