"""The task record, its JSON form and the transition table."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from clawline.errors import InvalidField, InvalidInput
from clawline.records.task import (
    ACTIVE_STATUSES,
    TASK_STATUSES,
    TERMINAL_STATUSES,
    InvalidTaskTransition,
    TaskEvent,
    TaskRecord,
    check_transition,
    default_delivery_status,
    default_notify_policy,
)

LEGAL = {
    ("queued", "running"),
    ("queued", "failed"),
    ("queued", "timed_out"),
    ("queued", "cancelled"),
    ("queued", "lost"),
    ("running", "succeeded"),
    ("running", "failed"),
    ("running", "timed_out"),
    ("running", "cancelled"),
    ("running", "lost"),
}
PAIRS = list(itertools.product(TASK_STATUSES, repeat=2))


@pytest.mark.parametrize(("current", "wanted"), sorted(LEGAL))
def test_legal_transitions_pass(current: str, wanted: str) -> None:
    check_transition("t1", current, wanted)


@pytest.mark.parametrize(("current", "wanted"), [p for p in PAIRS if p not in LEGAL])
def test_every_other_pair_is_refused_naming_both_statuses(current: str, wanted: str) -> None:
    with pytest.raises(InvalidTaskTransition) as error:
        check_transition("t1", current, wanted)
    assert str(error.value) == f"invalid task transition: {current} -> {wanted} (task t1)"
    assert (error.value.current, error.value.wanted, error.value.task_id) == (current, wanted, "t1")
    assert isinstance(error.value, InvalidInput)


def test_the_table_covers_seven_statuses() -> None:
    assert len(PAIRS) == 49
    assert set(TASK_STATUSES) == ACTIVE_STATUSES | TERMINAL_STATUSES
    assert {"succeeded", "failed", "timed_out", "cancelled", "lost"} == TERMINAL_STATUSES


def test_unknown_statuses_are_refused() -> None:
    with pytest.raises(InvalidTaskTransition):
        check_transition("t1", "paused", "running")
    with pytest.raises(InvalidTaskTransition):
        check_transition("t1", "running", "paused")


@pytest.mark.parametrize(
    ("runtime", "policy"),
    [("subagent", "done_only"), ("acp", "done_only"), ("cli", "silent"), ("cron", "silent")],
)
def test_openclaw_notify_defaults(runtime: str, policy: str) -> None:
    assert default_notify_policy(runtime) == policy


def test_delivery_defaults() -> None:
    assert default_delivery_status("agent:main:main", "done_only") == "pending"
    assert default_delivery_status("agent:main:main", "state_changes") == "pending"
    assert default_delivery_status("", "done_only") == "parent_missing"
    assert default_delivery_status("agent:main:main", "silent") == "not_applicable"


FULL = TaskRecord(
    task_id="id",
    runtime="subagent",
    requester_session_key="agent:main:main",
    owner_key="agent:main:main",
    scope_kind="session",
    task="t",
    status="running",
    delivery_status="pending",
    notify_policy="done_only",
    created_at=1,
    child_session_key="agent:main:subagent:c",
    run_id="r",
)


def test_json_uses_openclaw_names_in_the_reference_order() -> None:
    assert list(FULL.to_json()) == [
        "taskId",
        "runtime",
        "taskKind",
        "sourceId",
        "requesterSessionKey",
        "ownerKey",
        "scopeKind",
        "childSessionKey",
        "parentFlowId",
        "parentTaskId",
        "agentId",
        "runId",
        "label",
        "task",
        "status",
        "deliveryStatus",
        "notifyPolicy",
        "createdAt",
        "startedAt",
        "endedAt",
        "lastEventAt",
        "cleanupAfter",
        "error",
        "progressSummary",
        "terminalSummary",
        "terminalOutcome",
    ]
    assert FULL.to_json()["childSessionKey"] == "agent:main:subagent:c"
    assert FULL.to_json()["label"] is None


def test_json_round_trips() -> None:
    assert TaskRecord.from_json(FULL.to_json()) == FULL
    assert TaskRecord.from_json({**FULL.to_json(), "extra": 1}) == FULL


@pytest.mark.parametrize("missing", ["taskId", "createdAt", "status"])
def test_json_without_a_required_field_is_refused(missing: str) -> None:
    data = FULL.to_json()
    del data[missing]
    with pytest.raises(InvalidField) as error:
        TaskRecord.from_json(data)
    assert str(error.value) == f"task JSON without {missing}"


def test_record_properties() -> None:
    assert FULL.active
    assert not FULL.terminal
    assert FULL.backing_session_key == "agent:main:subagent:c"
    assert replace(FULL, child_session_key=None).backing_session_key == "agent:main:main"
    system = replace(FULL, child_session_key=None, scope_kind="system")
    assert system.backing_session_key is None
    done = replace(FULL, status="lost")
    assert done.terminal
    assert not done.active


def test_event_json() -> None:
    assert TaskEvent("t", 2, 5, "progress", "half").to_json() == {
        "at": 5,
        "kind": "progress",
        "summary": "half",
    }
