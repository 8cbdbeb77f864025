"""``tasks.list``, ``tasks.get`` and ``tasks.cancel`` over a real socket."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from clawline.records.task import TaskRecord
from clawline.testing.live_gateway import RunningGateway
from tests.agents.support import BlockingRunner
from tests.gateway.conftest import TOKEN
from tests.gateway.support import without_details
from tests.gateway.wire import WireClient

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:c1"


async def error_of(client: WireClient, method: str, params: Any = None) -> dict[str, Any]:
    frame = await client.call(method, params)
    assert frame["ok"] is False, frame
    return without_details(frame["error"])


def refusal(message: str) -> dict[str, str]:
    return {"code": "INVALID_REQUEST", "message": message}


async def make(gw: RunningGateway, n: int, **options: Any) -> TaskRecord:
    arguments: dict[str, Any] = {
        "runtime": "subagent",
        "task": f"task {n}",
        "requester_session_key": MAIN,
        "child_session_key": f"agent:main:subagent:c{n}",
        "run_id": f"run-{n}",
        "running": True,
    }
    arguments.update(options)
    registry = gw.runtime.tasks
    return await gw.runtime.call(lambda: registry.create(**arguments))


async def test_list_pages_newest_first_with_filters(gw: RunningGateway, client: WireClient) -> None:
    made = [await make(gw, n) for n in range(5)]
    other = await make(
        gw, 9, runtime="cli", requester_session_key="agent:main:other", child_session_key=None
    )
    done = await gw.runtime.call(gw.runtime.tasks.finish, made[0].task_id, "failed", error="x")
    everything = await client.ok("tasks.list", {})
    assert everything["count"] == 6
    assert everything["nextCursor"] is None
    newest = sorted([*made[1:], done, other], key=lambda t: (t.created_at, t.task_id), reverse=True)
    assert everything["tasks"] == [task.to_json() for task in newest]
    seen: list[str] = []
    params: dict[str, Any] = {"limit": 4}
    while True:
        page = await client.ok("tasks.list", params)
        seen.extend(task["taskId"] for task in page["tasks"])
        if page["nextCursor"] is None:
            break
        params = {"limit": 4, "cursor": page["nextCursor"]}
    assert seen == [task.task_id for task in newest]
    failed = await client.ok("tasks.list", {"status": "failed"})
    assert [task["taskId"] for task in failed["tasks"]] == [made[0].task_id]
    cli = await client.ok("tasks.list", {"runtime": "cli"})
    assert [task["taskId"] for task in cli["tasks"]] == [other.task_id]
    owned = await client.ok("tasks.list", {"ownerKey": "agent:main:other"})
    assert [task["taskId"] for task in owned["tasks"]] == [other.task_id]
    by_child = await client.ok("tasks.list", {"sessionKey": "agent:main:subagent:c3"})
    assert [task["taskId"] for task in by_child["tasks"]] == [made[3].task_id]
    by_alias = await client.ok("tasks.list", {"sessionKey": "main"})  # canonicalised
    assert by_alias["count"] == 5


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"status": "done"},
            "invalid tasks.list params: status must be one of 'queued', "
            "'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'lost'",
        ),
        ({"limit": 0}, "invalid tasks.list params: limit must be >= 1"),
        ({"limit": 1001}, "invalid tasks.list params: limit must be <= 1000"),
        ({"owner": "x"}, "invalid tasks.list params: unknown key 'owner'"),
        ({"cursor": "abc"}, "invalid cursor: malformed"),
    ],
)
async def test_list_refuses_bad_params(
    client: WireClient, params: dict[str, Any], message: str
) -> None:
    assert await error_of(client, "tasks.list", params) == refusal(message)


async def test_a_cursor_belongs_to_its_filters(gw: RunningGateway, client: WireClient) -> None:
    for n in range(3):
        await make(gw, n)
    page = await client.ok("tasks.list", {"limit": 1})
    error = await error_of(
        client, "tasks.list", {"limit": 1, "cursor": page["nextCursor"], "status": "running"}
    )
    assert error == refusal("invalid cursor: it belongs to a different query")


async def test_get_by_id_run_or_token(gw: RunningGateway, client: WireClient) -> None:
    task = await make(gw, 1)
    progressed = await gw.runtime.call(gw.runtime.tasks.progress, task.task_id, "half")
    expected = {
        "task": progressed.to_json(),
        "events": [
            {"at": task.created_at, "kind": "running", "summary": None},
            {"at": progressed.last_event_at, "kind": "progress", "summary": "half"},
        ],
    }
    assert await client.ok("tasks.get", {"taskId": task.task_id}) == expected
    assert await client.ok("tasks.get", {"runId": "run-1"}) == expected
    for token in (task.task_id, "run-1", "agent:main:subagent:c1", MAIN, "main"):
        assert await client.ok("tasks.get", {"token": token}) == expected, token


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Either taskId, runId, or token is required"),
        ({"taskId": "a", "runId": "b"}, "Provide either taskId, runId, or token (not multiple)"),
        ({"taskId": "nope"}, "task not found: nope"),
        ({"runId": "nope"}, "task not found for run: nope"),
        ({"token": "nope"}, "task not found: nope"),
        ({"token": "bad key"}, "task not found: bad key"),
        ({"taskId": ""}, "invalid tasks.get params: taskId must have at least 1 characters"),
    ],
)
async def test_get_refusals(client: WireClient, params: dict[str, Any], message: str) -> None:
    assert await error_of(client, "tasks.get", params) == refusal(message)


async def test_cancel_aborts_the_live_run(gw: RunningGateway, client: WireClient) -> None:
    runner = BlockingRunner()
    gw.runtime.runs.runner = runner
    await client.ok("chat.send", {"sessionKey": CHILD, "message": "work", "idempotencyKey": "r1"})
    await runner.started.wait()
    task = await make(gw, 1, run_id="r1")
    result = await client.ok("tasks.cancel", {"taskId": task.task_id, "reason": "not needed"})
    stored = gw.runtime.tasks.require(task.task_id)
    assert result == {"ok": True, "task": stored.to_json(), "aborted": True, "runIds": ["r1"]}
    assert (stored.status, stored.terminal_summary) == ("cancelled", "not needed")
    assert not gw.runtime.runs.has_active_run(CHILD)
    waited = await client.ok("agent.wait", {"runId": "r1"})
    assert (waited["status"], waited["error"]) == ("error", "aborted")


async def test_cancel_without_a_live_run(gw: RunningGateway, client: WireClient) -> None:
    queued = await make(gw, 1, running=False, run_id=None)
    result = await client.ok("tasks.cancel", {"taskId": queued.task_id})
    assert (result["task"]["status"], result["aborted"], result["runIds"]) == (
        "cancelled",
        False,
        [],
    )
    orphan = await make(gw, 2, child_session_key="not a key", run_id="r2")
    assert (await client.ok("tasks.cancel", {"taskId": orphan.task_id}))["aborted"] is False


async def test_cancel_refusals_change_nothing(gw: RunningGateway, client: WireClient) -> None:
    task = await make(gw, 1)
    done = await gw.runtime.call(gw.runtime.tasks.finish, task.task_id, "succeeded")
    assert await error_of(client, "tasks.cancel", {"taskId": task.task_id}) == refusal(
        f"invalid task transition: succeeded -> cancelled (task {task.task_id})"
    )
    assert gw.runtime.tasks.require(task.task_id) == done
    assert await error_of(client, "tasks.cancel", {"taskId": "nope"}) == refusal(
        "task not found: nope"
    )
    assert await error_of(client, "tasks.cancel", {}) == refusal(
        "invalid tasks.cancel params: taskId is required"
    )


async def test_readers_may_list_but_not_cancel(
    gw: RunningGateway, wire: Callable[..., Awaitable[WireClient]]
) -> None:
    task = await make(gw, 1)
    reader = await wire()
    assert (await reader.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
    assert (await reader.ok("tasks.list", {}))["count"] == 1
    assert (await reader.ok("tasks.get", {"taskId": task.task_id}))["task"]["status"] == "running"
    assert await error_of(reader, "tasks.cancel", {"taskId": task.task_id}) == refusal(
        "missing scope: operator.write"
    )
    assert gw.runtime.tasks.require(task.task_id).status == "running"


async def test_the_methods_are_advertised(wire: Callable[..., Awaitable[WireClient]]) -> None:
    hello = await (await wire()).connect(token=TOKEN)
    advertised = set(hello["payload"]["features"]["methods"])
    assert advertised >= {"tasks.list", "tasks.get", "tasks.cancel"}
