"""A run-mode ACP spawn end to end: the child, its lineage, its task and record, the external
agent's streamed output in the child's transcript, the oneshot process, and the requester's
completion through the durable inbox."""

from __future__ import annotations

import re
from typing import Any

from clawline.collab.spawn import RUN_MODE_NOTE
from clawline.records.task import TaskRecord
from clawline.runtime import Runtime
from tests.acp_runtime.conftest import Acp, MakeAcp
from tests.acp_runtime.support import (
    MAIN,
    calls,
    cwd_of,
    environment_of,
    eventually,
    gone,
    log_entries,
    pids,
    spawn,
)
from tests.collab.support import assistant_texts, transcript

ACP_CHILD = re.compile(
    r"^agent:tiny:acp:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)


def task_of(services: Runtime, child: str) -> TaskRecord:
    (task,) = [t for t in services.tasks.for_session(child) if t.child_session_key == child]
    return task


async def finished(acp: Acp, result: dict[str, Any]) -> TaskRecord:
    """Wait for the spawn's task to end; return it."""
    services, child = acp.services, result["childSessionKey"]
    await eventually(lambda: task_of(services, child).terminal)
    return task_of(services, child)


async def test_run_mode_spawn_runs_the_task_and_announces(acp: Acp) -> None:
    services = acp.services
    result = await spawn(services, task="summarise the repo", agentId="tiny", label="tiny job")
    assert result == {
        "status": "accepted",
        "childSessionKey": result["childSessionKey"],
        "runId": result["runId"],
        "mode": "run",
        "note": RUN_MODE_NOTE,
    }
    child = result["childSessionKey"]
    assert ACP_CHILD.match(child)
    task = await finished(acp, result)
    assert (task.runtime, task.status, task.run_id) == ("acp", "succeeded", result["runId"])
    assert (task.requester_session_key, task.child_session_key) == (MAIN, child)
    assert task.label == "tiny job"

    entry = services.store.get(child)
    assert entry is not None
    assert (entry.spawned_by, entry.parent_session_key, entry.spawn_depth) == (MAIN, MAIN, 1)
    assert entry.label == "tiny job"
    workspace = str(services.settings.state_dir.resolve())
    assert (entry.spawned_cwd, entry.spawned_workspace_dir) == (workspace, workspace)
    meta = entry.extra["acp"]
    assert isinstance(meta, dict)
    assert meta["agent"] == "tiny"
    assert meta["mode"] == "oneshot"
    assert meta["cwd"] == workspace
    assert str(meta["acpSessionId"]).startswith("tiny-")
    assert entry.status == "done"

    (record,) = services.store.runs.by_child(child)
    assert (record.runtime, record.run_id, record.spawn_mode) == ("acp", result["runId"], "run")
    assert record.outcome == {"status": "ok"}

    # the raw task was prompted, in the requester's workspace
    (prompted,) = calls(acp.log, "session/prompt")
    assert prompted["text"] == "summarise the repo"
    (opened,) = calls(acp.log, "session/new")
    assert opened["cwd"] == workspace

    # the streamed output is the child's transcript
    messages = transcript(services, child)
    roles = [message["role"] for message in messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["toolCalls"] == [
        {"id": "t1", "name": "echo", "arguments": {"text": "summarise the repo"}}
    ]
    assert messages[2]["toolCallId"] == "t1"
    assert messages[2]["content"] == [{"type": "text", "text": "echoed summarise the repo"}]
    assert messages[2]["isError"] is False
    assert assistant_texts(services, child)[-1] == "tiny heard: summarise the repo done."

    # the requester receives the completion (durable inbox → its turn)
    await eventually(lambda: bool(acp.runner.calls_on(MAIN)))
    (delivered,) = acp.runner.calls_on(MAIN)
    assert "[Internal task completion event]" in delivered.message
    assert f"session_key: {child}" in delivered.message
    assert "status: completed successfully" in delivered.message
    assert "tiny heard: summarise the repo done." in delivered.message
    await eventually(lambda: task_of(services, child).delivery_status == "delivered")

    # oneshot: the process is gone once the run ended
    (pid,) = pids(acp.log)
    await gone(pid)
    assert services.acp.child(child) is None
    assert {"exit": True} in log_entries(acp.log)


async def test_the_agent_runs_in_its_configured_environment(make_acp: MakeAcp) -> None:
    acp = await make_acp(env={"TINY_MARK": "x1"})
    result = await spawn(acp.services, task="sleep 5000", agentId="tiny")
    process = acp.services.acp.child(result["childSessionKey"])
    assert process is not None
    pid = process.process.pid
    assert pid is not None
    env = environment_of(pid)
    assert env["TINY_MARK"] == "x1"
    assert "PATH" in env
    assert cwd_of(pid) == str(acp.services.settings.state_dir.resolve())
    entry = acp.services.store.get(result["childSessionKey"])
    assert entry is not None
    assert acp.services.acp.stderr_path(entry.session_id).exists()


async def test_default_agent_and_an_explicit_cwd(make_acp: MakeAcp, tmp_path: Any) -> None:
    acp = await make_acp(defaultAgent="tiny")
    (acp.services.settings.state_dir / "sub").mkdir()
    result = await spawn(acp.services, task="t", cwd="sub")
    assert result["status"] == "accepted"
    await finished(acp, result)
    (opened,) = calls(acp.log, "session/new")
    assert opened["cwd"] == str((acp.services.settings.state_dir / "sub").resolve())
    entry = acp.services.store.get(result["childSessionKey"])
    assert entry is not None
    assert entry.spawned_cwd == opened["cwd"]


async def test_the_traffic_clawline_sends(acp: Acp) -> None:
    result = await spawn(acp.services, task="hello", agentId="tiny")
    await finished(acp, result)
    (initialize,) = acp.traffic.sent("initialize")
    assert initialize["protocolVersion"] == 1
    assert initialize["clientInfo"]["name"] == "clawline"
    (new,) = acp.traffic.sent("session/new")
    assert new["mcpServers"] == []
    (prompt,) = acp.traffic.sent("session/prompt")
    assert prompt["prompt"] == [{"type": "text", "text": "hello"}]
    assert acp.traffic.problems() == []
