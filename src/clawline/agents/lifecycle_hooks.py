"""The plugins hear of the agents' lifecycle: runs and sub-agents, as plugin hooks through the
plugin manager. Events are in OpenClaw's camelCase shape; nothing is read, built or called when
no plugin implements the hook. It reads run objects and run records, so it lives with the
agents, above the plugin API it calls (docs/plugins.md).

Runs — :class:`PluginRunObserver`, which the runtime wires to the run manager's hooks:

- ``session_start`` — awaited when the first run of a session (new, or reset since) starts,
  before its runner: ``{sessionKey, sessionId, runId}``;
- ``agent_end`` — after every run's end is written, as a task the run manager's shutdown waits
  for: ``{sessionKey, sessionId, runId, success, status, error?, output, messages,
  durationMs}``; ``messages`` are the transcript messages of the run (its user message and
  what the run appended), as ``chat.history`` shows them.

Sub-agents — called by the spawns and the sub-agent registry (``clawline.collab``):

- ``subagent_spawning`` (:func:`spawning_refusal`, may refuse), after the spawn's own checks and
  before anything is written;
- ``subagent_spawned`` (:func:`fire_spawned`): the child exists and its run was started;
- ``subagent_ended`` (:func:`fire_subagent_ended`): the child's run record ended.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.messages import MESSAGE_EVENT
from clawline.agents.run import Run, RunOutcome
from clawline.records.transcript import message_json
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.plugins.manager import PluginManager
    from clawline.records.collab import SubagentRun
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

# --- runs: session_start, agent_end ------------------------------------------------------------

_PAGE = 1000


def run_messages(store: Store, session_id: str, run_id: str, message_seq: int | None) -> list[JSON]:
    """Blocking: the transcript messages of one run, oldest first."""
    first = message_seq or 1
    found: list[JSON] = []
    after = first - 1
    while True:
        events = store.events(session_id, after_seq=after, limit=_PAGE)
        for event in events:
            if event.type != MESSAGE_EVENT:
                continue
            if event.seq == message_seq or event.data.get("runId") == run_id:
                found.append(message_json(event))
        if len(events) < _PAGE:
            return found
        after = events[-1].seq


class PluginRunObserver:
    """Tells the plugins of runs; the runtime wires :meth:`first_run` to
    ``runs.on_first_run`` and :meth:`run_ended` to ``runs.on_run_end``."""

    def __init__(self, *, plugins: PluginManager, store: Store, workers: StoreWorkers) -> None:
        self._plugins = plugins
        self._store = store
        self._workers = workers

    async def first_run(self, run: Run) -> None:
        """``session_start``, awaited before the run's runner."""
        plugins = self._plugins
        if not plugins.implements("session_start"):
            return
        event: JSONObject = {
            "sessionKey": run.session_key,
            "sessionId": run.session_id,
            "runId": run.run_id,
        }
        await plugins.session_start(event, plugins.context(**_fields(run)))

    def run_ended(self, run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        """``agent_end``, as a task of the run manager (nothing when no plugin listens)."""
        return self._agent_end(run, outcome) if self._plugins.implements("agent_end") else None

    async def _agent_end(self, run: Run, outcome: RunOutcome) -> None:
        plugins = self._plugins
        messages: list[JSON] = []
        if run.session_id is not None:
            messages = await self._workers.run(
                run_messages, self._store, run.session_id, run.run_id, run.message_seq
            )
        started = outcome.started_at if outcome.started_at is not None else outcome.ended_at
        event: JSONObject = {
            "sessionKey": run.session_key,
            "sessionId": run.session_id,
            "runId": run.run_id,
            "success": outcome.ok,
            "status": outcome.status,
            "output": outcome.text,
            "messages": messages,
            "durationMs": outcome.ended_at - started,
        }
        if outcome.error is not None:
            event["error"] = outcome.error
        await plugins.agent_end(event, plugins.context(**_fields(run)))


def _fields(run: Run) -> dict[str, str]:
    return {
        "session_key": run.session_key,
        "run_id": run.run_id,
        "agent_id": keys.agent_id_of(run.session_key),
    }


# --- sub-agents: subagent_spawning, subagent_spawned, subagent_ended ----------------------------

_OUTCOMES = {
    "succeeded": "ok",
    "failed": "error",
    "lost": "error",
    "timed_out": "timeout",
    "cancelled": "killed",
}


def _spawn_event(
    *,
    requester: str,
    child_key: str,
    agent_id: str,
    label: str | None,
    mode: str,
    runtime: str,
) -> JSONObject:
    event: JSONObject = {
        "requesterSessionKey": requester,
        "childSessionKey": child_key,
        "agentId": agent_id,
        "mode": mode,
        "runtime": runtime,
    }
    if label is not None:
        event["label"] = label
    return event


async def spawning_refusal(
    *,
    plugins: PluginManager,
    requester: str,
    requester_run_id: str | None,
    child_key: str,
    agent_id: str,
    label: str | None,
    mode: str,
    runtime: str,
    task: str,
) -> str | None:
    """``subagent_spawning``: the refusal text of the first plugin that refuses, else
    ``None``. Call it after the spawn's own checks and before anything is written."""
    if not plugins.implements("subagent_spawning"):
        return None
    event = _spawn_event(
        requester=requester,
        child_key=child_key,
        agent_id=agent_id,
        label=label,
        mode=mode,
        runtime=runtime,
    )
    event["task"] = task
    ctx = plugins.context(
        session_key=requester, run_id=requester_run_id, agent_id=keys.agent_id_of(requester)
    )
    return await plugins.subagent_spawning(event, ctx)


async def fire_spawned(
    *,
    plugins: PluginManager,
    requester: str,
    child_key: str,
    run_id: str,
    agent_id: str,
    label: str | None,
    mode: str,
    runtime: str,
) -> None:
    """``subagent_spawned``: the child exists and its run was started."""
    if not plugins.implements("subagent_spawned"):
        return
    event = _spawn_event(
        requester=requester,
        child_key=child_key,
        agent_id=agent_id,
        label=label,
        mode=mode,
        runtime=runtime,
    )
    event["runId"] = run_id
    ctx = plugins.context(session_key=child_key, run_id=run_id, agent_id=agent_id)
    await plugins.subagent_spawned(event, ctx)


def ended_outcome(task_status: str) -> str:
    """``ok`` | ``error`` | ``timeout`` | ``killed`` for a record ended with the task status
    ``task_status`` (its ``Ending.task_status``)."""
    return _OUTCOMES.get(task_status, "error")


async def fire_subagent_ended(
    record: SubagentRun, outcome: str, error: str | None, *, plugins: PluginManager
) -> None:
    """``subagent_ended``: the child's run record ended with ``outcome``."""
    if not plugins.implements("subagent_ended"):
        return
    child = record.child_session_key
    event: JSONObject = {
        "requesterSessionKey": record.requester_session_key,
        "childSessionKey": child,
        "runId": record.run_id,
        "outcome": outcome,
        "targetKind": "subagent" if keys.is_subagent_key(child) else "acp",
    }
    if error is not None:
        event["error"] = error
    ctx = plugins.context(session_key=child, run_id=record.run_id, agent_id=keys.agent_id_of(child))
    await plugins.subagent_ended(event, ctx)
