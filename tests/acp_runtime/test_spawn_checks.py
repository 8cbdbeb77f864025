"""The ACP spawn's checks in their order (OpenClaw's), each with its exact text and
``errorCode``, and the failures of starting the agent; none of them leaves anything behind."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.agents.run import RunsClosed
from clawline.runtime import Runtime
from clawline.store.base import SessionQuery
from tests.acp_runtime.conftest import Acp, MakeAcp
from tests.acp_runtime.support import MAIN, acp_config, alive, calls, pids, spawn
from tests.collab.support import invoke, tool_ctx
from tests.collab.test_spawn_lineage import spawn_tool

DISABLED = "ACP is disabled by policy (`acp.enabled=false`)."
DISPATCH_DISABLED = "ACP dispatch is disabled by policy (`acp.dispatch.enabled=false`)."
NEEDS_REQUESTER = 'sessions_spawn streamTo="parent" requires an active requester session context.'
SANDBOX = (
    'sessions_spawn sandbox="require" is unsupported for runtime="acp" because ACP sessions '
    'run outside the sandbox. Use runtime="subagent" or sandbox="inherit".'
)
NEEDS_THREAD = 'mode="session" requires thread=true so the ACP session can stay bound to a thread.'
NO_BACKEND = "ACP runtime backend is not configured. Install and enable the acpx runtime plugin."
NO_TARGET = (
    "ACP target agent is not configured. Pass `agentId` in `sessions_spawn` or set "
    "`acp.defaultAgent` in config."
)
NO_CONTEXT = "thread=true for ACP sessions requires a channel context."
ATTACHMENTS = (
    "attachments are currently unsupported for runtime=acp; use runtime=subagent or remove "
    "attachments"
)


def refusal(status: str, error: str, code: str) -> dict[str, Any]:
    return {"status": status, "error": error, "errorCode": code}


async def test_first_failure_wins_in_order(make_acp: MakeAcp, tmp_path: Any) -> None:
    """Every check fails at once; switching each off in turn reveals the next one."""
    log = tmp_path / "unused.jsonl"
    args: dict[str, Any] = {
        "task": "t",
        "streamTo": "parent",
        "sandbox": "require",
        "mode": "session",
        "agentId": "other",
        "cwd": "no/such/dir",
    }
    base = acp_config(log, allowedAgents=["other"])
    section = base["acp"]
    ghost = "agent:main:ghost"
    disabled = await make_acp(raw={"acp": {**section, "enabled": False}})
    assert await spawn(disabled.services, ghost, **args) == refusal(
        "forbidden", DISABLED, "acp_disabled"
    )
    no_dispatch = await make_acp(raw={"acp": {**section, "dispatch": {"enabled": False}}})
    assert await spawn(no_dispatch.services, ghost, **args) == refusal(
        "forbidden", DISPATCH_DISABLED, "acp_disabled"
    )
    acp = await make_acp(raw=base)
    services = acp.services
    assert await spawn(services, ghost, **args) == refusal(
        "error", NEEDS_REQUESTER, "requester_session_required"
    )
    assert await spawn(services, **args) == refusal("forbidden", SANDBOX, "runtime_policy")
    args.pop("sandbox")
    assert await spawn(services, **args) == refusal("error", NEEDS_THREAD, "thread_required")
    args.pop("mode")
    no_agents = await make_acp(raw={"acp": {"allowedAgents": ["other"]}})
    assert await spawn(no_agents.services, **args) == refusal("error", NO_BACKEND, "spawn_failed")
    args.pop("agentId")
    assert await spawn(services, **args) == refusal("error", NO_TARGET, "target_agent_required")
    args["agentId"] = "Tiny"
    assert await spawn(services, **args) == refusal(
        "forbidden", 'ACP agent "tiny" is not allowed by policy.', "agent_forbidden"
    )
    args["agentId"] = "other"
    assert await spawn(services, **args) == refusal(
        "error",
        'ACP agent "other" is not configured. Add [acp.agents.other] with its command.',
        "spawn_failed",
    )
    args["agentId"] = "TINY"
    fine = await make_acp()
    cron = "agent:main:cron:nightly"
    await fine.services.call(fine.services.catalog.patch, cron, {})
    assert await spawn(fine.services, cron, **args, thread=True, mode="run") == refusal(
        "error", NO_CONTEXT, "thread_binding_invalid"
    )
    assert await spawn(fine.services, **args) == refusal(
        "error", 'ACP cwd "no/such/dir" is not a directory.', "cwd_resolution_failed"
    )
    for acp_env in (acp, no_agents, fine):
        assert pids(acp_env.log) == []
        assert acp_env.services.tasks.for_owner(MAIN) == []
        assert acp_env.services.store.runs.active() == []


async def test_without_acp_agents_any_spawn_has_no_backend(make_acp: MakeAcp) -> None:
    acp = await make_acp(raw={})
    result = await spawn(acp.services, task="t")
    assert result == refusal("error", NO_BACKEND, "spawn_failed")


async def test_attachments_are_refused_for_acp(acp: Acp) -> None:
    result = await spawn(
        acp.services, task="t", agentId="tiny", attachments=[{"name": "a", "content": "x"}]
    )
    assert result == {"status": "error", "error": ATTACHMENTS}


async def test_a_label_in_use_is_refused_before_the_agent_starts(acp: Acp) -> None:
    services = acp.services
    await services.call(services.catalog.patch, "agent:tiny:main", {"label": "taken"})
    result = await spawn(services, task="t", agentId="tiny", label="taken")
    assert result["status"] == "error"
    assert result["errorCode"] == "spawn_failed"
    assert "taken" in result["error"]
    assert pids(acp.log) == []


async def _child_keys(services: Runtime) -> list[str]:
    tasks = services.tasks.for_owner(MAIN)
    return [task.child_session_key or "" for task in tasks]


async def test_an_agent_that_exits_at_start(make_acp: MakeAcp) -> None:
    acp = await make_acp(env={"TINY_EXIT_AT_START": "3"})
    result = await spawn(acp.services, task="t", agentId="tiny")
    assert result == refusal("error", "ACP process exited with code 3", "spawn_failed")
    assert await _child_keys(acp.services) == []
    assert acp.services.store.runs.active() == []


async def test_a_command_that_cannot_start(make_acp: MakeAcp, tmp_path: Any) -> None:
    missing = str(tmp_path / "no-such-agent")
    acp = await make_acp(raw={"acp": {"agents": {"tiny": {"command": [missing]}}}})
    result = await spawn(acp.services, task="t", agentId="tiny")
    assert result["errorCode"] == "spawn_failed"
    assert result["error"].startswith("ACP agent could not be started: ")
    assert missing in result["error"]


async def test_resume_needs_session_load(make_acp: MakeAcp) -> None:
    acp = await make_acp(env={"TINY_LOAD": "0"})
    result = await spawn(acp.services, task="t", agentId="tiny", resumeSessionId="old-1")
    assert result == refusal("error", "ACP agent does not support session/load", "spawn_failed")
    assert calls(acp.log, "session/load") == []
    assert await _child_keys(acp.services) == []


async def test_dispatch_failure_removes_the_child_and_its_process(
    acp: Acp, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = acp.services

    async def refuse(**kwargs: Any) -> None:
        raise RunsClosed("no new runs are accepted")

    monkeypatch.setattr(services.runs, "send", refuse)
    result = await spawn(services, task="t", agentId="tiny")
    assert result == refusal("error", "no new runs are accepted", "dispatch_failed")
    assert await _child_keys(services) == []
    listed = services.store.page(SessionQuery(), None, 100).entries
    assert [entry.key for entry in listed] == [MAIN]
    (opened,) = calls(acp.log, "session/new")
    assert opened["sessionId"].startswith("tiny-")
    (pid,) = pids(acp.log)
    assert not alive(pid)  # the undo waited for the agent to stop


async def test_no_agent_starts_once_the_gateway_is_shutting_down(acp: Acp) -> None:
    await acp.services.runs.shutdown()
    result = await spawn(acp.services, task="t", agentId="tiny")
    assert result == refusal(
        "error", "the gateway is shutting down; no ACP agent is started", "spawn_failed"
    )
    assert pids(acp.log) == []


async def test_the_tool_still_refuses_acp_options_for_subagents(acp: Acp) -> None:
    ctx = tool_ctx(acp.services, MAIN)
    result = await invoke(spawn_tool(acp.services), ctx, task="t", resumeSessionId="x")
    assert result["error"] == (
        "resumeSessionId is only supported for runtime=acp; got runtime=subagent"
    )
    result = await invoke(spawn_tool(acp.services), ctx, task="t", streamTo="parent")
    assert result["error"] == "streamTo is only supported for runtime=acp; got runtime=subagent"
