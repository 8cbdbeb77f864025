"""A spawn is keyed by the requester's session id and its tool call id
(:mod:`clawline.collab.spawn_key`): the same call again answers the child it made — the same
``childSessionKey``, ``runId``, ``mode`` and note — and creates and starts nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from clawline.agents.tools.base import ToolContext
from clawline.collab.spawn import SESSION_MODE_NOTE
from clawline.runtime import Runtime
from clawline.store.collab import TaskQuery
from clawline.testing.channels import threads_channel
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, invoke, runner_of, tool_ctx
from tests.collab.test_spawn_lineage import (
    control,
    ended,
    gated,
    limits,
    make_requester,
    record_of,
    spawn_tool,
    wait_until,
)
from tests.collab.test_spawn_validation import forum_services

TASK = "count to ten"


def keyed(services: Runtime, call_id: str, key: str = MAIN) -> ToolContext:
    return replace(tool_ctx(services, key), tool_call_id=call_id)


def written(services: Runtime) -> tuple[int, int, int, int]:
    """Tasks, run records and child sessions of MAIN, and runs the runner has seen."""
    store = services.store
    return (
        len(store.tasks.page(TaskQuery(owner_key=MAIN), None, 100).tasks),
        len(store.runs.for_requester(MAIN)),
        len(store.children(MAIN)),
        len(runner_of(services).calls),
    )


async def test_the_same_call_again_answers_its_child_and_creates_nothing(
    make_services: MakeServices,
) -> None:
    services = await make_services(limits(maxChildrenPerAgent=1))
    gate = gated(services)
    requester = await make_requester(services)
    ctx = keyed(services, "call_1")
    first = await invoke(spawn_tool(services), ctx, task=TASK)
    assert first["status"] == "accepted", first
    assert record_of(services, first["runId"]).spawn_key == f"{requester.session_id}/call_1"
    await wait_until(lambda: len(runner_of(services).calls) == 1)  # the child's run started
    before = written(services)
    # the limit is reached (its own child), yet the redo answers that child
    again = await invoke(spawn_tool(services), ctx, task=TASK)
    assert again == first
    assert written(services) == before
    refused = await invoke(spawn_tool(services), keyed(services, "call_2"), task=TASK)
    assert refused["status"] == "forbidden"  # another call is another spawn
    gate.release.set()
    await ended(services, first["runId"])
    assert (
        await invoke(spawn_tool(services), ctx, task=TASK) == first
    )  # ended records keep their key
    after = written(services)
    assert after[:3] == before[:3]


async def test_a_reset_requester_spawns_anew_for_an_old_call_id(
    make_services: MakeServices,
) -> None:
    services = await make_services()
    gated(services)
    await make_requester(services)
    first = await invoke(spawn_tool(services), keyed(services, "call_0"), task=TASK)
    await services.call(services.catalog.reset, MAIN)
    second = await invoke(spawn_tool(services), keyed(services, "call_0"), task=TASK)
    assert second["status"] == "accepted", second
    assert second["childSessionKey"] != first["childSessionKey"]
    assert len(services.store.runs.for_requester(MAIN)) == 2


async def test_calls_without_an_id_always_spawn(services: Runtime) -> None:
    gated(services)
    await make_requester(services)
    results: list[dict[str, Any]] = [
        await invoke(spawn_tool(services), tool_ctx(services, MAIN), task=TASK) for _ in range(2)
    ]
    assert [r["status"] for r in results] == ["accepted", "accepted"]
    assert len({r["childSessionKey"] for r in results}) == 2
    assert all(record_of(services, r["runId"]).spawn_key is None for r in results)


async def test_a_thread_bound_session_child_is_answered_with_its_note(
    make_services: MakeServices,
) -> None:
    services = await forum_services(make_services, threads_channel("forum"))
    gated(services)
    ctx = keyed(services, "call_3")
    first = await invoke(spawn_tool(services), ctx, task=TASK, thread=True, mode="session")
    assert first["status"] == "accepted", first
    assert first["note"] == SESSION_MODE_NOTE
    await wait_until(lambda: len(runner_of(services).calls) == 1)  # the child's run started
    before = written(services)
    assert await invoke(spawn_tool(services), ctx, task=TASK, thread=True, mode="session") == first
    assert written(services) == before


async def test_a_steered_child_keeps_its_key_on_the_spawn_record(
    make_services: MakeServices,
) -> None:
    services = await make_services()
    gate = gated(services)
    await make_requester(services)
    ctx = keyed(services, "call_4")
    first = await invoke(spawn_tool(services), ctx, task=TASK, label="poet")
    await wait_until(lambda: gate.running == 1)
    steered = await control(services, action="steer", target="poet", message="faster")
    assert steered["status"] == "accepted", steered
    assert record_of(services, steered["runId"]).spawn_key is None
    assert record_of(services, first["runId"]).spawn_key is not None
    assert await invoke(spawn_tool(services), ctx, task=TASK, label="poet") == first
