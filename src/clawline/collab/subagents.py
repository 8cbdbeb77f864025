"""The sub-agent registry (``runtime.subagents``): run records of spawned children from their
creation to their end (docs/design-agents.md).

- :meth:`SubagentRegistry.create` — one transaction creates the child entry (lineage, depth,
  role, scope, workspace, label), its ``SubagentRun`` record and its ``running`` task, after
  checking the requester's active children *inside* that transaction (``tx.runs.count_active``
  serialises a requester's spawns), so concurrent spawns cannot overshoot the limit
  (:func:`~clawline.collab.spawn_write.write_child`, which the ACP spawn uses too).
- :meth:`SubagentRegistry.start` sends the child's run (lane ``subagent``); a failure there
  deletes the child, its record and its task again (as OpenClaw does).
- Completion: every run the registry started is watched through the run manager's run-end
  hook (:meth:`SubagentRegistry.run_ended`, registered by the runtime, as is
  :meth:`SubagentRegistry.delivery_done` on the announce dispatcher); when it ends,
  :func:`~clawline.collab.completion.end_record` writes the record's end, the task's status and the
  requester's inbox row in one transaction, and the announce dispatcher is told. Runs aborted
  by a gateway shutdown are left as they are: start-up recovery ends them as ``lost``
  (``clawline.collab.recovery``), exactly like runs cut off by a crash.
- An orchestrator whose turn ends **done** while its own children still run, or while their
  completions wait in its inbox, is not announced yet (OpenClaw defers it too): its record stays
  active and the registry remembers it as *deferred*. The children's completions are delivered to it
  as usual (each starts a turn); at the end of every later turn of that session, and whenever
  one of its children's records ends, the registry looks again, and once nothing is pending the
  record ends with the latest turn's reply — so the requester hears the orchestrator's final
  answer, not its first one. OpenClaw re-runs the orchestrator with a ``:wake`` message for
  this; here the delivered completions are that wake. A failed or timed-out turn ends the
  record at once.
- The deferral survives a crash: once it has to wait, the latest turn's outcome is stored on
  the record (``deferred_outcome``; a leaf child that ends with nothing pending costs no extra
  write), recovery leaves such records active, and the instance that finds one
  no running instance answers for — the next start of a SQLite store's gateway, or any live
  instance of a shared store (every heartbeat) — adopts it (:meth:`adopt_deferred`): the
  children's completions, the lost ones included, are delivered to it there, and its record
  ends with the latest stored turn's reply once nothing it spawned is pending. A turn the crash
  cut off is not replayed (its session ends ``failed``, as recovery leaves every cut-off run).
- :meth:`kill` and :meth:`steer` (the ``subagents`` tool) end records before they abort the
  runs, with ``suppressAnnounceReason`` ``killed`` / ``steer-restart``, so no announce follows.
- The plugins' ``subagent_ended`` hook hears of every record this process ends (completion,
  failure, timeout, kill; not a steer, whose child goes on), after the end is written.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.execution import EndWrite
from clawline.agents.lifecycle_hooks import ended_outcome, fire_subagent_ended
from clawline.agents.run import Run, RunOutcome
from clawline.channels.thread_bindings.planner import ThreadPlan
from clawline.collab.completion import Ending, end_record, ending_of, result_text
from clawline.collab.spawn_plan import ChildPlan, subagent_system_prompt
from clawline.collab.spawn_write import discard_child, write_child
from clawline.errors import ClawlineError, Conflict, Unavailable
from clawline.records.collab import SubagentRun
from clawline.records.session import SessionEntry
from clawline.types import JSON

if TYPE_CHECKING:
    from collections.abc import Mapping

    from clawline.agents.handoff import HandedRun
    from clawline.agents.run import SendAck
    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock
    from clawline.collab.announce import Announcer
    from clawline.config import AgentsConfig
    from clawline.plugins.manager import PluginManager
    from clawline.sessions.catalog import CatalogTransaction, SessionCatalog
    from clawline.store.base import Store, StoreTransaction
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab")

COMPLETION_RETRY_DELAYS_S = (0.5, 2.0, 5.0)
"""Waits between attempts to write a run's end when the store fails."""
ADOPT_BATCH = 100
"""Deferred orchestrators adopted per pass."""


def _stored_outcome(record: SubagentRun) -> RunOutcome:
    """The outcome a deferred record keeps (``deferred_outcome``) as the registry holds it."""
    stored = record.deferred_outcome or {}
    usage = stored.get("usage")
    ended_at = record.started_at or record.created_at
    return RunOutcome(
        run_id=record.run_id,
        session_key=record.child_session_key,
        status="done",
        accepted_at=record.created_at,
        started_at=record.started_at,
        ended_at=ended_at,
        text=str(stored.get("text") or ""),
        usage=usage if isinstance(usage, dict) else None,
    )


class StartFailed(Unavailable):
    """A spawned child's first run was refused (the gateway is shutting down, …); nothing of
    the spawn was written."""


class NotRunning(Conflict):
    """The run to steer has already ended."""


class SubagentRegistry:
    """Run records of spawned children (module docstring). ``config`` gives the requesters'
    agents' subagent settings; ``main_key`` the display form of a requester's key."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        tasks: TaskRegistry,
        runs: RunManager,
        announcer: Announcer,
        plugins: PluginManager,
        config: AgentsConfig,
        main_key: str,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._tasks = tasks
        self._runs = runs
        self._announcer = announcer
        self._plugins = plugins
        self._config = config
        self._main_key = main_key
        self._watched: set[str] = set()
        """Run ids of children this process started and whose end is not written yet."""
        runs.on_handoff(self._moved)
        runs.on_adopt(self._adopted)
        self._deferred: dict[str, tuple[str, RunOutcome]] = {}
        """Orchestrator session key -> (its record's run id, its latest turn's outcome) while
        its descendants are pending."""
        self._waited: set[str] = set()
        """Deferred orchestrators that have had pending descendants."""
        self._unstored: set[str] = set()
        """Deferred orchestrators whose latest outcome is not in the store yet (it is stored
        once they have to wait)."""
        self._ended_in_end: dict[str, tuple[tuple[SubagentRun | None, str | None], Ending]] = {}
        """Records :meth:`end_write` ended in their run's end transaction (written on the store
        worker, taken by :meth:`run_ended` once that transaction has committed)."""
        self._settling: set[asyncio.Task[None]] = set()
        """Deferred orchestrators being looked at again (this registry owns the tasks)."""

    @property
    def busy(self) -> bool:
        """Whether a deferred orchestrator is being settled right now."""
        return bool(self._settling)

    # --- spawning --------------------------------------------------------------------------

    async def create(
        self, plan: ChildPlan, *, max_children: int, thread: ThreadPlan | None = None
    ) -> SubagentRun:
        """Write the child, its record, its task (and its thread binding) in one transaction.
        Raises :class:`~clawline.collab.spawn_key.AlreadySpawned` (the plan's spawn key is
        recorded: nothing is written), :class:`ChildLimitReached`, ``Conflict`` (the thread's
        conversation was bound meanwhile) or another :class:`ClawlineError`."""
        return await self._workers.run(self._create_now, plan, max_children, thread)

    def _create_now(
        self, plan: ChildPlan, max_children: int, thread: ThreadPlan | None
    ) -> SubagentRun:
        with self._catalog.transaction() as work:
            return self._write_child(work, plan, max_children, thread)

    def _write_child(
        self,
        work: CatalogTransaction,
        plan: ChildPlan,
        max_children: int,
        thread: ThreadPlan | None,
    ) -> SubagentRun:
        _, record = write_child(
            work,
            store=self._store,
            tasks=self._tasks,
            clock=self._clock,
            requester=plan.requester,
            child_key=plan.child_key,
            changes=plan.entry_changes(),
            thread=thread,
            runtime="subagent",
            task=plan.task,
            run_id=plan.run_id,
            task_id=plan.task_id,
            label=plan.label,
            spawn_key=plan.spawn_key,
            max_children=max_children,
            record=lambda now: self._record(plan, now),
        )
        assert record is not None
        return record

    def _record(self, plan: ChildPlan, now: int) -> SubagentRun:
        return SubagentRun(
            run_id=plan.run_id,
            child_session_key=plan.child_key,
            requester_session_key=plan.requester,
            requester_display_key=keys.display_key(plan.requester, self._main_key),
            task=plan.task,
            created_at=now,
            started_at=now,
            cleanup=plan.cleanup,
            label=plan.label,
            model=plan.model,
            workspace_dir=plan.workspace_dir,
            run_timeout_seconds=plan.run_timeout_seconds,
            spawn_mode=plan.mode,
            expects_completion_message=plan.expects_completion_message,
            task_id=plan.task_id,
            spawn_key=plan.spawn_key,
        )

    async def spawn(
        self,
        plan: ChildPlan,
        *,
        max_children: int,
        thread: ThreadPlan | None,
        extra_system_prompt: str,
        also: Callable[[CatalogTransaction], None] | None = None,
    ) -> SendAck:
        """:meth:`create` and :meth:`start` in one transaction: the child, its record, its task
        (and its binding) are written with the child's first message, or nothing is; ``also``
        writes more in that transaction (the spawn's tool result), after the child. Raises
        what :meth:`create` raises, or :class:`StartFailed` when the run was refused."""
        refused: list[BaseException] = []

        def write(work: CatalogTransaction) -> None:
            try:
                self._write_child(work, plan, max_children, thread)
            except BaseException as error:
                refused.append(error)
                raise
            if also is not None:
                also(work)

        self._watched.add(plan.run_id)
        try:
            ack = await self._runs.send(
                session_key=plan.child_key,
                message=plan.message(),
                idempotency_key=plan.run_id,
                origin="agent",
                lane="subagent",
                extra_system_prompt=extra_system_prompt,
                timeout_ms=plan.timeout_ms,
                thinking=plan.thinking,
                place=True,
                prepare=write,
            )
        except ClawlineError as error:
            self._watched.discard(plan.run_id)
            if error in refused:
                raise
            raise StartFailed(error.message) from error
        except BaseException:
            self._watched.discard(plan.run_id)
            raise
        if ack.instance_id is not None:  # the instance it was handed to watches it
            self._watched.discard(plan.run_id)
        return ack

    async def start(self, plan: ChildPlan, *, extra_system_prompt: str) -> SendAck:
        """Send the child's first run; on failure delete what :meth:`create` wrote and
        re-raise."""
        self._watched.add(plan.run_id)
        try:
            ack = await self._runs.send(
                session_key=plan.child_key,
                message=plan.message(),
                idempotency_key=plan.run_id,
                origin="agent",
                lane="subagent",
                extra_system_prompt=extra_system_prompt,
                timeout_ms=plan.timeout_ms,
                thinking=plan.thinking,
                place=True,
            )
        except BaseException:
            self._watched.discard(plan.run_id)
            await self.discard(plan)
            raise
        if ack.instance_id is not None:  # the instance it was handed to watches it
            self._watched.discard(plan.run_id)
        return ack

    @staticmethod
    def _moved(tx: StoreTransaction, run: Run, target: str) -> bool:
        """In the transaction that hands ``run`` to instance ``target``: its active record (a
        child's first run) moves there too, and ``target`` watches the run."""
        record = tx.runs.get(run.run_id)
        if record is None or not record.active:
            return False
        tx.runs.update(replace(record, instance_id=target))
        return True

    def _adopted(self, handed: HandedRun) -> None:
        if handed.watch:
            self._watched.add(handed.run.run_id)

    async def discard(self, plan: ChildPlan) -> None:
        """Delete a provisional child with its record and task."""
        try:
            await self._workers.run(self._discard_now, plan)
        except Exception:
            log.exception("provisional child %s could not be deleted", plan.child_key)

    def _discard_now(self, plan: ChildPlan) -> SessionEntry | None:
        with self._catalog.transaction() as work:
            return discard_child(
                work,
                child_key=plan.child_key,
                run_id=plan.run_id,
                task_id=plan.task_id,
                now=self._clock.now_ms(),
            )

    # --- completion ------------------------------------------------------------------------

    def end_write(self, run: Run, outcome: RunOutcome) -> EndWrite | None:
        """The run manager's end writer: a watched child's run that ends with nothing of its
        own pending ends its record (its task's terminal status, its requester's inbox row) in
        the transaction that stores the run's end. Anything else — a child that may have to
        wait for its own children, a run cut off by the shutdown — is left to
        :meth:`run_ended`."""
        key = run.session_key
        if run.run_id not in self._watched or key in self._deferred or key in self._waited:
            return None
        if self._runs.closed and outcome.status == "killed":
            return None
        done = outcome.status == "done"
        if done and self._announcer.delivering_to(key):
            return None
        ending = ending_of(outcome.status, outcome.error)
        result = result_text(outcome.text)

        def write(work: CatalogTransaction) -> None:
            if done and work.tx.runs.has_pending(key):
                return  # its descendants are pending: run_ended defers it
            child = next((c.after for c in reversed(work.changes) if c.key == key), None)
            self._ended_in_end[run.run_id] = (
                self._end_in(work, run.run_id, ending, result, outcome.usage, None, child),
                ending,
            )

        return write

    def run_ended(self, run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        """The run-end hook: a watched child's end ends its record (or defers it), unless
        its end transaction did already (:meth:`end_write`)."""
        written = self._ended_in_end.pop(run.run_id, None)
        if written is not None and run.end_written:
            self._watched.discard(run.run_id)
            (ended, requester), ending = written
            return self._completed(run.run_id, ended, requester, ending)
        if run.run_id in self._watched:
            self._watched.discard(run.run_id)
            record_run_id = run.run_id
        elif run.session_key in self._deferred and not run.bypass_queue:
            # a later turn of a deferred orchestrator (a completion turn) is its new result;
            # an agent-to-agent step beside its turns (bypass_queue) is not
            record_run_id = self._deferred[run.session_key][0]
        else:
            return None
        if self._runs.closed and outcome.status == "killed":
            return None  # cut off by the shutdown: start-up recovery ends it as lost
        if outcome.status != "done":
            self._deferred.pop(run.session_key, None)
            self._waited.discard(run.session_key)
            self._unstored.discard(run.session_key)
            return self._end_with(record_run_id, outcome)
        self._deferred[run.session_key] = (record_run_id, outcome)
        self._unstored.add(run.session_key)
        return self._settle(run.session_key)

    async def _store_deferral(self, record_run_id: str, outcome: RunOutcome) -> None:
        try:
            await self._workers.run(self._store_deferral_now, record_run_id, outcome)
        except ClawlineError as error:
            log.warning("deferral of %s not stored: %s", record_run_id, error)

    def _store_deferral_now(self, record_run_id: str, outcome: RunOutcome) -> None:
        with self._store.transaction() as tx:
            record = tx.runs.get(record_run_id)
            if record is None or not record.active:
                return
            deferred: dict[str, JSON] = {"status": outcome.status, "text": outcome.text}
            if outcome.usage is not None:
                deferred["usage"] = dict(outcome.usage)
            tx.runs.update(replace(record, deferred_outcome=deferred))

    async def adopt_deferred(self) -> int:
        """Answer for the deferred orchestrators no running instance answers for (their
        instance crashed or stopped): wait for their descendants here, then end their records
        with their latest stored turn. How many were adopted."""
        adopted = await self._workers.run(self._adopt_now)
        for record in adopted:
            key = record.child_session_key
            self._deferred.setdefault(key, (record.run_id, _stored_outcome(record)))
            self._waited.add(key)
        if adopted:
            log.info("%d deferred orchestrator(s) adopted", len(adopted))
        for record in adopted:
            await self._settle(record.child_session_key)
        return len(adopted)

    def _adopt_now(self) -> list[SubagentRun]:
        candidates = self._store.runs.orphaned_deferred(ADOPT_BATCH)
        if not candidates:
            return []
        with self._store.transaction() as tx:
            return [record for record in candidates if tx.runs.adopt(record.run_id)]

    def _end_with(self, record_run_id: str, outcome: RunOutcome) -> Awaitable[None]:
        return self.complete(
            record_run_id,
            ending_of(outcome.status, outcome.error),
            result=result_text(outcome.text),
            usage=outcome.usage,
        )

    async def _settle(self, child_key: str) -> None:
        """End a deferred orchestrator's record once none of its descendants is pending."""
        if child_key not in self._deferred:
            return
        try:
            pending = await self._workers.run(self._pending_now, child_key)
        except ClawlineError as error:
            log.warning("pending children of %s not read: %s", child_key, error)
            return  # the next turn end or child end looks again
        deferred = self._deferred.get(child_key)
        if deferred is None:
            return
        if pending or self._announcer.delivering_to(child_key):
            self._waited.add(child_key)
            if child_key in self._unstored:  # it waits: a crash must not lose the deferral
                self._unstored.discard(child_key)
                await self._store_deferral(*deferred)
            return
        if child_key in self._waited and self._runs.has_active_run(child_key):
            return  # a turn on delivered completions is under way; its end looks again
        del self._deferred[child_key]
        self._waited.discard(child_key)
        self._unstored.discard(child_key)
        await self._end_with(*deferred)

    def delivery_done(self, requester: str) -> None:
        """The dispatcher's delivery-done callback: a deferred orchestrator looks again."""
        if requester in self._deferred and not self._runs.has_active_run(requester):
            task = asyncio.ensure_future(self._settle(requester))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    def _pending_now(self, child_key: str) -> bool:
        store = self._store
        return store.runs.count_active(child_key) > 0 or bool(store.inbox.pending_for(child_key))

    def deferred(self) -> set[str]:
        """Orchestrators whose announce waits for their descendants (diagnostics, tests)."""
        return set(self._deferred)

    async def complete(
        self,
        run_id: str,
        ending: Ending,
        *,
        result: str,
        usage: Mapping[str, JSON] | None = None,
        runtime_ms: int | None = None,
    ) -> None:
        """End the record of ``run_id`` (if still active), then tell the dispatcher."""
        for attempt, delay in enumerate((0.0, *COMPLETION_RETRY_DELAYS_S)):
            if delay:
                await self._clock.sleep(delay)
            try:
                ended, requester = await self._workers.run(
                    self._complete_now, run_id, ending, result, usage, runtime_ms
                )
            except ClawlineError as error:
                log.warning("end of run %s not written (try %d): %s", run_id, attempt, error)
                continue
            await self._completed(run_id, ended, requester, ending)
            return
        log.error("end of subagent run %s was never written; recovery will mark it lost", run_id)

    async def _completed(
        self, run_id: str, ended: SubagentRun | None, requester: str | None, ending: Ending
    ) -> None:
        """After a record's end committed: wake the dispatcher, tell the plugins, and let a
        deferred requester look again."""
        if requester is not None:
            self._announcer.kick(requester)
        if ended is not None:
            await fire_subagent_ended(
                ended, ended_outcome(ending.task_status), ending.error, plugins=self._plugins
            )
            parent: str | None = ended.requester_session_key
        elif self._deferred:  # ended elsewhere (a kill): whose child was it?
            parent = await self._workers.run(self._requester_of, run_id)
        else:
            parent = None
        if parent is not None and parent in self._deferred:
            await self._settle(parent)

    def _complete_now(
        self,
        run_id: str,
        ending: Ending,
        result: str,
        usage: Mapping[str, JSON] | None,
        runtime_ms: int | None,
    ) -> tuple[SubagentRun | None, str | None]:
        with self._catalog.transaction() as work:
            return self._end_in(work, run_id, ending, result, usage, runtime_ms)

    def _end_in(
        self,
        work: CatalogTransaction,
        run_id: str,
        ending: Ending,
        result: str,
        usage: Mapping[str, JSON] | None,
        runtime_ms: int | None,
        child: SessionEntry | None = None,
    ) -> tuple[SubagentRun | None, str | None]:
        """The record ended (``None`` when it was not active) and the requester to kick
        (``child``: the child's entry as ``work`` wrote it, if it did)."""
        record = work.tx.runs.get(run_id)
        if record is None or not record.active:
            return None, None
        now = self._clock.now_ms()
        if runtime_ms is None:
            runtime_ms = now - (record.started_at or record.created_at)
        item = end_record(
            work,
            record,
            ending,
            store=self._store,
            tasks=self._tasks,
            config=self._config,
            result=result,
            usage=usage,
            runtime_ms=runtime_ms,
            now=now,
            child=child,
        )
        return record, None if item is None else item.requester_session_key

    def _requester_of(self, run_id: str) -> str | None:
        record = self._store.runs.get(run_id)
        return None if record is None else record.requester_session_key

    # --- control (the subagents tool) ------------------------------------------------------

    async def kill(self, records: Sequence[SubagentRun]) -> list[SubagentRun]:
        """End the runs of ``records``' children and of all their descendants as killed
        (no announce, tasks cancelled), then abort those sessions' runs. Sessions stay."""
        cascade = await self._workers.run(self._cascade_now, [r.child_session_key for r in records])
        killed = await self._workers.run(self._kill_now, cascade)
        await asyncio.gather(*(self._runs.abort(key) for key in cascade))
        for record in killed:
            await fire_subagent_ended(record, "killed", "killed", plugins=self._plugins)
        return killed

    def _cascade_now(self, children: Sequence[str]) -> list[str]:
        store = self._store
        found: dict[str, None] = {}
        for child in children:
            found[child] = None
            entry = store.get(child)
            if entry is not None:
                found.update(dict.fromkeys(d.key for d in store.descendants(entry.lineage_path)))
        return list(found)

    def _kill_now(self, session_keys: Sequence[str]) -> list[SubagentRun]:
        candidates = [
            run for key in session_keys for run in self._store.runs.by_child(key) if run.active
        ]
        killed: list[SubagentRun] = []
        with self._catalog.transaction() as work:
            tx = work.tx
            now = self._clock.now_ms()
            for candidate in candidates:
                current = tx.runs.get(candidate.run_id)
                if current is None or not current.active:
                    continue
                ended = replace(
                    current,
                    ended_at=now,
                    outcome={"status": "error", "error": "killed"},
                    ended_reason="subagent-killed",
                    suppress_announce_reason="killed",
                )
                tx.runs.update(ended)
                task = tx.tasks.get(current.task_id) if current.task_id else None
                if task is not None:
                    if not task.terminal:
                        self._tasks.cancel(task.task_id, reason="killed", tx=tx)
                    self._tasks.set_delivery(task.task_id, "not_applicable", tx=tx)
                killed.append(ended)
        return killed

    async def steer(self, record: SubagentRun, message: str) -> SubagentRun:
        """Replace an active run with a new one on the same child that starts with
        ``message``; the interrupted run ends ``steer-restart`` (no announce)."""
        new_id = str(uuid.uuid4())
        steered = await self._workers.run(self._steer_now, record.run_id, new_id, message)
        self._watched.add(new_id)
        await self._runs.abort(record.child_session_key, record.run_id)
        try:
            prompt = await self._workers.run(self._prompt_now, steered)
            await self._runs.send(
                session_key=steered.child_session_key,
                message=message,
                idempotency_key=new_id,
                origin="agent",
                lane="subagent",
                extra_system_prompt=prompt,
                timeout_ms=(steered.run_timeout_seconds or 0) * 1000,
            )
        except ClawlineError as error:
            self._watched.discard(new_id)
            await self.complete(new_id, ending_of("failed", f"steer failed: {error}"), result="")
        return steered

    def _steer_now(self, old_id: str, new_id: str, message: str) -> SubagentRun:
        with self._catalog.transaction() as work:
            tx = work.tx
            current = tx.runs.get(old_id)
            if current is None or not current.active:
                raise NotRunning(f"subagent run {old_id} is not running")
            now = self._clock.now_ms()
            tx.runs.update(
                replace(
                    current,
                    ended_at=now,
                    outcome={"status": "error", "error": "steered"},
                    ended_reason="subagent-killed",
                    suppress_announce_reason="steer-restart",
                )
            )
            # Strictly newer than the run it replaces, so "the child's newest run" (ordered by
            # createdAt, then run id) is the new one even within one millisecond.
            created = max(now, current.created_at + 1)
            # The spawn's key stays with the spawn's own record: a redo answers its result.
            # The new run is watched here: the record is this instance's (stamped on insert).
            steered = replace(
                current,
                run_id=new_id,
                created_at=created,
                started_at=created,
                spawn_key=None,
                instance_id=None,
            )
            tx.runs.insert(steered)
            task = tx.tasks.get(current.task_id) if current.task_id else None
            if task is not None and not task.terminal:
                self._tasks.progress(task.task_id, f"steered: {message[:200]}", tx=tx)
                moved = tx.tasks.get(task.task_id)
                if moved is not None:
                    tx.tasks.update(replace(moved, run_id=new_id))
        return steered

    def _prompt_now(self, record: SubagentRun) -> str:
        """The subagent system prompt of a child, from its entry."""
        entry = self._store.get(record.child_session_key)
        requester_agent = self._config.resolve_agent(keys.agent_id_of(record.requester_session_key))
        depth = (entry.spawn_depth if entry is not None else None) or 1
        return subagent_system_prompt(
            requester=record.requester_session_key,
            child_key=record.child_session_key,
            label=record.label,
            depth=depth,
            max_depth=requester_agent.subagents.max_spawn_depth,
        )
