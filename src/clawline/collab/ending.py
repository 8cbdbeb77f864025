"""Ending a sub-agent run record: one transaction writes the record's end, the task's terminal
status and — unless suppressed — the requester's inbox row (docs/design-agents.md).

Suppressed (no inbox row): ``expectsCompletionMessage: false`` (task ``deliveryStatus``
``not_applicable``); a record already carrying ``suppressAnnounceReason`` (``killed``,
``steer-restart``); a child whose final text is exactly ``ANNOUNCE_SKIP`` or ``NO_REPLY``
(``delivered``: the child chose silence, as in OpenClaw).

``cleanup: "delete"`` run-mode children get ``archiveAtMs = endedAt + archiveAfterMinutes``
(the requester's agent's setting; 0 disables), after which the archive sweep deletes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.steps import ANNOUNCE_SKIP, NO_REPLY, is_token
from clawline.collab.completion import CompletionEvent, Ending, render_event, stats_line
from clawline.records.collab import InboxItem, SubagentRun, cap_result_text
from clawline.sessions.catalog import CatalogTransaction
from clawline.types import JSON

if TYPE_CHECKING:
    from clawline.config import AgentsConfig
    from clawline.store.base import Store
    from clawline.tasks.registry import TaskRegistry

__all__ = ["end_record", "requester_is_subagent"]


def requester_is_subagent(store: Store, requester: str) -> bool:
    """A sub-agent (depth >= 1) or cron requester gets the internal-update instruction."""
    if keys.is_cron_key(requester):
        return True
    entry = store.get(requester)
    return entry is not None and (entry.spawn_depth or 0) >= 1


def _archive_at(config: AgentsConfig, record: SubagentRun, now: int) -> int | None:
    if record.cleanup != "delete" or (record.spawn_mode or "run") != "run":
        return None
    agent = config.resolve_agent(keys.agent_id_of(record.requester_session_key))
    minutes = agent.subagents.archive_after_minutes
    return now + minutes * 60_000 if minutes > 0 else None


def end_record(
    work: CatalogTransaction,
    record: SubagentRun,
    ending: Ending,
    *,
    store: Store,
    tasks: TaskRegistry,
    config: AgentsConfig,
    result: str,
    usage: Mapping[str, JSON] | None,
    runtime_ms: int | None,
    now: int,
) -> InboxItem | None:
    """Write the end of an active ``record`` (locked by the caller) inside ``work``; return
    the inbox row written for its requester, if any. ``config`` gives the requester's agent's
    ``archiveAfterMinutes``. Blocking: run on a store worker."""
    tx = work.tx
    silent = is_token(result, ANNOUNCE_SKIP) or is_token(result, NO_REPLY)
    announce = (
        record.expects_completion_message is not False
        and record.suppress_announce_reason is None
        and not silent
    )
    tx.runs.update(
        replace(
            record,
            ended_at=now,
            outcome=dict(ending.outcome),
            ended_reason=ending.ended_reason,
            frozen_result_text=cap_result_text(result),
            archive_at_ms=_archive_at(config, record, now),
        )
    )
    task = tx.tasks.get(record.task_id) if record.task_id else None
    if task is not None:
        registry = tasks
        if not task.terminal:
            if ending.task_status == "lost":
                registry.mark_lost(task.task_id, ending.error or "lost", tx=tx)
            else:
                summary = ending.status_label if ending.task_status != "succeeded" else None
                registry.finish(
                    task.task_id, ending.task_status, summary=summary, error=ending.error, tx=tx
                )
        if not announce:
            delivery = "delivered" if silent else "not_applicable"
            registry.set_delivery(task.task_id, delivery, tx=tx)
    if not announce:
        return None
    child = store.get(record.child_session_key)
    event = CompletionEvent.build(
        child_session_key=record.child_session_key,
        child_session_id=None if child is None else child.session_id,
        label=record.label,
        task=record.task,
        ending=ending,
        result=result,
        stats=stats_line(
            runtime_ms=runtime_ms,
            usage=usage,
            session_key=record.child_session_key,
            session_id=None if child is None else child.session_id,
        ),
        requester_is_subagent=requester_is_subagent(store, record.requester_session_key),
    )
    return tx.inbox.add(
        requester_session_key=record.requester_session_key,
        child_session_key=record.child_session_key,
        run_id=record.run_id,
        status=ending.task_status,
        payload={"text": render_event(event), "event": event.to_json()},
        created_at=now,
        task_id=record.task_id,
    )
