"""The ``subagent`` lane (OpenClaw's): at most
``agents.defaults.subagents.maxConcurrent`` children run at once, across requesters; the others
wait their turn without holding up the spawns that started them."""

from __future__ import annotations

import pytest

from clawline.runtime import Runtime
from clawline.testing import drained
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, runner_of
from tests.collab.test_spawn_lineage import (
    accepted,
    control,
    ended,
    gated,
    limits,
    make_requester,
    quiesce,
    record_of,
    task_of,
    wait_until,
)

OTHER = "agent:main:dashboard:other"


@pytest.fixture
async def services_one_slot(make_services: MakeServices) -> Runtime:
    services = await make_services(limits(maxConcurrent=1))
    await make_requester(services)
    return services


async def test_at_most_max_concurrent_children_run(make_services: MakeServices) -> None:
    services = await make_services(limits(maxConcurrent=2, maxChildrenPerAgent=5))
    await make_requester(services)
    gate = gated(services)
    runs = [(await accepted(services, task=f"job {n}"))["runId"] for n in range(5)]
    await wait_until(lambda: gate.running == 2)
    await wait_until(lambda: len(services.runs.active_runs()) == 5)
    # The three others are accepted and recorded, queued behind the lane, not started.
    assert len(runner_of(services).calls) == 2
    assert all(record_of(services, run_id).active for run_id in runs)
    assert all(task_of(services, run_id).status == "running" for run_id in runs)
    gate.release.set()
    for run_id in runs:
        assert (await ended(services, run_id)).outcome == {"status": "ok"}
    assert gate.peak == 2
    assert len(gate.entered) == 5
    await quiesce(services)


async def test_a_slot_frees_as_soon_as_one_child_ends(make_services: MakeServices) -> None:
    services = await make_services(limits(maxConcurrent=1))
    await make_requester(services)
    gate = gated(services)
    first = await accepted(services, task="first")
    second = await accepted(services, task="second")
    await wait_until(lambda: gate.running == 1)
    await drained(services)  # the second child would have started by now, were it allowed to
    assert gate.entered == [first["childSessionKey"]]
    gate.release.set()
    await ended(services, first["runId"])
    await ended(services, second["runId"])
    assert gate.entered == [first["childSessionKey"], second["childSessionKey"]]
    assert gate.peak == 1
    await quiesce(services)


async def test_the_limit_is_shared_by_all_requesters(make_services: MakeServices) -> None:
    services = await make_services(limits(maxConcurrent=2))
    await make_requester(services)
    await make_requester(services, OTHER)
    gate = gated(services)
    for requester in (MAIN, OTHER, MAIN, OTHER):
        await accepted(services, requester, task="t")
    await wait_until(lambda: gate.running == 2)
    await wait_until(lambda: len(services.runs.active_runs()) == 4)
    assert gate.running == 2
    gate.release.set()
    await wait_until(lambda: len(gate.entered) == 4)
    assert gate.peak == 2
    await quiesce(services)


async def test_other_lanes_are_not_limited(make_services: MakeServices) -> None:
    services = await make_services(limits(maxConcurrent=1))
    await make_requester(services)
    gate = gated(services)
    await accepted(services, task="t")
    await wait_until(lambda: gate.running == 1)
    ack = await services.runs.send(session_key=OTHER, message="hello", idempotency_key="plain-1")
    outcome = await services.runs.wait_outcome(ack.run_id, 5_000)
    assert outcome is not None
    assert outcome.status == "done"
    gate.release.set()
    await quiesce(services)


async def test_a_queued_child_can_be_killed_before_it_starts(
    services_one_slot: Runtime,
) -> None:
    services = services_one_slot
    gate = gated(services)
    first = await accepted(services, task="first", label="first")
    second = await accepted(services, task="second", label="second")
    await wait_until(lambda: gate.running == 1)
    result = await control(services, action="kill", target="second")
    assert [item["runId"] for item in result["killed"]] == [second["runId"]]
    assert (await ended(services, second["runId"])).suppress_announce_reason == "killed"
    gate.release.set()
    await ended(services, first["runId"])
    assert gate.entered == [first["childSessionKey"]]  # the killed one never ran
    assert services.store.inbox.by_run(second["runId"]) is None
    await quiesce(services)
