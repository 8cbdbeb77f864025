"""The ``subagents`` tool (OpenClaw's; shapes in ``clawline.collab.subagents_tool``):
``list``, how targets resolve, and the refusals with their exact texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from clawline.runtime import Runtime
from clawline.testing import FakeClock
from tests.collab.conftest import MakeServices
from tests.collab.test_spawn_lineage import (
    Gate,
    accepted,
    control,
    ended,
    gated,
    limits,
    make_requester,
    quiesce,
    wait_until,
)

START = 1_790_000_000_000
MINUTE = 60_000


@pytest.fixture
async def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
async def main(make_services: MakeServices, clock: FakeClock) -> Runtime:
    services = await make_services(limits(maxSpawnDepth=2), clock)
    await make_requester(services)
    return services


async def finished(services: Runtime, gate: Gate | None = None, **args: Any) -> dict[str, Any]:
    """A child that has already ended (done, or failed with ``gate.error``)."""
    gate = gated(services, gate)
    result = await accepted(services, **args)
    gate.release.set()
    await ended(services, result["runId"])
    return result


# --- list --------------------------------------------------------------------------------------


async def test_list_without_children(main: Runtime) -> None:
    assert await control(main) == {
        "status": "ok",
        "action": "list",
        "requesterSessionKey": "main",
        "total": 0,
        "active": [],
        "recent": [],
        "text": "No subagents.",
    }


async def test_list_shape_and_order(main: Runtime, clock: FakeClock) -> None:
    done = await finished(main, task="write docs", label="writer")
    clock.advance(1_000)
    failed = await finished(main, Gate(error="disk full"), task="build", label="builder")
    clock.advance(1_000)
    gate = gated(main)
    running = await accepted(main, task="watch the logs")
    await wait_until(lambda: gate.running == 1)
    clock.advance(5_000)

    result = await control(main, action="list")
    assert (result["status"], result["action"], result["total"]) == ("ok", "list", 3)
    assert result["requesterSessionKey"] == "main"
    assert result["active"] == [
        {
            "index": 1,
            "runId": running["runId"],
            "sessionKey": running["childSessionKey"],
            "label": None,
            "task": "watch the logs",
            "status": "running",
            "startedAt": START + 2_000,
            "endedAt": None,
            "runtimeMs": 5_000,
        }
    ]
    # Ended ones follow, the most recently ended first.
    assert [(c["index"], c["runId"], c["status"]) for c in result["recent"]] == [
        (2, failed["runId"], "failed"),
        (3, done["runId"], "done"),
    ]
    assert result["recent"][1] == {
        "index": 3,
        "runId": done["runId"],
        "sessionKey": done["childSessionKey"],
        "label": "writer",
        "task": "write docs",
        "status": "done",
        "startedAt": START,
        "endedAt": START,
        "runtimeMs": 0,
    }
    assert result["text"] == "\n".join(
        [
            f"1. {running['childSessionKey']} — running ({running['childSessionKey']})",
            f"2. builder — failed ({failed['childSessionKey']})",
            f"3. writer — done ({done['childSessionKey']})",
        ]
    )
    gate.release.set()
    await quiesce(main)


async def test_recent_minutes(main: Runtime, clock: FakeClock) -> None:
    await finished(main, task="old", label="old")
    clock.advance(31 * MINUTE)
    assert (await control(main))["total"] == 0  # default: the last 30 minutes
    listed = await control(main, recentMinutes=45)
    assert [c["label"] for c in listed["recent"]] == ["old"]
    clock.advance(15 * MINUTE)
    assert (await control(main, recentMinutes=45))["total"] == 0
    await quiesce(main)


async def test_active_children_are_listed_however_old(main: Runtime, clock: FakeClock) -> None:
    gate = gated(main)
    await accepted(main, task="long", label="long")
    clock.advance(600 * MINUTE)
    listed = await control(main, recentMinutes=1)
    assert [(c["label"], c["status"], c["runtimeMs"]) for c in listed["active"]] == [
        ("long", "running", 600 * MINUTE)
    ]
    gate.release.set()
    await quiesce(main)


async def test_a_session_lists_only_the_children_it_controls(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="orchestrate", label="boss")
    grandchild = await accepted(main, child["childSessionKey"], task="dig", label="digger")
    mine = await control(main)
    assert [c["label"] for c in mine["active"]] == ["boss"]
    theirs = await control(main, child["childSessionKey"])
    assert theirs["requesterSessionKey"] == child["childSessionKey"]
    assert [c["runId"] for c in theirs["active"]] == [grandchild["runId"]]
    gate.release.set()
    await quiesce(main)


async def test_a_leaf_controls_nothing(main: Runtime) -> None:
    gated(main)
    child = await accepted(main, task="t")
    grandchild = await accepted(main, child["childSessionKey"], task="t")
    for args in ({}, {"action": "kill", "target": "all"}, {"action": "steer"}):
        assert await control(main, grandchild["childSessionKey"], **args) == {
            "status": "forbidden",
            "error": "Leaf subagents cannot control other sessions.",
            "action": args.get("action", "list"),
        }


# --- arguments and targets ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reply"),
    [
        (
            {"action": "nuke"},
            {
                "status": "error",
                "error": 'action must be "list", "kill" or "steer"',
                "action": "nuke",
            },
        ),
        (
            {"action": 3},
            {"status": "error", "error": "action must be a string", "action": "list"},
        ),
        (
            {"recentMinutes": 0},
            {"status": "error", "error": "recentMinutes must be a number >= 1", "action": "list"},
        ),
        (
            {"action": "kill", "target": 5},
            {"status": "error", "error": "target must be a string", "action": "kill"},
        ),
        (
            {"action": "kill"},
            {"status": "error", "error": "Missing subagent target.", "action": "kill"},
        ),
        (
            {"action": "steer", "message": "go"},
            {"status": "error", "error": "Missing subagent target.", "action": "steer"},
        ),
        (
            {"action": "steer", "target": "1"},
            {"status": "error", "error": "Missing steer message.", "action": "steer"},
        ),
    ],
)
async def test_argument_errors(main: Runtime, args: dict[str, Any], reply: dict[str, Any]) -> None:
    assert await control(main, **args) == reply


@pytest.mark.parametrize("target", ["nope", "0", "#2", "2", "agent:main:subagent:unknown", "all"])
async def test_unknown_targets(main: Runtime, target: str) -> None:
    gate = gated(main)
    await accepted(main, task="t", label="only")
    for action, extra in (("kill", {}), ("steer", {"message": "m"})):
        if action == "kill" and target == "all":
            continue  # "all" is a kill target
        assert await control(main, action=action, target=target, **extra) == {
            "status": "error",
            "error": f"Unknown subagent target: {target}",
            "action": action,
        }
    gate.release.set()
    await quiesce(main)


async def test_targets_resolve_by_index_run_id_key_and_label(
    main: Runtime, clock: FakeClock
) -> None:
    gate = gated(main)
    first = await accepted(main, task="t", label="Alpha")
    clock.advance(1)  # list order is spawn order (runs of one millisecond: by run id)
    second = await accepted(main, task="t", label="beta")
    steps: list[tuple[Callable[[], str], dict[str, Any]]] = [
        (lambda: "1", first),
        (lambda: "#2", second),
        (lambda: str(first["runId"]), first),  # the child's current run
        (lambda: str(second["childSessionKey"]), second),
        (lambda: "alpha", first),
        (lambda: " BETA ", second),
    ]
    for target, expected in steps:
        result = await control(main, action="steer", target=target(), message="again")
        assert result["status"] == "accepted", (target(), result)
        assert result["previousRunId"] == expected["runId"]
        assert result["sessionKey"] == expected["childSessionKey"]
        expected["runId"] = result["runId"]
    gate.release.set()
    await quiesce(main)


async def test_an_ambiguous_label(make_services: MakeServices) -> None:
    raw = limits(allowAgents=["*"])
    raw["agents"]["list"] = [{"id": "reviewer"}]
    services = await make_services(raw)
    await make_requester(services)
    gate = gated(services)
    mine = await accepted(services, task="t", label="twin")
    theirs = await accepted(services, task="t", label="twin", agentId="reviewer")
    assert await control(services, action="kill", target="twin") == {
        "status": "error",
        "error": (
            f"Ambiguous subagent target: twin ({mine['childSessionKey']}, "
            f"{theirs['childSessionKey']})"
        ),
        "action": "kill",
    }
    gate.release.set()
    await quiesce(services)


async def test_targets_beyond_the_recent_window_resolve_by_name(
    main: Runtime, clock: FakeClock
) -> None:
    done = await finished(main, task="t", label="ancient")
    clock.advance(24 * 60 * MINUTE)
    assert (await control(main))["total"] == 0
    result = await control(main, action="kill", target="ancient")
    assert (result["status"], result["killed"], result["text"]) == (
        "ok",
        [],
        "ancient is not running.",
    )
    assert await control(main, action="steer", target=done["runId"], message="m") == {
        "status": "error",
        "error": "Subagent ancient is not running.",
        "action": "steer",
    }
    await quiesce(main)
