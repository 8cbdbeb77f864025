"""The run manager: accepts messages for sessions and runs them, one session at a time.

- :meth:`RunManager.send` writes the user message to the transcript (and publishes it) before it
  returns, then queues the run. Runs of one session execute one after another (queue mode
  ``followup``); different sessions run concurrently.
- Idempotency: a repeated key answers ``in_flight`` while its run is pending, queued or running
  and replays the cached terminal response for :data:`IDEMPOTENCY_TTL_MS` after it ended.
  ``run_id`` is the idempotency key; the ``agent`` method dedupes under ``agent:<key>``. The key
  is stored with the run's user message and its outcome with the run's end
  (:mod:`clawline.agents.run_keys`), so repeats are answered across restarts too.
- ``send(..., bypass_queue=True)`` puts the run on the session's nested lane: it starts without
  waiting for the session's other runs (agent-to-agent steps on a requester that is mid-turn;
  see :mod:`clawline.agents.lanes`).
- ``send(..., existing_message_seq=seq)`` runs a turn for a user message that is already in
  the transcript (written by the caller in a transaction of its own, e.g. delivered completion
  events): nothing is appended or published, the run reads that message as its own.
- Runs of a lane with a limit wait for a slot (``subagent``: ``maxConcurrent``; see
  :mod:`clawline.agents.lanes`).
- :meth:`on_run_end` registers a hook called once per run when its end is written; a hook may
  return a coroutine, which runs as a task that :meth:`shutdown` waits for.
- :meth:`on_end_write` registers a writer whose write joins the transaction that stores each
  run's reply and end status (a sub-agent's record end, task status and inbox row).
- :meth:`on_first_run` registers a coroutine function awaited when the first run of a session
  (new, or reset since) starts, before its runner (plugins' ``session_start``).
- :meth:`abort` ends queued and running runs (``killed``); :meth:`shutdown` cancels the
  background tasks started with :meth:`spawn_background`, aborts everything and waits until
  every run's end is written (and its end hooks have finished).
- :attr:`runner` produces replies (:class:`~clawline.agents.runner.Runner`); the runtime sets
  the :class:`~clawline.agents.turn.AgentRunner` (model providers and tools; the ``offline``
  model unless configured otherwise) once the tools it calls exist. :meth:`route` serves
  sessions whose key matches a predicate with another runner (``agent:<id>:acp:<uuid>``
  children: the acp spawn runtime). :attr:`config` is the parsed agent configuration,
  :attr:`tools` the tool registry and :attr:`providers` the model provider registry — all three
  made by the runtime and given to the manager.
- :meth:`on_shutdown` registers a coroutine function that :meth:`shutdown` awaits once every
  run has ended (e.g. stopping external agent processes).

- On a store several gateways share, the accepting transaction also decides which instance
  runs the run (:mod:`clawline.agents.handoff`): one handed elsewhere stays in flight here
  until it ended there; :meth:`take_handoffs` queues the runs handed to this one, and stops
  the runs other instances aborted (:meth:`abort` reaches the runs of every instance).

Runs live in memory: they survive neither a crash nor a restart (a graceful shutdown ends them
as ``killed`` with their status written). Their idempotency keys do: after a crash, recovery
ends the keys of the lost runs (a repeat replays ``lost: gateway restarted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from clawline import keys
from clawline.agents.execution import EndWriter, RunExecution
from clawline.agents.handoff import (
    HANDOFF_BATCH,
    REMOTE_POLL_S,
    REMOTE_STOP_WAIT_S,
    HandedRun,
    RunPlacement,
    handoff_request,
    run_from_handoff,
)
from clawline.agents.idempotency import (
    IdempotencyCache,
    dedupe_key,
    replayable,
)
from clawline.agents.inject import inject_message
from clawline.agents.lanes import SessionLanes
from clawline.agents.messages import (
    MESSAGE_EVENT,
    attachment_blocks,
    check_idempotency_key,
    check_message,
    user_message,
)
from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.run import (
    Origin,
    Run,
    RunOutcome,
    RunsClosed,
    RunState,
    SendAck,
    StopRequest,
)
from clawline.agents.run_keys import RunKeys, stored_outcome
from clawline.agents.runner import Runner
from clawline.agents.tools.registry import ToolRegistry
from clawline.clock import wait_for
from clawline.config import AgentsConfig, AgentsSection, effective_timeout_ms
from clawline.errors import InvalidField
from clawline.records.idempotency import IdempotencyRecord
from clawline.records.instance import RunHandoff, RunStop
from clawline.records.outbox import OutboxKind, OutboxTarget
from clawline.records.transcript import TranscriptEvent
from clawline.sessions.catalog import Cause, Change
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.events import DomainEvents
    from clawline.sessions.catalog import CatalogTransaction, SessionCatalog
    from clawline.store.base import Store, StoreTransaction
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.agents")

RunEndHook: TypeAlias = Callable[[Run, RunOutcome], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What a run's accepting transaction wrote: the session id, the user message (``None``
    when it was already there), and the instance the run was handed to (``None``: here)."""

    session_id: str
    event: TranscriptEvent | None
    target: str | None
    started: Change | None = None
    """The entry written ``running`` with the run's start, when its start was claimed."""


RunnerRoute: TypeAlias = tuple[Callable[[str], bool], Callable[[], Runner]]


class RunManager:
    """Runs of every session (module docstring). ``runner`` may be set after construction
    (the runtime sets the default one once the tools it calls exist); a run that starts before
    any runner is set fails."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        events: DomainEvents,
        settings: AgentsSection,
        config: AgentsConfig,
        providers: ProviderRegistry,
        tools: ToolRegistry,
        runner: Runner | None = None,
        placement: RunPlacement | None = None,
    ) -> None:
        self._catalog = catalog
        self._workers = workers
        self._clock = clock
        self.settings = settings
        self.config = config
        self.providers = providers
        self.tools = tools
        self._runner = runner
        self._cache = IdempotencyCache(clock)
        self._keys = RunKeys(store, clock, self._cache.ttl_ms)
        self._active: dict[str, Run] = {}
        """Pending, queued and running runs by dedupe key."""
        self._waiters: dict[str, list[asyncio.Future[RunOutcome]]] = {}
        self._tasks: set[asyncio.Task[SendAck]] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._end_hooks: list[RunEndHook] = []
        self._first_run_hooks: list[Callable[[Run], Awaitable[None]]] = []
        self._routes: list[RunnerRoute] = []
        self._shutdown_hooks: list[Callable[[], Awaitable[None]]] = []
        self._hook_tasks: set[asyncio.Future[None]] = set()
        self._closed = False
        self._placement = placement
        """Where runs run on a store several gateways share (:mod:`clawline.agents.handoff`);
        ``None``: always here."""
        self._handoff_hooks: list[Callable[[StoreTransaction, Run, str], bool]] = []
        self._adopt_hooks: list[Callable[[HandedRun], None]] = []
        self._end_writers: list[EndWriter] = []
        self._execution = RunExecution(
            catalog=catalog,
            store=store,
            workers=workers,
            clock=clock,
            events=events,
            runner=lambda run: self.runner_for(run.session_key),
            on_ended=self._ended,
            concurrent=lambda run: self._lanes.running_besides(run),
            on_first_run=self._first_run,
            keys=self._keys,
            end_writers=self._end_writers,
        )
        limits = {"subagent": config.defaults.subagents.max_concurrent}
        self._lanes = SessionLanes(self._execution.execute, self._execution.fail, limits)

    @property
    def runner(self) -> Runner:
        """The runner of the sessions no :meth:`route` claims."""
        if self._runner is None:
            raise RuntimeError("the run manager has no runner")
        return self._runner

    @runner.setter
    def runner(self, runner: Runner) -> None:
        self._runner = runner

    # --- queries -------------------------------------------------------------------------

    def has_active_run(self, session_key: str) -> bool:
        """Whether the session has a queued or running run. Call it on the loop; work on a
        store worker is handed a :meth:`busy_sessions` snapshot instead."""
        return self._lanes.busy(session_key)

    @property
    def clock(self) -> Clock:
        """The clock the runs' timers sleep on (run timeouts, waits for an outcome)."""
        return self._clock

    @property
    def busy(self) -> bool:
        """Whether anything is under way: a run accepted, queued or running, a run-end hook, a
        background task (:meth:`spawn_background`)."""
        return bool(self.active_runs() or self._tasks or self._hook_tasks or self._background)

    def busy_sessions(self) -> frozenset[str]:
        """The sessions that have a queued or running run, now: the snapshot to hand to work
        on a store worker, which must not read the lanes while the loop changes them."""
        return self._lanes.busy_sessions()

    @property
    def closed(self) -> bool:
        """Shutting down: no new runs are accepted."""
        return self._closed

    def active_runs(self, session_key: str | None = None) -> list[Run]:
        return [
            run
            for run in list(self._active.values())
            if run.active and (session_key is None or run.session_key == session_key)
        ]

    def route(self, matches: Callable[[str], bool], runner: Callable[[], Runner]) -> None:
        """Serve runs of sessions whose canonical key ``matches`` with ``runner()`` (looked up
        when each run starts) instead of :attr:`runner`; the first matching route wins."""
        self._routes.append((matches, runner))

    def runner_for(self, session_key: str) -> Runner:
        for matches, runner in self._routes:
            if matches(session_key):
                return runner()
        return self.runner

    # --- send ----------------------------------------------------------------------------

    async def send(
        self,
        *,
        session_key: str,
        message: str,
        idempotency_key: str,
        origin: Origin = "chat",
        timeout_ms: int | None = None,
        extra_system_prompt: str | None = None,
        lane: str | None = None,
        deliver: bool = False,
        delivery: OutboxTarget | None = None,
        delivery_kind: OutboxKind = "reply",
        attachments: Sequence[Mapping[str, object]] | None = None,
        thinking: str | None = None,
        bypass_queue: bool = False,
        existing_message_seq: int | None = None,
        place: bool = False,
        prepare: Callable[[CatalogTransaction], None] | None = None,
    ) -> SendAck:
        """Accept a message for a session; see the module docstring. ``bypass_queue`` runs it
        on the session's nested lane, beside (not behind) the session's other runs.
        ``place``: a spawned child's first run, which may run on the least loaded instance of
        a shared store (:mod:`clawline.agents.handoff`).
        ``existing_message_seq``: ``message`` is already the transcript's message at that seq
        (the session must exist); it is neither appended nor published again.
        ``prepare(work)`` writes first in the transaction that accepts the run (a spawn's
        child, record and task: the child is created and started together or not at all); what
        it raises is raised here, with nothing written."""
        if self._closed:
            raise RunsClosed("the gateway is shutting down; no new runs are accepted")
        key = self._catalog.canonical(session_key)
        blocks = attachment_blocks(attachments)
        text = check_message(message, has_attachments=bool(blocks))
        check_idempotency_key(idempotency_key)
        if timeout_ms is not None and (
            isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms < 0
        ):
            raise InvalidField("invalid timeoutMs (use an integer >= 0)")
        dedupe = dedupe_key(origin, idempotency_key)
        active = self._active.get(dedupe)
        if active is not None:
            return self._ack(active, "in_flight")
        cached = self._cache.get(dedupe)
        if cached is not None:
            done = asyncio.get_running_loop().create_future()
            done.set_result(cached)
            return self._replay(cached, done)
        run = Run(
            run_id=idempotency_key,
            dedupe_key=dedupe,
            session_key=key,
            message=text,
            origin=origin,
            timeout_ms=effective_timeout_ms(timeout_ms, self._default_timeout_ms(key)),
            accepted_at=self._clock.now_ms(),
            attachments=blocks,
            extra_system_prompt=extra_system_prompt,
            lane=lane,
            deliver=deliver,
            delivery=delivery,
            delivery_kind=delivery_kind,
            thinking=thinking,
            bypass_queue=bypass_queue,
            message_seq=existing_message_seq,
            place=place,
        )
        self._active[dedupe] = run
        # Shielded: once the key is reserved, a cancelled caller must not leave half a send.
        accepting = self._spawn(self._accept(run, prepare))
        try:
            ack = await asyncio.shield(accepting)
        except asyncio.CancelledError:
            accepting.add_done_callback(lambda _: run.accepted.set())
            raise
        # The run starts only once the caller has resumed, so that a caller answering a
        # request without awaiting (chat.send, agent) answers before the run's first event.
        run.accepted.set()
        return ack

    def _default_timeout_ms(self, key: str) -> int:
        """The session's agent's ``timeoutSeconds`` (``[agents] timeout_seconds`` unless
        ``agents.defaults``/``agents.list`` say otherwise)."""
        return self.config.resolve_agent(keys.agent_id_of(key)).timeout_ms

    @staticmethod
    def _replay(outcome: RunOutcome, done: asyncio.Future[RunOutcome]) -> SendAck:
        return SendAck(
            run_id=outcome.run_id,
            status=outcome.reply_status,
            cached=outcome.response(),
            message_seq=None,
            accepted_at=outcome.accepted_at,
            session_key=outcome.session_key,
            done=done,
        )

    def _ack(self, run: Run, status: str) -> SendAck:
        return SendAck(
            run_id=run.run_id,
            status=status,
            cached=None,
            message_seq=run.message_seq if status == "started" else None,
            accepted_at=run.accepted_at,
            session_key=run.session_key,
            done=run.done,
        )

    def _prepare_now(
        self,
        run: Run,
        data: JSONObject,
        prepare: Callable[[CatalogTransaction], None] | None = None,
        claimed: bool = False,
    ) -> _Prepared | IdempotencyRecord:
        """On the store thread, in one transaction: claim the run's idempotency key, create
        the entry when missing, decide where the run runs, record its owner, append the user
        message (and the handoff, when it runs elsewhere) and — for a run whose start the lanes
        reserved (``claimed``) — write the session ``running``. A key the store already holds
        is returned instead (nothing written)."""
        key = run.session_key
        with self._catalog.transaction() as work:
            tx = work.tx
            if prepare is not None:
                prepare(work)
            held = self._keys.claim(tx, run)
            if held is not None:
                return held
            entry = tx.get(key)
            if entry is None:
                entry = work.patch(key, {}, cause=Cause("create")).after
                assert entry is not None
            target = self._target(tx, run)
            if self._placement is not None:
                tx.run_owners.add(run.run_id, key, run.accepted_at, target)
            start = claimed and target is None
            # a start written below touches the row once for both
            event = work.append(key, MESSAGE_EVENT, data, run_id=run.run_id, touch=not start)
            if target is not None:
                run.message_seq = event.seq
                self._hand_off(tx, run, target, key_stored=True)
            started: Change | None = None
            if start:
                now = self._clock.now_ms()
                changes = {"status": "running", "startedAt": now, "endedAt": None}
                started = work.patch(key, {**changes, "runtimeMs": None}, create=False)
        return _Prepared(entry.session_id, event, target, started)

    def _existing_now(self, run: Run) -> _Prepared:
        """On the store thread: for a run whose message is already written, the session id,
        where the run runs, and its owner (and handoff) recorded."""
        key = run.session_key
        session_id = self._catalog.require(key).session_id
        if self._placement is None:
            return _Prepared(session_id, None, None)
        with self._catalog.transaction() as work:
            tx = work.tx
            tx.get(key)  # the session's row, locked: see clawline.agents.handoff
            target = self._target(tx, run)
            tx.run_owners.add(run.run_id, key, run.accepted_at, target)
            if target is not None:
                self._hand_off(tx, run, target, key_stored=False)
        return _Prepared(session_id, None, target)

    def _target(self, tx: StoreTransaction, run: Run) -> str | None:
        if self._placement is None or run.bypass_queue:
            return None  # a nested-lane step runs beside its session's turn, where it is asked
        return self._placement.target(tx, run, self._clock.now_ms())

    def _hand_off(self, tx: StoreTransaction, run: Run, target: str, *, key_stored: bool) -> None:
        watch = False
        for hook in self._handoff_hooks:
            watch = hook(tx, run, target) or watch
        request = handoff_request(run, key_stored=key_stored, watch=watch)
        tx.handoffs.add(run.run_id, run.session_key, target, self._clock.now_ms(), request)

    async def _accept(
        self, run: Run, prepare: Callable[[CatalogTransaction], None] | None
    ) -> SendAck:
        data = user_message(run.message, run.attachments)
        data["runId"] = run.run_id
        # A run that can start at once is written as started by the transaction that accepts
        # it (one transaction, not two); the lanes hold its place meanwhile.
        claimed = (
            run.message_seq is None
            and self._placement is None
            and not run.bypass_queue
            and not self._lanes.running_besides(run)
            and await self._lanes.claim(run)
        )
        prepared: _Prepared | IdempotencyRecord
        try:
            if run.message_seq is None:
                prepared = await self._workers.run_short(
                    self._prepare_now, run, data, prepare, claimed
                )
            else:
                prepared = await self._workers.run(self._existing_now, run)
        except BaseException as error:
            self._lanes.unclaim(run)
            self._active.pop(run.dedupe_key, None)
            run.state = RunState.ENDED
            self._execution.fail(run, str(error) or type(error).__name__)
            raise
        if isinstance(prepared, IdempotencyRecord):
            self._lanes.unclaim(run)
            return self._held(run, prepared)
        run.session_id = prepared.session_id
        if prepared.event is not None:
            run.message_seq = prepared.event.seq
        if prepared.target is not None:
            self._lanes.unclaim(run)
            return self._watch_remote(run, prepared.target, keyed=prepared.event is not None)
        run.key_pending = prepared.event is not None
        # Owner rows matter only where other instances may recover what is left: on an
        # exclusive store (SQLite) the next holder of its lock ends everything anyway.
        run.owned = self._placement is not None
        started = prepared.started
        if started is not None and started.after is not None:
            run.start_written = started.after
            run.first_run = started.before is not None and started.before.started_at is None
            if prepared.event is not None and prepared.event.seq == 1:
                run.opening = prepared.event
            run.started_at = started.after.started_at
            if run.stop is None and self._closed:
                run.request_stop(StopRequest.ABORT)
            self._lanes.enqueue(run)  # it ends through its lane: its end status is written
            return self._ack(run, "started")
        self._lanes.unclaim(run)
        if run.stop is None and not self._closed:
            self._lanes.enqueue(run)
        if run.state is RunState.PENDING:
            self._execution.end_unstarted(run)
        return self._ack(run, "started")

    # --- runs on other instances ---------------------------------------------------------

    def on_handoff(self, hook: Callable[[StoreTransaction, Run, str], bool]) -> None:
        """Call ``hook(tx, run, target)`` in the transaction that hands ``run`` to another
        instance (a sub-agent record moves its owner with its run); a hook answering ``True``
        asks the target to watch the run (:attr:`HandedRun.watch`)."""
        self._handoff_hooks.append(hook)

    def on_adopt(self, hook: Callable[[HandedRun], None]) -> None:
        """Call ``hook(handed)`` when a run handed to this instance is about to be queued
        here."""
        self._adopt_hooks.append(hook)

    def _watch_remote(self, run: Run, target: str, *, keyed: bool) -> SendAck:
        """``run`` runs on ``target``: keep it as in flight here until it has ended there
        (``keyed``: its idempotency key is stored, with the outcome once it ended)."""
        run.state = RunState.QUEUED
        self.spawn_background(self._await_remote(run, keyed), name=f"remote run {run.run_id}")
        return replace(self._ack(run, "started"), instance_id=target)

    async def _await_remote(self, run: Run, keyed: bool) -> None:
        try:
            for delay in itertools.chain(REMOTE_POLL_S, itertools.repeat(REMOTE_POLL_S[-1])):
                await self._clock.sleep(delay)
                outcome = await self._workers.run(self._remote_end_now, run, keyed)
                if outcome is not None:
                    self._remote_ended(run, outcome)
                    return
        finally:
            if self._active.get(run.dedupe_key) is run:
                del self._active[run.dedupe_key]

    def _remote_end_now(self, run: Run, keyed: bool) -> RunOutcome | None:
        store = self._catalog.store
        if store.run_owners.answered_runs([run.run_id]):
            return None
        found = self._keys.find_now(run.run_id) if keyed else None
        if found is not None:
            return found
        return RunOutcome(
            run_id=run.run_id,
            session_key=run.session_key,
            status="done",
            accepted_at=run.accepted_at,
            started_at=None,
            ended_at=self._clock.now_ms(),
            stop_reason="stop",
        )

    def _remote_ended(self, run: Run, outcome: RunOutcome) -> None:
        run.state = RunState.ENDED
        if replayable(outcome):
            self._cache.put(run.dedupe_key, outcome)
        self._resolve(run, outcome)

    async def take_handoffs(self) -> int:
        """Claim the runs other instances handed to this one and queue them here; how many
        (:mod:`clawline.agents.handoff`)."""
        if self._closed or self._placement is None:
            return 0
        claimed, stops = await self._workers.run(self._claim_now)
        handed = [run_from_handoff(handoff, session_id) for handoff, session_id in claimed]
        for item in handed:
            run = item.run
            self._active[run.dedupe_key] = run
            for hook in self._adopt_hooks:
                hook(item)
            run.accepted.set()
            self._lanes.enqueue(run)
        for stop in stops:  # after the handoffs: an abort may be for a run handed with it
            self.spawn_background(
                self._stopped_for(stop), name=f"abort from another instance {stop.session_key}"
            )
        return len(handed)

    async def _stopped_for(self, stop: RunStop) -> None:
        await self._abort_here(stop.session_key, stop.run_id)

    def _claim_now(self) -> tuple[list[tuple[RunHandoff, str]], list[RunStop]]:
        assert self._placement is not None
        here = self._placement.instance_id
        handed: list[tuple[RunHandoff, str]] = []
        with self._catalog.transaction() as work:
            for handoff in work.tx.handoffs.claim(here, HANDOFF_BATCH):
                entry = work.tx.get(handoff.session_key)
                if entry is None:  # deleted meanwhile: nothing to run
                    work.tx.run_owners.remove([handoff.run_id])
                    continue
                handed.append((handoff, entry.session_id))
            stops = work.tx.run_stops.claim(here, HANDOFF_BATCH)
        return handed, stops

    def _held(self, run: Run, record: IdempotencyRecord) -> SendAck:
        """The store already holds the run's key (a previous process's run, or one the cache
        dropped): answer with that run instead; ``run`` never starts."""
        run.state = RunState.ENDED
        if self._active.get(run.dedupe_key) is run:
            del self._active[run.dedupe_key]
        outcome = stored_outcome(record)
        if outcome is None:
            # Live, yet not one of ours: another gateway's run, or one whose end could not be
            # written (recovery ends it at the next start). Its end is not heard of here.
            return SendAck(
                run_id=record.run_id,
                status="in_flight",
                cached=None,
                message_seq=None,
                accepted_at=record.accepted_at,
                session_key=record.session_key,
                done=run.done,
            )
        self._cache.put(run.dedupe_key, outcome, expires_at=record.expires_at)
        self._resolve(run, outcome)
        return self._replay(outcome, run.done)

    def _resolve(self, run: Run, outcome: RunOutcome) -> None:
        if not run.done.done():
            run.done.set_result(outcome)
        for waiter in self._waiters.pop(run.run_id, []):
            if not waiter.done():
                waiter.set_result(outcome)

    def _ended(self, run: Run, outcome: RunOutcome) -> None:
        """Called once per run when its end is written: free the session, cache, notify."""
        run.state = RunState.ENDED
        if self._active.get(run.dedupe_key) is run:
            del self._active[run.dedupe_key]
        if run.key_pending:  # ended without running, or its end could not be written
            run.key_pending = False
            self._settle_later(run, outcome)
        if replayable(outcome):
            self._cache.put(run.dedupe_key, outcome)
        self._resolve(run, outcome)
        hooks: list[asyncio.Future[None]] = []
        for hook in list(self._end_hooks):
            try:
                pending = hook(run, outcome)
            except Exception:
                log.exception("run end hook failed for %s", run.run_id)
                continue
            if pending is not None:
                task = asyncio.ensure_future(pending)
                self._hook_tasks.add(task)
                task.add_done_callback(self._hook_done)
                hooks.append(task)
        if run.owned:
            run.owned = False
            self._release_later(run, hooks)

    def _release_later(self, run: Run, hooks: Sequence[asyncio.Future[None]]) -> None:
        """Once the run's end hooks are done (its sub-agent record ended, its completion
        queued), remove its owner row: until then a crash leaves it to recovery."""

        async def release() -> None:
            if hooks:
                await asyncio.wait(hooks)
            try:
                await self._workers.run(self._release_now, run.run_id)
            except Exception as error:
                log.warning("run %s: owner not released: %s", run.run_id, error)

        task = asyncio.ensure_future(release())
        self._hook_tasks.add(task)
        task.add_done_callback(self._hook_tasks.discard)

    def _release_now(self, run_id: str) -> None:
        with self._catalog.store.transaction() as tx:
            tx.run_owners.remove([run_id])

    def _settle_later(self, run: Run, outcome: RunOutcome) -> None:
        """Store the outcome of the run's key in a task of its own (:meth:`shutdown` waits)."""

        async def settle() -> None:
            try:
                await self._workers.run(self._keys.settle_now, run, outcome)
            except Exception as error:
                log.warning("run %s: idempotency outcome not stored: %s", run.run_id, error)

        task = asyncio.ensure_future(settle())
        self._hook_tasks.add(task)
        task.add_done_callback(self._hook_tasks.discard)

    def on_first_run(self, hook: Callable[[Run], Awaitable[None]]) -> None:
        """Await ``hook(run)`` when a run starts on a session that has not run before (new,
        or reset since), before its runner; a failing hook is logged."""
        self._first_run_hooks.append(hook)

    async def _first_run(self, run: Run) -> None:
        for hook in list(self._first_run_hooks):
            try:
                await hook(run)
            except Exception:
                log.exception("first-run hook failed for %s", run.run_id)

    def on_run_end(self, hook: RunEndHook) -> None:
        """Call ``hook(run, outcome)`` once per run, on the loop, when its end is written (the
        session no longer counts the run as active). A returned awaitable runs as a task;
        :meth:`shutdown` waits for those tasks."""
        self._end_hooks.append(hook)

    def on_end_write(self, writer: EndWriter) -> None:
        """Ask ``writer(run, outcome)``, on the loop, as each run that ran ends: a write it
        returns joins the transaction that stores the run's reply and end status (a
        sub-agent's record end, task status and inbox row commit with its session's end). If
        that transaction fails, nothing of it is written and ``run.end_written`` stays
        false: the run-end hooks then know to write their part themselves."""
        self._end_writers.append(writer)

    def _hook_done(self, task: asyncio.Future[None]) -> None:
        self._hook_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("run end hook failed: %r", task.exception())

    def _spawn(self, coro: Coroutine[Any, Any, SendAck]) -> asyncio.Task[SendAck]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- abort, wait, shutdown -----------------------------------------------------------

    async def abort(self, session_key: str, run_id: str | None = None) -> list[str]:
        """Abort the session's run ``run_id``, else all its queued and running runs; return
        the ids aborted once their ends are written. On a shared store the runs other
        instances run are aborted too: a stop row for each (:meth:`take_handoffs` there picks
        it up), then this waits (at most :data:`REMOTE_STOP_WAIT_S`) until they ended."""
        key = self._catalog.canonical(session_key)
        elsewhere: list[str] = []
        if self._placement is not None:
            elsewhere = await self._workers.run(self._stop_elsewhere_now, key, run_id)
        aborted = await self._abort_here(key, run_id)
        if elsewhere:
            await self._ended_elsewhere(elsewhere)
        return aborted + [found for found in elsewhere if found not in aborted]

    async def _abort_here(self, key: str, run_id: str | None) -> list[str]:
        targets = [run for run in self.active_runs(key) if run_id is None or run.run_id == run_id]
        for run in targets:
            self._stop(run, StopRequest.ABORT)
        await self._settle(targets)
        return [run.run_id for run in targets]

    def _stop_elsewhere_now(self, key: str, run_id: str | None) -> list[str]:
        """Ask the other instances running the session's runs (``run_id`` only, when given)
        to stop them; their ids."""
        assert self._placement is not None
        here = self._placement.instance_id
        owners = [
            owner
            for owner in self._catalog.store.run_owners.of_session(key)
            if owner.instance_id != here and (run_id is None or owner.run_id == run_id)
        ]
        if owners:
            now = self._clock.now_ms()
            with self._catalog.store.transaction() as tx:
                for target in dict.fromkeys(owner.instance_id for owner in owners):
                    tx.run_stops.add(key, run_id, target, now)
        return [owner.run_id for owner in owners]

    async def _ended_elsewhere(self, run_ids: list[str]) -> None:
        waited = 0.0
        delays = itertools.chain(REMOTE_POLL_S, itertools.repeat(REMOTE_POLL_S[-1]))
        store = self._catalog.store
        while await self._workers.run(store.run_owners.answered_runs, run_ids):
            if waited >= REMOTE_STOP_WAIT_S:
                log.warning("runs %s did not end within %g s of their abort", run_ids, waited)
                return
            delay = next(delays)
            await self._clock.sleep(delay)
            waited += delay

    def _stop(self, run: Run, reason: StopRequest) -> None:
        run.request_stop(reason)
        # A run written as started ends through its lane, which writes its end status.
        if run.state is RunState.QUEUED and run.start_written is None and self._lanes.unqueue(run):
            self._execution.end_unstarted(run)

    @staticmethod
    async def _settle(runs: Sequence[Run]) -> None:
        if runs:
            await asyncio.wait([asyncio.shield(run.done) for run in runs])

    async def wait(self, run_id: str, timeout_ms: int) -> JSONObject:
        """``agent.wait``: ``{runId, status:"ok"|"error"|"timeout", startedAt?, endedAt?,
        error?}``. An unknown id is waited for like a future run (OpenClaw waits for its
        lifecycle events), so it answers ``timeout`` once ``timeout_ms`` has passed."""
        outcome = await self.wait_outcome(run_id, timeout_ms)
        if outcome is None:
            return {"runId": run_id, "status": "timeout"}
        return outcome.wait_result()

    async def wait_outcome(self, run_id: str, timeout_ms: int | None) -> RunOutcome | None:
        """The run's outcome once it ended; ``None`` when ``timeout_ms`` passes first."""
        cached = self._cache.by_run_id(run_id)
        active = next((run for run in self.active_runs() if run.run_id == run_id), None)
        if active is None and cached is None:
            cached = await self._workers.run(self._keys.find_now, run_id)
        if active is None and cached is not None:
            return cached
        waiter: asyncio.Future[RunOutcome] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(run_id, []).append(waiter)
        timeout = None if timeout_ms is None else timeout_ms / 1000
        try:
            return await wait_for(self._clock, waiter, timeout)
        except TimeoutError:
            return None
        finally:
            waiters = self._waiters.get(run_id)
            if waiters is not None:
                with contextlib.suppress(ValueError):
                    waiters.remove(waiter)
                if not waiters:
                    del self._waiters[run_id]

    def spawn_background(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run ``coro`` as a task the manager keeps track of (e.g. an agent-to-agent exchange
        that goes on after its tool call answered); :meth:`shutdown` cancels it."""
        task = asyncio.create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background_done)
        if self._closed:
            task.cancel()  # started by a run that is being shut down
        return task

    def background_tasks(self) -> list[asyncio.Task[None]]:
        """The background tasks still running."""
        return list(self._background)

    def _background_done(self, task: asyncio.Task[None]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background task %s failed: %r", task.get_name(), task.exception())

    async def shutdown(self) -> None:
        """Refuse new runs, cancel the background tasks, abort every run and wait until each
        one's end is written."""
        self._closed = True
        background = list(self._background)
        for task in background:
            task.cancel()
        if background:
            await asyncio.wait(background)
        runs = self.active_runs()
        for run in runs:
            self._stop(run, StopRequest.ABORT)
        await self._settle(runs)
        workers = self._lanes.workers()
        if workers:
            await asyncio.wait(workers)
        while self._hook_tasks:
            await asyncio.wait(list(self._hook_tasks))
        for hook in list(self._shutdown_hooks):
            try:
                await hook()
            except Exception:
                log.exception("shutdown hook failed")
        await self.providers.aclose()

    def on_shutdown(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Await ``hook()`` at the end of :meth:`shutdown`, after every run has ended."""
        self._shutdown_hooks.append(hook)

    # --- inject --------------------------------------------------------------------------

    async def inject(self, session_key: str, message: str, label: str | None = None) -> JSONObject:
        """``chat.inject``: see :func:`clawline.agents.inject.inject_message`."""
        return await inject_message(
            session_key, message, label, catalog=self._catalog, workers=self._workers
        )
