"""``subagents`` kill and steer (OpenClaw's semantics): a kill ends the child's run and every
descendant's, keeps the sessions and announces nothing; a steer replaces the running turn and
only the new run is announced."""

from __future__ import annotations

import pytest

from clawline.config import MAX_RUN_TIMEOUT_MS
from clawline.runtime import Runtime
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, runner_of, transcript
from tests.collab.test_spawn_lineage import (
    accepted,
    control,
    ended,
    entry_of,
    gated,
    limits,
    make_requester,
    quiesce,
    record_of,
    task_of,
    wait_until,
)


@pytest.fixture
async def main(make_services: MakeServices) -> Runtime:
    services = await make_services(limits(maxSpawnDepth=2))
    await make_requester(services)
    return services


def assert_killed(services: Runtime, run_id: str) -> None:
    record = record_of(services, run_id)
    assert not record.active
    assert record.outcome == {"status": "error", "error": "killed"}
    assert (record.ended_reason, record.suppress_announce_reason) == ("subagent-killed", "killed")
    task = task_of(services, run_id)
    assert (task.status, task.delivery_status) == ("cancelled", "not_applicable")
    assert services.store.inbox.by_run(run_id) is None


# --- kill --------------------------------------------------------------------------------------


async def test_kill_cascades_to_descendants(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="orchestrate", label="boss")
    grandchild = await accepted(main, child["childSessionKey"], task="dig", label="digger")
    sibling = await accepted(main, task="other work", label="sibling")
    await wait_until(lambda: gate.running == 3)

    result = await control(main, action="kill", target="boss")
    assert result["status"] == "ok"
    assert (result["action"], result["target"], result["text"]) == (
        "kill",
        "boss",
        "Killed 2 run(s).",
    )
    assert sorted(result["killed"], key=lambda item: str(item["label"])) == [
        {"runId": child["runId"], "sessionKey": child["childSessionKey"], "label": "boss"},
        {
            "runId": grandchild["runId"],
            "sessionKey": grandchild["childSessionKey"],
            "label": "digger",
        },
    ]
    for killed in (child, grandchild):
        assert_killed(main, killed["runId"])
        assert not main.runs.active_runs(killed["childSessionKey"])
        # Sessions are kept, transcripts too.
        assert entry_of(main, killed["childSessionKey"]).key == killed["childSessionKey"]
        assert transcript(main, killed["childSessionKey"])[0]["role"] == "user"
    assert gate.running == 1
    assert record_of(main, sibling["runId"]).active
    assert main.runs.active_runs(sibling["childSessionKey"])

    gate.release.set()
    await ended(main, sibling["runId"])
    await quiesce(main)
    # Only the sibling's completion reaches the requester; the killed ones announce nothing.
    assert [row.run_id for row in main.store.inbox.pending_for(MAIN)] == []
    assert main.store.inbox.by_run(sibling["runId"]) is not None
    main_messages = transcript(main, MAIN)
    completions = [m for m in main_messages if m.get("internalEvents")]
    assert len(completions) == 1
    assert sibling["childSessionKey"] in str(completions[0]["content"])
    assert child["childSessionKey"] not in str(main_messages)
    assert main.store.inbox.by_run(grandchild["runId"]) is None


async def test_kill_all_kills_the_running_ones(main: Runtime) -> None:
    gate = gated(main)
    runs = [await accepted(main, task=f"t{n}") for n in range(3)]
    await wait_until(lambda: gate.running == 3)
    result = await control(main, action="kill", target="all")
    assert (result["status"], result["text"]) == ("ok", "Killed 3 run(s).")
    assert sorted(item["runId"] for item in result["killed"]) == sorted(r["runId"] for r in runs)
    for run in runs:
        assert_killed(main, run["runId"])
    again = await control(main, action="kill", target="*")
    assert again == {
        "status": "ok",
        "action": "kill",
        "target": "*",
        "killed": [],
        "text": "No running subagent matched.",
    }
    listed = await control(main)
    assert [child["status"] for child in listed["recent"]] == ["killed"] * 3
    await quiesce(main)


async def test_killing_an_ended_child_still_stops_its_descendants(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="t", label="parent")
    grandchild = await accepted(main, child["childSessionKey"], task="t")
    await wait_until(lambda: gate.running == 2)
    # The child ends on its own (its gate is its own), the grandchild keeps running.
    await main.runs.abort(child["childSessionKey"])
    parent_record = await ended(main, child["runId"])
    assert parent_record.outcome == {"status": "error", "error": "aborted"}
    result = await control(main, action="kill", target="parent")
    assert [item["runId"] for item in result["killed"]] == [grandchild["runId"]]
    assert result["text"] == "Killed 1 run(s)."
    assert_killed(main, grandchild["runId"])
    await quiesce(main)


# --- steer -------------------------------------------------------------------------------------


async def test_steer_replaces_the_running_turn(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="write a poem", label="poet", runTimeoutSeconds=120)
    key = child["childSessionKey"]
    await wait_until(lambda: gate.running == 1)
    before = record_of(main, child["runId"])

    result = await control(main, action="steer", target="poet", message="make it a haiku")
    new_run = result["runId"]
    assert result == {
        "status": "accepted",
        "action": "steer",
        "target": "poet",
        "runId": new_run,
        "previousRunId": child["runId"],
        "sessionKey": key,
        "label": "poet",
        "text": "Steered poet.",
    }
    old = record_of(main, child["runId"])
    assert old.outcome == {"status": "error", "error": "steered"}
    assert old.suppress_announce_reason == "steer-restart"
    new = record_of(main, new_run)
    assert new.active
    assert (new.child_session_key, new.requester_session_key, new.task, new.label) == (
        key,
        MAIN,
        "write a poem",
        "poet",
    )
    assert (new.task_id, new.run_timeout_seconds, new.cleanup) == (
        before.task_id,
        120,
        before.cleanup,
    )
    task = task_of(main, new_run)
    assert (task.task_id, task.status) == (before.task_id, "running")

    await wait_until(lambda: gate.running == 1 and len(gate.entered) == 2)
    (run,) = main.runs.active_runs(key)
    assert (run.run_id, run.lane, run.timeout_ms) == (new_run, "subagent", 120_000)
    call = runner_of(main).calls_on(key)[-1]
    assert (call.message, call.lane) == ("make it a haiku", "subagent")
    assert call.extra is not None
    assert f"Your session: {key}." in call.extra
    assert "Depth 1 of at most 2; role: orchestrator." in call.extra
    assert [m["role"] for m in transcript(main, key)].count("user") == 2

    gate.release.set()
    assert (await ended(main, new_run)).outcome == {"status": "ok"}
    await quiesce(main)
    assert main.store.inbox.by_run(child["runId"]) is None
    assert main.store.inbox.by_run(new_run) is not None
    assert task_of(main, new_run).status == "succeeded"
    listed = await control(main)
    assert [(c["runId"], c["status"]) for c in listed["recent"]] == [(new_run, "done")]


async def test_steer_keeps_no_timeout_as_none(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="t", label="slow")
    await wait_until(lambda: gate.running == 1)
    result = await control(main, action="steer", target="slow", message="faster")
    await wait_until(lambda: len(gate.entered) == 2)
    (run,) = main.runs.active_runs(child["childSessionKey"])
    assert run.run_id == result["runId"]
    assert run.timeout_ms == MAX_RUN_TIMEOUT_MS
    gate.release.set()
    await quiesce(main)


async def test_steer_a_child_that_is_not_running(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="t", label="finished")
    gate.release.set()
    await ended(main, child["runId"])
    for target in ("finished", "1", child["childSessionKey"]):
        assert await control(main, action="steer", target=target, message="more") == {
            "status": "error",
            "error": "Subagent finished is not running.",
            "action": "steer",
        }
    await quiesce(main)


async def test_a_child_without_label_is_named_by_its_key(main: Runtime) -> None:
    gate = gated(main)
    child = await accepted(main, task="t")
    gate.release.set()
    await ended(main, child["runId"])
    key = child["childSessionKey"]
    assert await control(main, action="steer", target=key, message="more") == {
        "status": "error",
        "error": f"Subagent {key} is not running.",
        "action": "steer",
    }
    killed = await control(main, action="kill", target=key)
    assert (killed["killed"], killed["text"]) == ([], f"{key} is not running.")
    await quiesce(main)
