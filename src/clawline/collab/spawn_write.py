"""What a spawn writes for its child, in **one** transaction, and how a failed start takes it
back — shared by the sub-agent registry (:mod:`clawline.collab.subagents`) and the ACP children
(:mod:`clawline.collab.spawn_acp_plan`).

:func:`write_child` takes the requester's spawn lock (``tx.runs.count_active``), refuses a
spawn key already recorded (:class:`~clawline.collab.spawn_key.AlreadySpawned`, nothing is
written) and, when a limit is given, a requester at its limit of active children
(:class:`ChildLimitReached`); then it writes the child entry (with its ``deliveryContext`` when
thread-bound), the thread binding, the ``running`` task and the run record. :func:`discard_child`
deletes the record, the task, the bindings and the entry again.

Blocking: both run inside a catalog transaction on a store worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clawline.channels.thread_bindings.planner import ThreadPlan, bind_thread
from clawline.collab.spawn_key import AlreadySpawned
from clawline.errors import Conflict, SessionNotFound
from clawline.records.collab import SubagentRun
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import CatalogTransaction, Cause
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.store.base import Store
    from clawline.tasks.registry import TaskRegistry


def max_children_text(active: int, limit: int) -> str:
    return f"sessions_spawn has reached max active children for this session ({active}/{limit})"


class ChildLimitReached(Conflict):
    """Spawn check 4 (active children), found inside the spawn transaction."""

    def __init__(self, active: int, limit: int) -> None:
        super().__init__(max_children_text(active, limit))


def write_child(
    work: CatalogTransaction,
    *,
    store: Store,
    tasks: TaskRegistry,
    clock: Clock,
    requester: str,
    child_key: str,
    changes: JSONObject,
    thread: ThreadPlan | None,
    runtime: str,
    task: str,
    run_id: str,
    task_id: str,
    label: str | None,
    agent_id: str | None = None,
    spawn_key: str | None = None,
    max_children: int | None = None,
    record: Callable[[int], SubagentRun] | None = None,
) -> tuple[SessionEntry, SubagentRun | None]:
    """Write the child ``child_key`` of ``requester`` inside ``work``: its entry (``changes``),
    its binding (``thread``), its ``running`` task (``runtime``, ``task``, ``run_id``,
    ``task_id``, ``label``, ``agent_id``) and the run record ``record(now)`` builds, if any.
    Without ``spawn_key`` and ``max_children`` the spawn lock is not taken. Returns the child's
    entry and its record."""
    tx = work.tx
    if spawn_key is not None or max_children is not None:
        active = tx.runs.count_active(requester)  # the requester's spawn lock
        if spawn_key is not None:
            earlier = tx.runs.by_spawn_key(requester, spawn_key)
            if earlier is not None:
                raise AlreadySpawned(earlier)
        if max_children is not None and active >= max_children:
            raise ChildLimitReached(active, max_children)
    if thread is not None:
        changes = {**changes, "deliveryContext": thread.delivery_context()}
    entry = work.patch(child_key, changes, cause=Cause("create"), new=True).after
    assert entry is not None
    now = clock.now_ms()
    if thread is not None:
        bind_thread(store, thread, child_key, now, tx=tx)
    tasks.create(
        runtime=runtime,
        task=task,
        requester_session_key=requester,
        child_session_key=child_key,
        run_id=run_id,
        label=label,
        agent_id=agent_id,
        source_id=run_id,
        running=True,
        task_id=task_id,
        new_child=True,
        tx=tx,
    )
    written = None if record is None else record(now)
    if written is not None:
        tx.runs.insert(written)
    return entry, written


def discard_child(
    work: CatalogTransaction, *, child_key: str, run_id: str, task_id: str, now: int
) -> SessionEntry | None:
    """Delete a provisional child with its record, task and bindings inside ``work``; return
    the entry deleted, if it was there."""
    tx = work.tx
    tx.runs.delete(run_id)
    tx.tasks.delete(task_id)
    tx.bindings.unbind_session(child_key, now, "spawn-failed")
    try:
        return work.delete(child_key, cause=Cause("delete")).before
    except SessionNotFound:
        return None
