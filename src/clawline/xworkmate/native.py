"""The native task record of an XWorkmate run.

OpenClaw showed XWorkmate runs as "running" forever because no task record existed for them.
clawline creates one when a run is prepared — runtime ``cli``, ``running``, requested and owned
by the session — and ends it when the run ends (``agent_end``), so ``xworkmate.tasks.get`` finds
a real task with a real status. Being a ``cli`` task, ``tasks.cancel`` of it also aborts the run
in that session.

Run ids are the app's and only unique within a session (every thread has its ``turn-1``), so
the task id names both: ``xworkmate-<runId segment>-<16 hex of SHA-256(session key, runId)>``
(:func:`native_task_id`). A second session preparing the same run id gets a task of its own,
and a run's end finishes only its own session's task.

Lookups are bound to the session: a task of another session is never returned. Blocking:
call on a store worker (``host.run``); the tasks are the host's task registry.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from clawline.records.task import TaskRecord
from clawline.xworkmate.constants import TASK_ID_PREFIX
from clawline.xworkmate.scope import safe_scope_segment

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

END_STATUSES = {
    "done": "succeeded",
    "failed": "failed",
    "timeout": "timed_out",
    "killed": "cancelled",
}
"""A run's end status (``agent_end``) → the task's terminal status."""
_SUMMARY_CHARS = 2048


_DIGEST_CHARS = 16


def native_task_id(session_key: str, run_id: str) -> str:
    """The task id of run ``run_id`` of the (canonical) ``session_key``: readable (the run id
    as a path-safe segment), bounded, and distinct for every session/run pair."""
    pair = f"{session_key}\x00{run_id}".encode()
    digest = hashlib.sha256(pair).hexdigest()[:_DIGEST_CHARS]
    return f"{TASK_ID_PREFIX}{safe_scope_segment(run_id)}-{digest}"


def create_native_task(
    session_key: str, run_id: str, app_thread_key: str, *, host: PluginHost
) -> TaskRecord:
    """The run's task, created ``running`` unless it exists already (a repeated prepare)."""
    registry = host.tasks
    task_id = native_task_id(session_key, run_id)
    existing = registry.get(task_id)
    if existing is not None:
        return existing
    return registry.create(
        runtime="cli",
        task=f"XWorkmate task run {run_id} ({app_thread_key})",
        requester_session_key=session_key,
        owner_key=session_key,
        run_id=run_id,
        task_kind="xworkmate",
        source_id=app_thread_key,
        running=True,
        task_id=task_id,
    )


def finish_native_task(
    session_key: str,
    run_id: str,
    *,
    host: PluginHost,
    status: str,
    summary: str | None,
    error: str | None,
) -> TaskRecord | None:
    """End the run's task (if it has one, of this session, still active)."""
    registry = host.tasks
    task = registry.get(native_task_id(session_key, run_id))
    if task is None or task.requester_session_key != session_key or task.terminal:
        return task
    return registry.finish(
        task.task_id,
        status,
        summary=summary[:_SUMMARY_CHARS] if summary else None,
        error=error[:_SUMMARY_CHARS] if error else None,
    )


def _belongs(task: TaskRecord | None, session_key: str) -> bool:
    return task is not None and session_key in (
        task.requester_session_key,
        task.child_session_key,
        task.owner_key,
    )


def _of_run(host: PluginHost, session_key: str, run_id: str) -> TaskRecord | None:
    """The session's newest task of ``run_id`` (other sessions may use the same run id)."""
    for task in host.tasks.for_run(run_id):
        if _belongs(task, session_key):
            return task
    return None


def find_native_task(session_key: str, token: str, *, host: PluginHost) -> TaskRecord | None:
    """The session's task named by ``token`` — a task id, the id of its run ``token``, a run
    id, or ``xworkmate-<runId>`` — or its latest task when ``token`` is empty."""
    registry = host.tasks
    if not token:
        return registry.latest_for_session(session_key)
    by_id = registry.get(token)
    if _belongs(by_id, session_key):
        return by_id
    own = registry.get(native_task_id(session_key, token))
    if _belongs(own, session_key):
        return own
    found = _of_run(host, session_key, token)
    if found is None and token.startswith(TASK_ID_PREFIX):
        found = _of_run(host, session_key, token[len(TASK_ID_PREFIX) :])
    return found
