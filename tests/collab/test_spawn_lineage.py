"""The child a spawn creates: its key, lineage, depth, role and control scope, its first message
and run, and cross-agent children (OpenClaw's rules).

The helpers at the top are shared with the other ``test_spawn_*`` / ``test_subagents_*``
modules.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from clawline import keys
from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.tools.base import Tool
from clawline.records.collab import SubagentRun
from clawline.records.session import SessionEntry
from clawline.records.task import TaskRecord
from clawline.runtime import Runtime
from clawline.store.collab import TaskQuery
from clawline.testing.wire import WireRecorder
from tests.collab.conftest import MakeServices
from tests.collab.support import (
    MAIN,
    ScriptedRunner,
    invoke,
    runner_of,
    tool_ctx,
    tool_of,
    transcript,
)


def spawn_tool(services: Runtime) -> Tool:
    return tool_of(services, "sessions_spawn")


def subagents_tool(services: Runtime) -> Tool:
    return tool_of(services, "subagents")


CHILD_KEY = re.compile(
    r"^agent:(?P<agent>[a-z0-9][a-z0-9_-]*):subagent:"
    r"(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$"
)


# --- helpers shared by the spawn and subagents tests ---------------------------------------------


def limits(**subagents: Any) -> dict[str, Any]:
    """A config mapping with ``agents.defaults.subagents`` set to ``subagents``."""
    return {"agents": {"defaults": {"subagents": subagents}}}


class Gate:
    """A reply that blocks until :attr:`release` is set; counts the runs inside it."""

    def __init__(self, text: str = "done", error: str | None = None) -> None:
        self.text = text
        self.error = error
        """Raised (as ``RuntimeError``) once released: the run fails."""
        self.release = asyncio.Event()
        self.running = 0
        self.peak = 0
        self.entered: list[str] = []

    async def reply(self, ctx: RunContext) -> str:
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.entered.append(ctx.session_key)
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        if self.error is not None:
            raise RuntimeError(self.error)
        return self.text


class GatedRunner(ScriptedRunner):
    """A :class:`ScriptedRunner` whose sub-agent sessions without a script block at
    :attr:`gate` (their keys are only known once they are spawned)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = Gate()

    async def run(self, ctx: RunContext) -> RunOutput:
        if keys.is_subagent_key(ctx.session_key) and not self.scripts.get(ctx.session_key):
            self.script(ctx.session_key, self.gate.reply)
        return await super().run(ctx)


def gated(services: Runtime, gate: Gate | None = None) -> Gate:
    """Install a :class:`GatedRunner` (runs that already started keep their old gate)."""
    runner = GatedRunner()
    if gate is not None:
        runner.gate = gate
    services.runs.runner = runner
    return runner.gate


async def make_requester(services: Runtime, key: str = MAIN) -> SessionEntry:
    change = await services.call(services.catalog.patch, key, {})
    assert change.after is not None
    return change.after


async def spawn(services: Runtime, requester: str = MAIN, **args: Any) -> dict[str, Any]:
    return await invoke(spawn_tool(services), tool_ctx(services, requester), **args)


async def accepted(services: Runtime, requester: str = MAIN, **args: Any) -> dict[str, Any]:
    result = await spawn(services, requester, **args)
    assert result["status"] == "accepted", result
    return result


async def control(services: Runtime, requester: str = MAIN, **args: Any) -> dict[str, Any]:
    return await invoke(subagents_tool(services), tool_ctx(services, requester), **args)


async def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


async def ended(services: Runtime, run_id: str) -> SubagentRun:
    """The run record once its end is written."""

    def done() -> bool:
        record = services.store.runs.get(run_id)
        return record is not None and not record.active

    await wait_until(done)
    record = services.store.runs.get(run_id)
    assert record is not None
    return record


async def quiesce(services: Runtime) -> None:
    """Wait until no run is active, every sub-agent run's end is written and every completion
    delivered (and the turn it started has ended)."""

    def quiet() -> bool:
        store = services.store
        return not (
            services.runs.active_runs()
            or store.runs.active()
            or store.inbox.requesters_with_pending()
        )

    for _ in range(3):
        await wait_until(quiet)
        await services.announcer.stop()  # waits for the deliveries under way
        await asyncio.sleep(0.01)
        if quiet():
            return
    raise AssertionError("collaboration did not settle")


def record_of(services: Runtime, run_id: str) -> SubagentRun:
    record = services.store.runs.get(run_id)
    assert record is not None
    return record


def entry_of(services: Runtime, key: str) -> SessionEntry:
    entry = services.store.get(key)
    assert entry is not None, key
    return entry


def task_of(services: Runtime, run_id: str) -> TaskRecord:
    (task,) = services.store.tasks.by_run_id(run_id)
    return task


def tasks_owned_by(services: Runtime, owner: str) -> list[TaskRecord]:
    return services.store.tasks.page(TaskQuery(owner_key=owner), None, 100).tasks


def descendants_of(services: Runtime, key: str) -> list[str]:
    return [entry.key for entry in services.store.descendants(entry_of(services, key).lineage_path)]


def first_user_text(services: Runtime, key: str) -> str:
    first = transcript(services, key)[0]
    assert first["role"] == "user"
    content = first["content"]
    assert isinstance(content, list)
    block = content[0]
    assert isinstance(block, dict)
    text = block["text"]
    assert isinstance(text, str)
    return text


# --- lineage -------------------------------------------------------------------------------------


async def test_child_lineage_with_default_depth(services: Runtime) -> None:
    parent = await make_requester(services)
    result = await accepted(services, task="t", label="scout")
    key = result["childSessionKey"]
    child = entry_of(services, key)
    assert child.spawned_by == MAIN
    assert child.parent_session_key == MAIN  # the create event names the parent
    assert child.lineage_parent == MAIN
    assert child.lineage_path == (MAIN, key)
    assert child.spawn_depth == 1
    assert (child.subagent_role, child.subagent_control_scope) == ("leaf", "none")
    assert (child.root_session_key, child.trace_id) == (MAIN, parent.trace_id)
    workspace = str(services.runs.config.resolve_agent("main").workspace)
    assert child.spawned_workspace_dir == workspace
    assert child.label == "scout"
    assert descendants_of(services, MAIN) == [key]


async def test_orchestrator_child_and_leaf_grandchild(make_services: MakeServices) -> None:
    services = await make_services(limits(maxSpawnDepth=2))
    parent = await make_requester(services)
    child_key = (await accepted(services, task="plan"))["childSessionKey"]
    child = entry_of(services, child_key)
    assert (child.spawn_depth, child.subagent_role, child.subagent_control_scope) == (
        1,
        "orchestrator",
        "children",
    )
    grandchild_run = await accepted(services, child_key, task="dig")
    grandchild = entry_of(services, grandchild_run["childSessionKey"])
    assert CHILD_KEY.match(grandchild.key)  # flat at every depth
    assert grandchild.spawned_by == child_key
    assert (
        grandchild.spawn_depth,
        grandchild.subagent_role,
        grandchild.subagent_control_scope,
    ) == (
        2,
        "leaf",
        "none",
    )
    assert grandchild.lineage_path == (MAIN, child_key, grandchild.key)
    assert (grandchild.root_session_key, grandchild.trace_id) == (MAIN, parent.trace_id)
    assert first_user_text(services, grandchild.key).startswith(
        "[Subagent Context] You are running as a subagent (depth 2/2)."
    )
    record = record_of(services, grandchild_run["runId"])
    assert (record.requester_session_key, record.controller) == (child_key, child_key)
    # A child spawned by a depth-1 requester is told so in its system prompt, too.
    await ended(services, grandchild_run["runId"])
    (call,) = runner_of(services).calls_on(grandchild.key)
    assert call.extra is not None
    assert "role: leaf." in call.extra
    await quiesce(services)


async def test_per_agent_max_depth_decides_the_role(make_services: MakeServices) -> None:
    raw = {"agents": {"list": [{"id": "main", "subagents": {"maxSpawnDepth": 3}}]}}
    services = await make_services(raw)
    await make_requester(services)
    child = entry_of(services, (await accepted(services, task="t"))["childSessionKey"])
    assert (child.subagent_role, child.subagent_control_scope) == ("orchestrator", "children")


async def test_first_message_and_the_run_on_the_subagent_lane(services: Runtime) -> None:
    await make_requester(services)
    result = await accepted(services, task="count the files\nin src", label="counter")
    key = result["childSessionKey"]
    assert first_user_text(services, key) == (
        "[Subagent Context] You are running as a subagent (depth 1/1). Results auto-announce "
        "to your requester; do not busy-poll for status.\n[Subagent Task]: count the files\nin src"
    )
    await ended(services, result["runId"])
    (call,) = runner_of(services).calls_on(key)
    assert call.run_id == result["runId"]
    assert (call.lane, call.origin, call.deliver) == ("subagent", "agent", False)
    assert call.extra is not None
    assert f"Requester session: {MAIN}." in call.extra
    assert f'Your session: {key}. Label: "counter".' in call.extra
    await quiesce(services)


async def test_created_event_names_the_requester(services: Runtime) -> None:
    await make_requester(services)
    async with WireRecorder(services) as seen:
        result = await accepted(services, task="t")
        await seen.settled()
    created = [
        event.payload
        for event in seen
        if event.name == "sessions.changed" and event.payload.get("reason") == "create"
    ]
    assert [payload["sessionKey"] for payload in created] == [result["childSessionKey"]]
    assert created[0]["spawnedBy"] == MAIN
    assert created[0]["spawnDepth"] == 1


# --- cross-agent spawn ---------------------------------------------------------------------------


async def test_cross_agent_spawn_with_any_allowed(make_services: MakeServices) -> None:
    raw = limits(allowAgents=["*"])
    raw["agents"]["list"] = [{"id": "reviewer"}]
    services = await make_services(raw)
    parent = await make_requester(services)
    result = await accepted(services, task="review the diff", agentId="Reviewer")
    key = result["childSessionKey"]
    match = CHILD_KEY.match(key)
    assert match is not None
    assert match["agent"] == "reviewer"
    child = entry_of(services, key)
    assert (child.spawned_by, child.root_session_key, child.trace_id) == (
        MAIN,
        MAIN,
        parent.trace_id,
    )
    reviewer_workspace = str(services.runs.config.resolve_agent("reviewer").workspace)
    assert child.spawned_workspace_dir == reviewer_workspace
    assert record_of(services, result["runId"]).workspace_dir == reviewer_workspace
    assert task_of(services, result["runId"]).agent_id == "reviewer"
    await ended(services, result["runId"])
    (call,) = runner_of(services).calls_on(key)
    assert call.lane == "subagent"
    await quiesce(services)
