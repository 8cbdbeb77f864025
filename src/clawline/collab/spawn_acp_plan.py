"""What an ACP spawn writes, in **one** transaction (docs/collaboration.md):

- the child entry ``agent:<acpAgentId>:acp:<uuid>`` with its lineage — ``spawnedBy`` and
  ``parentSessionKey`` (the requester), ``spawnDepth`` (requester depth + 1),
  ``spawnedWorkspaceDir`` (the requester's workspace), ``spawnedCwd`` (the agent's working
  directory) — its ``label``, its ``deliveryContext`` when thread-bound, and its ``acp``
  metadata (:data:`ACP_META`) ``{agent, mode: "oneshot"|"persistent", cwd}`` (``acpSessionId``
  is added once the agent has opened its session; the acp spawn runtime reads it back with
  :func:`acp_meta` to serve and reopen the child);
- the thread binding, when ``thread: true``;
- a ``running`` task, runtime ``acp``, with the run id;
- unless ``streamTo: "parent"``, a sub-agent run record (``runtime: "acp"``), so the run's end
  is written like a sub-agent's: record, task and — for run mode, unless
  ``expectsCompletionMessage: false`` — the requester's inbox row (the durable announce).
  Session-mode children are not announced (their output belongs to their thread).

:class:`AcpChildren` writes it (:meth:`~AcpChildren.create`); a failed start deletes all of it
again (:meth:`~AcpChildren.discard`). The writes are the sub-agent spawn's
(:mod:`clawline.collab.spawn_write`).

The record carries the spawn's key (:mod:`clawline.collab.spawn_key`); the transaction takes
the requester's spawn lock first, and a key already recorded raises
:class:`~clawline.collab.spawn_key.AlreadySpawned` and writes nothing. ``streamTo: "parent"``
children have no record, hence no key.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline import keys
from clawline.channels.thread_bindings.planner import ThreadPlan
from clawline.channels.thread_bindings.planning import bind_failed_text
from clawline.collab.spawn_args import SpawnRequest
from clawline.collab.spawn_key import AlreadySpawned
from clawline.collab.spawn_write import discard_child, write_child
from clawline.errors import ClawlineError, Conflict, LabelInUse
from clawline.records.collab import SubagentRun
from clawline.records.session import SessionEntry
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab")

ACP_META = "acp"
"""The entry field of an ACP child: ``{agent, mode: "oneshot"|"persistent", cwd,
acpSessionId?}``."""


def acp_meta(entry: SessionEntry | None) -> Mapping[str, object] | None:
    """The ACP metadata of a spawned ACP child's entry, else ``None``."""
    if entry is None:
        return None
    meta = entry.extra.get(ACP_META)
    return meta if isinstance(meta, Mapping) and isinstance(meta.get("agent"), str) else None


class ChildRefused(Conflict):
    """The spawn transaction failed; ``code`` is the result's ``errorCode``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class AcpChildPlan:
    requester: str
    child_key: str
    run_id: str
    task_id: str
    agent_id: str
    depth: int
    task: str
    label: str | None
    mode: str
    cleanup: str
    cwd: str
    workspace_dir: str
    run_timeout_seconds: int
    expects_completion_message: bool
    stream_to_parent: bool
    resume_session_id: str | None
    spawn_key: str | None = None

    @classmethod
    def build(
        cls,
        request: SpawnRequest,
        *,
        requester: str,
        requester_depth: int,
        child_key: str,
        agent_id: str,
        cwd: str,
        workspace_dir: str,
        default_timeout_s: int,
        spawn_key: str | None = None,
    ) -> AcpChildPlan:
        timeout = request.run_timeout_seconds
        return cls(
            requester=requester,
            child_key=child_key,
            run_id=str(uuid.uuid4()),
            task_id=str(uuid.uuid4()),
            agent_id=agent_id,
            depth=requester_depth + 1,
            task=request.task,
            label=request.label,
            mode=request.mode,
            cleanup=request.cleanup,
            cwd=cwd,
            workspace_dir=workspace_dir,
            run_timeout_seconds=default_timeout_s if timeout is None else timeout,
            expects_completion_message=request.expects_completion_message,
            stream_to_parent=request.stream_to == "parent",
            resume_session_id=request.resume_session_id,
            spawn_key=None if request.stream_to == "parent" else spawn_key,
        )

    @property
    def runtime_mode(self) -> str:
        """OpenClaw's ACP runtime mode: ``session`` → ``persistent``, ``run`` → ``oneshot``."""
        return "persistent" if self.mode == "session" else "oneshot"

    def meta(self, acp_session_id: str | None = None) -> JSONObject:
        meta: JSONObject = {"agent": self.agent_id, "mode": self.runtime_mode, "cwd": self.cwd}
        if acp_session_id is not None:
            meta["acpSessionId"] = acp_session_id
        return meta

    def entry_changes(self) -> JSONObject:
        changes: JSONObject = {
            "spawnedBy": self.requester,
            "parentSessionKey": self.requester,
            "spawnDepth": self.depth,
            "spawnedWorkspaceDir": self.workspace_dir,
            "spawnedCwd": self.cwd,
            ACP_META: self.meta(),
        }
        if self.label is not None:
            changes["label"] = self.label
        return changes

    def record(self, now: int, *, main_key: str) -> SubagentRun:
        return SubagentRun(
            run_id=self.run_id,
            child_session_key=self.child_key,
            requester_session_key=self.requester,
            requester_display_key=keys.display_key(self.requester, main_key),
            task=self.task,
            created_at=now,
            started_at=now,
            cleanup=self.cleanup,
            label=self.label,
            workspace_dir=self.workspace_dir,
            run_timeout_seconds=self.run_timeout_seconds,
            spawn_mode=self.mode,
            runtime="acp",
            expects_completion_message=self.expects_completion_message and self.mode == "run",
            task_id=self.task_id,
            spawn_key=self.spawn_key,
        )


class AcpChildren:
    """Writes and deletes ACP children (module docstring); ``main_key`` gives the requester's
    display key on the run record."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        tasks: TaskRegistry,
        main_key: str,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._tasks = tasks
        self._main_key = main_key

    async def create(self, plan: AcpChildPlan, thread: ThreadPlan | None) -> SessionEntry:
        """Write the child, binding, task and record; raises :class:`ChildRefused` or
        :class:`~clawline.collab.spawn_key.AlreadySpawned`."""
        try:
            entry = await self._workers.run(self._create_now, plan, thread)
        except AlreadySpawned:
            raise
        except LabelInUse as error:
            raise ChildRefused(error.message, "spawn_failed") from error
        except Conflict as error:
            if thread is None:
                text = f"Failed to register ACP run: {error.message}"
                raise ChildRefused(text, "spawn_failed") from error
            raise ChildRefused(bind_failed_text(error.message), "thread_binding_invalid") from error
        except ClawlineError as error:
            text = f"Failed to register ACP run: {error.message}"
            raise ChildRefused(text, "spawn_failed") from None
        return entry

    def _create_now(self, plan: AcpChildPlan, thread: ThreadPlan | None) -> SessionEntry:
        main_key = self._main_key
        with self._catalog.transaction() as work:
            entry, _ = write_child(
                work,
                store=self._store,
                tasks=self._tasks,
                clock=self._clock,
                requester=plan.requester,
                child_key=plan.child_key,
                changes=plan.entry_changes(),
                thread=thread,
                runtime="acp",
                task=plan.task,
                run_id=plan.run_id,
                task_id=plan.task_id,
                label=plan.label,
                agent_id=plan.agent_id,
                spawn_key=plan.spawn_key,
                record=None
                if plan.stream_to_parent
                else lambda now: plan.record(now, main_key=main_key),
            )
        return entry

    async def record_session(self, plan: AcpChildPlan, acp_session_id: str | None) -> None:
        """Remember the agent's session id (so a later run can ``session/load`` it)."""
        if acp_session_id is None:
            return
        changes: JSONObject = {ACP_META: plan.meta(acp_session_id)}
        try:
            await self._workers.run(self._catalog.patch, plan.child_key, changes, create=False)
        except ClawlineError as error:
            log.warning("ACP session id of %s not stored: %s", plan.child_key, error)

    async def discard(self, plan: AcpChildPlan) -> None:
        """Delete a provisional child with its record, task and binding."""
        try:
            await self._workers.run(self._discard_now, plan)
        except Exception:
            log.exception("provisional ACP child %s could not be deleted", plan.child_key)

    def _discard_now(self, plan: AcpChildPlan) -> SessionEntry | None:
        with self._catalog.transaction() as work:
            return discard_child(
                work,
                child_key=plan.child_key,
                run_id=plan.run_id,
                task_id=plan.task_id,
                now=self._clock.now_ms(),
            )
