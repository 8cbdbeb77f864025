"""The native task record of an XWorkmate run (multisession-plugin.md §13).

OpenClaw showed XWorkmate runs as "running" forever because no task record existed for them.
clawline creates one when a run is prepared — ``taskId = "xworkmate-<runId>"``, runtime
``cli``, ``running``, requested and owned by the session — and ends it when the run ends
(``agent_end``), so ``xworkmate.tasks.get`` finds a real task with a real status. Being a
``cli`` task, ``tasks.cancel`` of it also aborts the run in that session.

Lookups are bound to the session: a task of another session is never returned. Blocking:
call through ``services.call``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.plugins.xworkmate.constants import TASK_ID_PREFIX
from clawline.tasks.model import TaskRecord

if TYPE_CHECKING:
    from clawline.services import Services

__all__ = [
    "END_STATUSES",
    "create_native_task",
    "find_native_task",
    "finish_native_task",
    "native_task_id",
]

END_STATUSES = {
    "done": "succeeded",
    "failed": "failed",
    "timeout": "timed_out",
    "killed": "cancelled",
}
"""A run's end status (``agent_end``) → the task's terminal status."""
_SUMMARY_CHARS = 2048


def native_task_id(run_id: str) -> str:
    return TASK_ID_PREFIX + run_id


def create_native_task(
    services: Services, session_key: str, run_id: str, app_thread_key: str
) -> TaskRecord:
    """The run's task, created ``running`` unless it exists already (a repeated prepare)."""
    registry = services.tasks
    task_id = native_task_id(run_id)
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
    services: Services,
    session_key: str,
    run_id: str,
    *,
    status: str,
    summary: str | None,
    error: str | None,
) -> TaskRecord | None:
    """End the run's task (if it has one, of this session, still active)."""
    registry = services.tasks
    task = registry.get(native_task_id(run_id))
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


def find_native_task(services: Services, session_key: str, token: str) -> TaskRecord | None:
    """The session's task named by ``token`` (a task id, ``xworkmate-<token>``, then a run
    id), or its latest task when ``token`` is empty."""
    registry = services.tasks
    if not token:
        return registry.latest_for_session(session_key)
    for candidate in (
        registry.get(token),
        registry.get(native_task_id(token)),
        registry.by_run_id(token),
    ):
        if _belongs(candidate, session_key):
            return candidate
    return None
