"""A task as OpenClaw's gateway shows it to its clients: the *task summary* of its ``task``
events (``{action: "upserted", task}``), which OpenClaw's Control UI reads to show a parent's
running subagents above its composer (docs/control-ui.md).

The names, the ledger statuses (``succeeded`` → ``completed``, ``lost`` → ``failed``) and the
80-character title are OpenClaw's; clawline's own methods keep sending the task record
(:meth:`TaskRecord.to_json <clawline.records.task.TaskRecord.to_json>`).
"""

from __future__ import annotations

from clawline.records.task import TaskRecord
from clawline.types import JSONObject

LEDGER_STATUS = {
    "queued": "queued",
    "running": "running",
    "succeeded": "completed",
    "failed": "failed",
    "timed_out": "timed_out",
    "cancelled": "cancelled",
    "lost": "failed",
}
TITLE_MAX_CHARS = 80
DEFAULT_TITLE = "Background task"


def task_title(task: TaskRecord) -> str:
    """The label, else the task text, whitespace collapsed, cut to :data:`TITLE_MAX_CHARS`."""
    text = " ".join(((task.label or "").strip() or task.task.strip()).split())
    if len(text) > TITLE_MAX_CHARS:
        text = text[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return text or DEFAULT_TITLE


def task_summary(task: TaskRecord) -> JSONObject:
    """OpenClaw's task summary of ``task`` (optional fields only when set)."""
    summary: JSONObject = {
        "id": task.task_id,
        "taskId": task.task_id,
        "kind": task.task_kind or task.runtime,
        "runtime": task.runtime,
        "status": LEDGER_STATUS.get(task.status, task.status),
        "title": task_title(task),
        "sessionKey": task.requester_session_key,
        "ownerKey": task.owner_key,
        "createdAt": task.created_at,
        "updatedAt": task.last_event_at or task.ended_at or task.started_at or task.created_at,
        "deliveryStatus": task.delivery_status,
    }
    optional = {
        "agentId": task.agent_id,
        "childSessionKey": task.child_session_key,
        "runId": task.run_id,
        "flowId": task.parent_flow_id,
        "parentTaskId": task.parent_task_id,
        "sourceId": task.source_id,
        "startedAt": task.started_at,
        "endedAt": task.ended_at,
        "progressSummary": task.progress_summary,
        "terminalSummary": task.terminal_summary,
        "error": task.error,
        "terminalOutcome": task.terminal_outcome,
    }
    summary.update({name: value for name, value in optional.items() if value is not None})
    return summary
