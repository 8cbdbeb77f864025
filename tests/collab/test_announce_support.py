"""Helpers for the durable-announce suites (``test_announce_*.py``, ``test_recovery*.py``,
``test_sweepers*.py``). This module holds no tests; it is named ``test_*`` only because those
are the files its authors own.

Children are planned with :func:`plan_child` (so their keys are known before they run and the
:class:`~tests.collab.support.ScriptedRunner` can be scripted for them), then created and started
through ``services.subagents`` exactly as ``sessions_spawn`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from clawline.agents.run import SendAck
from clawline.agents.runner import RunContext, RunOutput
from clawline.clock import Clock
from clawline.collab.spawn_plan import ChildPlan, plan_child
from clawline.records.collab import InboxItem, SubagentRun
from clawline.records.session import SessionEntry
from clawline.records.task import TaskRecord
from clawline.runtime import Runtime
from clawline.testing import eventually, settled
from clawline.types import JSON
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, Reply, ScriptedRunner, runner_of, transcript

__all__ = [
    "MAIN",
    "Gate",
    "UsageRunner",
    "announcing",
    "child",
    "entry",
    "eventually",
    "inbox_row",
    "occurrences",
    "quiesce",
    "record",
    "requester",
    "run_child",
    "start_child",
    "task_of",
    "text_of",
    "user_messages",
]


class UsageRunner(ScriptedRunner):
    """A scripted runner that also reports token usage for some sessions."""

    def __init__(self) -> None:
        super().__init__()
        self.usage: dict[str, Mapping[str, JSON]] = {}

    async def run(self, ctx: RunContext) -> RunOutput:
        output = await super().run(ctx)
        return replace(output, usage=self.usage.get(ctx.session_key))


class Gate:
    """A reply that holds its run until :meth:`open` (a busy session)."""

    def __init__(self, text: str = "gate passed") -> None:
        self.text = text
        self.entered = asyncio.Event()
        self._open = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    async def __call__(self, ctx: RunContext) -> str:
        self.entered.set()
        await asyncio.wait_for(self._open.wait(), 10)
        return self.text


@contextlib.asynccontextmanager
async def announcing(make_services: MakeServices) -> AsyncIterator[MakeServices]:
    """A services factory whose dispatcher exists from the start (its run-end hook is
    registered) and is stopped, after the runs, when the test ends."""
    opened: list[Runtime] = []

    async def make(raw: dict[str, Any] | None = None, clock: Clock | None = None) -> Runtime:
        services = await make_services(raw, clock)
        assert services.announcer is not None
        opened.append(services)
        return services

    try:
        yield make
    finally:
        for services in opened:
            await services.runs.shutdown()
            await services.announcer.stop()


async def quiesce(services: Runtime, timeout: float = 5.0) -> None:
    """Wait until no run, run-end hook or delivery is under way (:func:`clawline.testing.
    settled`)."""
    await settled(services, timeout=timeout)


async def requester(services: Runtime, key: str = MAIN, **changes: JSON) -> SessionEntry:
    change = await services.call(services.catalog.patch, key, dict(changes))
    assert change.after is not None
    return change.after


async def child(
    services: Runtime,
    requester_key: str = MAIN,
    *,
    reply: Reply | None = "child result",
    task: str = "summarise the build log",
    label: str | None = None,
    cleanup: str = "keep",
    mode: str = "run",
    expects: bool = True,
    max_depth: int = 1,
) -> ChildPlan:
    """Create a child (entry, run record, running task) of ``requester_key``; not started."""
    parent = await services.call(services.store.get, requester_key)
    plan = plan_child(
        requester=requester_key,
        requester_depth=(parent.spawn_depth if parent is not None else None) or 0,
        max_depth=max_depth,
        target_agent_id="main",
        task=task,
        label=label,
        mode=mode,
        cleanup=cleanup,
        workspace_dir=str(services.settings.state_dir),
        run_timeout_seconds=0,
        expects_completion_message=expects,
    )
    if reply is not None:
        runner_of(services).script(plan.child_key, reply)
    await services.subagents.create(plan, max_children=20)
    return plan


async def start_child(services: Runtime, plan: ChildPlan) -> SendAck:
    return await services.subagents.start(plan, extra_system_prompt=plan.system_prompt())


async def run_child(services: Runtime, requester_key: str = MAIN, **options: Any) -> ChildPlan:
    """Create and start a child, and wait until its run record has ended."""
    plan = await child(services, requester_key, **options)
    await start_child(services, plan)
    await eventually(lambda: not record(services, plan.run_id).active)
    return plan


def record(services: Runtime, run_id: str) -> SubagentRun:
    found = services.store.runs.get(run_id)
    assert found is not None
    return found


def task_of(services: Runtime, plan: ChildPlan) -> TaskRecord:
    found = services.store.tasks.get(plan.task_id)
    assert found is not None
    return found


def entry(services: Runtime, key: str) -> SessionEntry:
    found = services.store.get(key)
    assert found is not None
    return found


def inbox_row(services: Runtime, run_id: str) -> InboxItem:
    found = services.store.inbox.by_run(run_id)
    assert found is not None
    return found


def text_of(message: Mapping[str, JSON]) -> str:
    content = message.get("content")
    assert isinstance(content, list)
    return "".join(str(block.get("text", "")) for block in content if isinstance(block, Mapping))


def user_messages(services: Runtime, key: str = MAIN) -> list[Mapping[str, JSON]]:
    return [message for message in transcript(services, key) if message.get("role") == "user"]


def occurrences(services: Runtime, needles: Sequence[str], key: str = MAIN) -> list[int]:
    """How many transcript messages of ``key`` contain each needle."""
    texts = [text_of(message) for message in transcript(services, key)]
    return [sum(needle in text for text in texts) for needle in needles]
