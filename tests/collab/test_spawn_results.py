"""sessions_spawn accepted: the result and its notes, the options it records, and the run
record and task written with the child — atomically: a spawn that fails writes none of them
(docs/design-agents.md, docs/tasks.md)."""

from __future__ import annotations

import base64
import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest

from clawline import keys
from clawline.collab.spawn import RUN_MODE_NOTE, SESSION_MODE_NOTE
from clawline.config import MAX_RUN_TIMEOUT_MS
from clawline.runtime import Runtime
from clawline.testing.channels import threads_channel
from clawline.testing.wire import WireRecorder
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, runner_of
from tests.collab.test_spawn_lineage import (
    CHILD_KEY,
    accepted,
    control,
    descendants_of,
    ended,
    entry_of,
    first_user_text,
    gated,
    limits,
    make_requester,
    quiesce,
    record_of,
    spawn,
    task_of,
    tasks_owned_by,
    wait_until,
)
from tests.collab.test_spawn_validation import forum_services

# --- the accepted result -----------------------------------------------------------------------

REFERENCE_RUN_NOTE = (
    "Auto-announce is push-based. After spawning children, do NOT call sessions_list, "
    "sessions_history, exec sleep, or any polling tool. Wait for completion events to arrive as "
    "user messages, track expected child session keys, and only send your final answer after ALL "
    "expected completions arrive. If a child completion event arrives AFTER your final answer, "
    "reply ONLY with NO_REPLY."
)
REFERENCE_SESSION_NOTE = (
    "thread-bound session stays active after this task; continue in-thread for follow-ups."
)


def test_notes_are_the_reference_texts() -> None:
    assert RUN_MODE_NOTE == REFERENCE_RUN_NOTE
    assert SESSION_MODE_NOTE == REFERENCE_SESSION_NOTE


async def test_accepted_run_mode_result(services: Runtime) -> None:
    await make_requester(services)
    result = await accepted(services, task="summarise the logs")
    assert set(result) == {"status", "childSessionKey", "runId", "mode", "note"}
    assert (result["mode"], result["note"]) == ("run", REFERENCE_RUN_NOTE)
    match = CHILD_KEY.match(result["childSessionKey"])
    assert match is not None, result["childSessionKey"]
    assert match["agent"] == "main"
    assert uuid.UUID(match["id"]).version == 4
    assert keys.is_native_subagent_key(result["childSessionKey"])
    uuid.UUID(result["runId"])
    assert result["runId"] != match["id"]


async def test_every_spawn_gets_a_fresh_child_and_run(services: Runtime) -> None:
    await make_requester(services)
    first = await accepted(services, task="a")
    second = await accepted(services, task="a")
    assert first["childSessionKey"] != second["childSessionKey"]
    assert first["runId"] != second["runId"]


async def test_cron_requester_gets_no_run_mode_note(services: Runtime) -> None:
    cron = "agent:main:cron:nightly"
    await make_requester(services, cron)
    result = await accepted(services, cron, task="nightly digest")
    assert "note" not in result
    assert result["mode"] == "run"
    assert record_of(services, result["runId"]).requester_session_key == cron


async def test_valid_model_override_is_applied(services: Runtime) -> None:
    await make_requester(services)
    result = await accepted(services, task="t", model="offline")
    assert result["modelApplied"] is True
    assert "warning" not in result
    child = entry_of(services, result["childSessionKey"])
    assert child.extra.get("model") == "offline"
    assert record_of(services, result["runId"]).model == "offline"


async def test_thinking_level_is_normalised_and_stored(services: Runtime) -> None:
    await make_requester(services)
    result = await accepted(services, task="t", thinking=" HIGH ")
    child = entry_of(services, result["childSessionKey"])
    assert child.extra.get("thinkingLevel") == "high"


# --- run record and task -------------------------------------------------------------------------


async def test_record_and_task_from_running_to_succeeded(services: Runtime) -> None:
    await make_requester(services)
    gate = gated(services)
    result = await accepted(
        services, task="check links", label="linker", cleanup="delete", runTimeoutSeconds=90
    )
    run_id, key = result["runId"], result["childSessionKey"]
    await wait_until(lambda: gate.running == 1)
    record = record_of(services, run_id)
    assert record.active
    assert (record.child_session_key, record.requester_session_key, record.controller) == (
        key,
        MAIN,
        MAIN,
    )
    assert (record.task, record.label, record.cleanup, record.spawn_mode) == (
        "check links",
        "linker",
        "delete",
        "run",
    )
    assert (record.run_timeout_seconds, record.expects_completion_message) == (90, True)
    assert record.requester_display_key == "main"
    assert record.started_at is not None
    assert record.created_at == record.started_at
    task = task_of(services, run_id)
    assert task.task_id == record.task_id
    assert (task.runtime, task.status, task.scope_kind) == ("subagent", "running", "session")
    assert (task.requester_session_key, task.owner_key, task.child_session_key) == (MAIN, MAIN, key)
    assert (task.source_id, task.label, task.task) == (run_id, "linker", "check links")
    assert services.store.inbox.by_run(run_id) is None

    gate.release.set()
    record = await ended(services, run_id)
    assert record.outcome == {"status": "ok"}
    assert (record.ended_reason, record.frozen_result_text) == ("subagent-complete", "done")
    assert task_of(services, run_id).status == "succeeded"
    row = services.store.inbox.by_run(run_id)
    assert row is not None
    assert (row.requester_session_key, row.child_session_key, row.status) == (
        MAIN,
        key,
        "succeeded",
    )
    assert row.task_id == record.task_id
    await quiesce(services)


async def test_a_child_that_times_out_silently_still_reports(services: Runtime) -> None:
    """OpenClaw #89095: a child that times out with no output never told its parent."""
    await make_requester(services)
    gated(services)  # never released
    result = await accepted(services, task="t", label="sleeper", runTimeoutSeconds=1)
    record = await ended(services, result["runId"])
    assert record.outcome == {"status": "timeout"}
    assert record.ended_reason == "subagent-error"
    assert task_of(services, result["runId"]).status == "timed_out"
    row = services.store.inbox.by_run(result["runId"])
    assert row is not None
    assert row.status == "timed_out"
    event = row.payload["event"]
    assert isinstance(event, dict)
    assert (event["status"], event["statusLabel"], event["result"]) == (
        "timeout",
        "timed out",
        "(no output)",
    )
    listed = await control(services)
    assert [(c["label"], c["status"]) for c in listed["recent"]] == [("sleeper", "timeout")]
    await quiesce(services)


async def test_expects_completion_message_false_writes_no_inbox_row(services: Runtime) -> None:
    await make_requester(services)
    result = await accepted(services, task="t", expectsCompletionMessage=False)
    record = await ended(services, result["runId"])
    assert record.expects_completion_message is False
    assert services.store.inbox.by_run(result["runId"]) is None
    task = task_of(services, result["runId"])
    assert (task.status, task.delivery_status) == ("succeeded", "not_applicable")
    await quiesce(services)


async def test_label_in_use_leaves_no_child_record_or_task(services: Runtime) -> None:
    await make_requester(services)
    first = await accepted(services, task="one", label="helper")
    sessions_before = descendants_of(services, MAIN)
    refused = await spawn(services, task="two", label=" helper ")
    assert refused == {"status": "error", "error": "label already in use: helper"}
    assert descendants_of(services, MAIN) == sessions_before == [first["childSessionKey"]]
    assert [r.run_id for r in services.store.runs.for_requester(MAIN)] == [first["runId"]]
    assert [t.run_id for t in tasks_owned_by(services, MAIN)] == [first["runId"]]
    await ended(services, first["runId"])
    await quiesce(services)
    assert [c.session_key for c in runner_of(services).calls] == [
        first["childSessionKey"],
        MAIN,  # the first child's completion
    ]


async def test_label_of_a_non_child_session_counts_too(services: Runtime) -> None:
    await services.call(services.catalog.patch, MAIN, {"label": "boss"})
    assert await spawn(services, task="t", label="boss") == {
        "status": "error",
        "error": "label already in use: boss",
    }
    assert descendants_of(services, MAIN) == []
    assert services.store.runs.for_requester(MAIN) == []
    assert tasks_owned_by(services, MAIN) == []


async def test_registry_failure_leaves_nothing(services: Runtime) -> None:
    await make_requester(services)
    refused = await spawn(services, task="x" * 100_001)
    assert refused == {
        "status": "error",
        "error": "Failed to register subagent run: invalid task: longer than 100000 characters",
    }
    assert descendants_of(services, MAIN) == []
    assert services.store.runs.for_requester(MAIN) == []
    assert tasks_owned_by(services, MAIN) == []


async def test_a_run_that_cannot_start_writes_no_child(services: Runtime) -> None:
    """The child is written in the transaction that accepts its first run: a refused run
    leaves nothing, and nothing is told (no create followed by a delete)."""
    await make_requester(services)
    await services.runs.shutdown()  # no new runs are accepted
    async with WireRecorder(services) as seen:
        refused = await spawn(services, task="t")
        await seen.settled()
    assert (refused["status"], refused["error"]) == (
        "error",
        "the gateway is shutting down; no new runs are accepted",
    )
    key, run_id = refused["childSessionKey"], refused["runId"]
    assert CHILD_KEY.match(key)
    assert services.store.get(key) is None
    assert services.store.runs.get(run_id) is None
    assert services.store.tasks.by_run_id(run_id) == []
    assert [e for e in seen if e.payload.get("sessionKey") == key] == []


# --- options recorded with the run ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "args", "seconds", "timeout_ms"),
    [
        ({}, {}, 0, MAX_RUN_TIMEOUT_MS),
        ({}, {"runTimeoutSeconds": 90.7}, 90, 90_000),
        ({}, {"timeoutSeconds": 30}, 30, 30_000),
        ({}, {"runTimeoutSeconds": 5, "timeoutSeconds": 30}, 5, 5_000),
        (limits(runTimeoutSeconds=45), {}, 45, 45_000),
        (limits(runTimeoutSeconds=45), {"runTimeoutSeconds": 0}, 0, MAX_RUN_TIMEOUT_MS),
    ],
)
async def test_run_timeout(
    make_services: MakeServices,
    raw: dict[str, Any],
    args: dict[str, Any],
    seconds: int,
    timeout_ms: int,
) -> None:
    """0 means no timeout (OpenClaw: ``timeout: 0`` → the no-timeout cap), never the agent's
    default run timeout."""
    services = await make_services(raw)
    await make_requester(services)
    gated(services)
    result = await accepted(services, task="t", **args)
    assert record_of(services, result["runId"]).run_timeout_seconds == seconds
    (run,) = services.runs.active_runs(result["childSessionKey"])
    assert run.timeout_ms == timeout_ms


@pytest.mark.parametrize(
    ("cleanup", "stored"), [(None, "keep"), ("keep", "keep"), ("delete", "delete")]
)
async def test_cleanup_in_run_mode(services: Runtime, cleanup: str | None, stored: str) -> None:
    await make_requester(services)
    args = {} if cleanup is None else {"cleanup": cleanup}
    result = await accepted(services, task="t", **args)
    assert record_of(services, result["runId"]).cleanup == stored


# --- session mode (thread-bound) -----------------------------------------------------------------


async def test_session_mode_result_and_binding(make_services: MakeServices) -> None:
    forum = threads_channel("forum")
    services = await forum_services(make_services, forum)
    result = await accepted(services, task="triage", label="triager", thread=True, cleanup="delete")
    key = result["childSessionKey"]
    assert set(result) == {"status", "childSessionKey", "runId", "mode", "note"}
    assert (result["mode"], result["note"]) == ("session", REFERENCE_SESSION_NOTE)
    record = record_of(services, result["runId"])
    assert (record.spawn_mode, record.cleanup) == ("session", "keep")  # forced to keep
    (binding,) = services.store.bindings.for_session(key)
    assert (binding.channel, binding.session_key) == ("forum", key)
    assert [created.session_key for created in forum.created] == [key]
    text = first_user_text(services, key)
    assert text.startswith("[Subagent Context] You are running as a subagent (depth 1/1).")
    assert "\n[Subagent Context] This is a persistent session" in text
    assert text.endswith("\n[Subagent Task]: triage")


async def test_thread_with_run_mode_stays_a_run(make_services: MakeServices) -> None:
    services = await forum_services(make_services, threads_channel("forum"))
    result = await accepted(services, task="t", thread=True, mode="run")
    assert (result["mode"], result["note"]) == ("run", REFERENCE_RUN_NOTE)
    assert record_of(services, result["runId"]).spawn_mode == "run"


# --- attachments ---------------------------------------------------------------------------------

NOTES = {"name": "notes.txt", "content": "remember the milk"}


def attachments_config(**limits: Any) -> dict[str, Any]:
    return {"tools": {"sessions_spawn": {"attachments": {"enabled": True, **limits}}}}


async def test_attachments_are_disabled_by_default(services: Runtime) -> None:
    await make_requester(services)
    assert await spawn(services, task="t", attachments=[NOTES]) == {
        "status": "error",
        "error": (
            "attachments are disabled for sessions_spawn "
            "(enable tools.sessions_spawn.attachments.enabled)"
        ),
    }
    assert descendants_of(services, MAIN) == []
    assert tasks_owned_by(services, MAIN) == []


async def test_attachments_are_written_into_the_child_workspace(
    make_services: MakeServices,
) -> None:
    services = await make_services(attachments_config())
    await make_requester(services)
    data = b"\x00\x01binary"
    blob = {"name": "blob.bin", "content": base64.b64encode(data).decode(), "encoding": "base64"}
    result = await accepted(services, task="read them", attachments=[NOTES, blob])
    key = result["childSessionKey"]
    rel_dir = f".attachments/{key.rsplit(':', 1)[-1]}"
    assert result["attachments"] == {
        "count": 2,
        "totalBytes": len(NOTES["content"]) + len(data),
        "files": [
            {
                "name": "notes.txt",
                "bytes": len(NOTES["content"]),
                "sha256": hashlib.sha256(NOTES["content"].encode()).hexdigest(),
            },
            {"name": "blob.bin", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        ],
        "relDir": rel_dir,
    }
    workspace = Path(entry_of(services, key).spawned_workspace_dir or "")
    assert (workspace / rel_dir / "notes.txt").read_text() == NOTES["content"]
    assert (workspace / rel_dir / "blob.bin").read_bytes() == data
    await ended(services, result["runId"])
    (call,) = runner_of(services).calls_on(key)
    assert call.extra is not None
    assert f"Attachments: 2 file(s) in {rel_dir}: notes.txt, blob.bin." in call.extra
    await quiesce(services)


async def test_attachment_limits_refuse_before_the_child_exists(
    make_services: MakeServices,
) -> None:
    services = await make_services(attachments_config(maxFiles=1))
    await make_requester(services)
    result = await spawn(services, task="t", attachments=[NOTES, {"name": "b", "content": "x"}])
    assert result == {"status": "error", "error": "attachments_file_count_exceeded (maxFiles=1)"}
    assert descendants_of(services, MAIN) == []
    assert tasks_owned_by(services, MAIN) == []
