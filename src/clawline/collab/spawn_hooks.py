"""The plugins' subagent hooks (through the plugin manager, ``plugins``): ``subagent_spawning``
(may refuse), ``subagent_spawned`` and ``subagent_ended``. Events in OpenClaw's camelCase
shape; nothing is built when no plugin implements the hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline import keys
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.collab.completion import Ending
    from clawline.plugins.manager import PluginManager
    from clawline.records.collab import SubagentRun

__all__ = ["ended_outcome", "fire_spawned", "fire_subagent_ended", "spawning_refusal"]

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


def ended_outcome(ending: Ending) -> str:
    """``ok`` | ``error`` | ``timeout`` | ``killed`` for a record's ending."""
    return _OUTCOMES.get(ending.task_status, "error")


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
