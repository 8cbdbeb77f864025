"""``session_start`` and ``agent_end`` with real runs of the offline model, and
the agent tool ``openclaw_multi_session_artifacts``."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from clawline.agents.tools.base import ToolContext
from clawline.testing import settled
from clawline.xworkmate.constants import PLUGIN_ID, TASK_RUNS_NAMESPACE, TOOL_NAME
from clawline.xworkmate.native import native_task_id
from clawline.xworkmate.plugin import last_assistant_text
from clawline.xworkmate.task_runs import read_run
from clawline.xworkmate.tool import ArtifactsTool
from tests.xworkmate.xworkmate_support import (
    APP_KEY,
    SESSION,
    XwGateway,
    prepare_params,
    write,
    xworkmate_gateway,
)


async def send(xw: XwGateway, message: str, run_id: str, session_key: str = SESSION) -> None:
    params = {"sessionKey": session_key, "message": message, "idempotencyKey": run_id}
    ack = await xw.ok("chat.send", params)
    assert ack["runId"] == run_id


async def ended_run(xw: XwGateway, run_id: str, session_key: str = SESSION) -> dict[str, Any]:
    """The recorded run once ``agent_end`` wrote its end."""
    services = xw.gw.runtime
    for _ in range(200):
        run = await services.call(read_run, session_key, run_id, host=services.plugin_host)
        if run is not None and run["status"] != "running":
            return run
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} was never recorded as ended")


async def test_a_finished_run_ends_its_task_and_its_record(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        await send(xw, "reply: the report is ready", "turn-1")
        run = await ended_run(xw, "turn-1")
        assert run["status"] == "completed"
        assert run["success"] is True
        assert run["output"] == "the report is ready"
        services = xw.gw.runtime
        task = await services.call(services.tasks.get, native_task_id(SESSION, "turn-1"))
        assert task is not None
        assert task.status == "succeeded"
        assert task.terminal_summary == "the report is ready"
        result = await xw.ok("xworkmate.tasks.get", {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert (result["status"], result["taskStatus"]) == ("completed", "succeeded")


async def test_a_failed_run_is_recorded_with_its_error_redacted(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        await send(xw, "fail: provider refused key sk-live0123456789", "turn-1")
        run = await ended_run(xw, "turn-1")
        assert run["status"] == "failed"
        assert run["success"] is False
        assert run["error"] == "provider refused key sk-[REDACTED]"
        services = xw.gw.runtime
        task = await services.call(services.tasks.get, native_task_id(SESSION, "turn-1"))
        assert task is not None
        assert task.status == "failed"
        result = await xw.ok("xworkmate.tasks.get", {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert (result["status"], result["taskStatus"]) == ("failed", "failed")


async def test_runs_of_unmapped_sessions_are_left_alone(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await send(xw, "reply: hi", "plain-1", session_key="agent:main:main")
        await xw.ok("agent.wait", {"runId": "plain-1", "timeoutMs": 5000})
        services = xw.gw.runtime
        await settled(services)  # agent_end runs after the end is written
        stored = await services.call(
            services.plugin_host.read_extension, "agent:main:main", PLUGIN_ID, TASK_RUNS_NAMESPACE
        )
        assert stored is None
        assert (
            await services.call(services.tasks.get, native_task_id("agent:main:main", "plain-1"))
            is None
        )


async def test_session_start_prepares_the_scope_of_the_actual_run(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        await send(xw, "reply: ok", "chat-run-7")
        await xw.ok("agent.wait", {"runId": "chat-run-7", "timeoutMs": 5000})
        assert xw.scope_dir("chat-run-7").is_dir()
        services = xw.gw.runtime
        mapping = await services.call(
            services.plugin_host.read_extension, SESSION, PLUGIN_ID, "xworkmate.sessionMapping"
        )
        assert isinstance(mapping, dict)
        assert mapping["source"] == "bridge_prepare"
        assert mapping["createdAt"] == prepared["mapping"]["createdAt"]
        assert mapping["updatedAt"] >= prepared["mapping"]["updatedAt"]
        run = await ended_run(xw, "chat-run-7")  # a run prepare never saw is recorded too
        assert run["output"] == "ok"


def test_the_output_is_the_last_assistant_text() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
        {"role": "tool", "content": "x"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "line 1"},
                {"type": "image", "url": "x"},
                {"type": "output_text", "text": "line 2"},
            ],
        },
        {"role": "assistant", "content": []},
    ]
    assert last_assistant_text({"messages": messages, "output": "o"}) == "line 1\nline 2"
    plain = [{"role": "assistant", "content": "plain"}]
    assert last_assistant_text({"messages": plain}) == "plain"
    assert last_assistant_text({"messages": [], "output": "fallback"}) == "fallback"
    assert last_assistant_text({}) == ""


def tool_context(xw: XwGateway, **overrides: Any) -> ToolContext:
    values: dict[str, Any] = {
        "host": xw.gw.runtime.tool_host,
        "session_key": SESSION,
        "agent_id": "main",
        "run_id": "turn-1",
        "workspace": xw.workspace,
    }
    values.update(overrides)
    return ToolContext(**values)


async def test_the_tool_lists_and_reads_the_current_run(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        write(xw.scope_dir() / "notes.md", "notes")
        write(xw.scope_dir("turn-0") / "old.md", "old")
        tool = xw.gw.runtime.runs.tools.get(TOOL_NAME)
        assert isinstance(tool, ArtifactsTool)
        ctx = tool_context(xw)
        hijack = {"runId": "turn-0", "sessionKey": "agent:main:other", "workspaceDir": "/"}
        listed = await tool.invoke(ctx, {"action": "list", **hijack})
        assert not listed.is_error
        assert isinstance(listed.details, dict)
        assert listed.details["artifactCount"] == 1
        text = str(listed.details["text"])
        assert f"Artifact scope: `{prepared['artifactScope']}`" in text
        assert "| `notes.md` | text/markdown |" in text
        read = await tool.invoke(
            ctx,
            {
                "action": "read",
                "artifactScope": prepared["artifactScope"],
                "relativePath": "notes.md",
            },
        )
        assert isinstance(read.details, dict)
        encoded = base64.b64encode(b"notes").decode()
        assert f"Base64 content for `notes.md`:\n\n```base64\n{encoded}\n```" in str(
            read.details["text"]
        )
        small = await tool.invoke(
            ctx,
            {
                "action": "read",
                "relativePath": "notes.md",
                "maxInlineBytes": 1,
                "artifactScope": prepared["artifactScope"],
            },
        )
        assert isinstance(small.details, dict)
        assert "`notes.md` is larger than maxInlineBytes" in str(small.details["text"])


async def test_tool_refusals(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        tool = xw.gw.runtime.runs.tools.get(TOOL_NAME)
        assert isinstance(tool, ArtifactsTool)
        cases = [
            (tool_context(xw), {"action": "delete"}, "action must be list or read"),
            (tool_context(xw), {}, "action must be list or read"),
            (tool_context(xw, session_key=""), {"action": "list"}, "sessionKey required"),
            (tool_context(xw, run_id=""), {"action": "list"}, "runId required"),
            (tool_context(xw), {"action": "read"}, "artifactScope or artifactRef required"),
            (
                tool_context(xw),
                {
                    "action": "read",
                    "artifactScope": "tasks/agent_main_thread-main/turn-1",
                    "relativePath": "../../../x",
                },
                "relativePath must stay inside the workspace",
            ),
        ]
        for ctx, args, message in cases:
            result = await tool.invoke(ctx, args)
            assert result.is_error
            assert result.details == {"status": "error", "error": message}
