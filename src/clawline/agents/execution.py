"""Executing one run: the lifecycle around a runner (docs/gateway-chat.md).

1. entry ``status:"running"``, ``startedAt`` → :class:`~clawline.events.SessionChanged`
   ``{reason:"send", phase:"start"}`` → :class:`~clawline.events.RunStarted`;
2. the runner streams: :class:`~clawline.events.RunText` and :class:`~clawline.events.RunTool`
   (through its :class:`~clawline.agents.stream.RunStream`);
3. the assistant message is appended (:class:`~clawline.events.MessageAppended`) — on abort,
   timeout or failure only when some text was streamed;
4. :class:`~clawline.events.RunEnded` (status, the message, stop reason, usage, error);
5. entry ``status`` (``done``/``killed``/``timeout``/``failed``), ``endedAt``, ``runtimeMs``,
   ``abortedLastRun``, with the run's stored idempotency outcome in the same transaction →
   :class:`~clawline.events.SessionChanged` ``{phase:"end"|"error"}`` → the manager records the
   outcome (idempotency cache, ``agent.wait``, the ``agent`` method's second answer).

Store writes go through the store workers; domain events are published on the loop. The gateway
turns them into ``sessions.changed``, ``session.message``, ``agent``, ``chat`` and
``session.update`` frames (:mod:`clawline.gateway.projection`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

from clawline import keys
from clawline.agents.conversation import convert
from clawline.agents.messages import MESSAGE_EVENT, assistant_message
from clawline.agents.providers.base import ModelMessage
from clawline.agents.recent_history import HistoryMessage, RecentHistory
from clawline.agents.run import Run, RunOutcome, RunState, StopRequest, terminal_status
from clawline.agents.run_keys import RunKeys
from clawline.agents.runner import RunContext, Runner, RunOutput
from clawline.agents.scaffolding import visible_text
from clawline.agents.steps import SILENT_TOKENS
from clawline.agents.stream import RunStream
from clawline.errors import SessionNotFound
from clawline.events import DomainEvents, RunEnded, SessionChanged
from clawline.records.outbox import OutboxItem
from clawline.records.transcript import TranscriptEvent, message_json
from clawline.sessions.catalog import CatalogTransaction, Cause
from clawline.types import JSON, JSONObject, SessionStatus

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.agents")

ABORT_GRACE_S = 5.0
"""How long a cancelled runner gets to unwind before its run is ended anyway."""


@dataclass(frozen=True, slots=True)
class _Ending:
    status: SessionStatus
    stop_reason: str
    text: str
    error: str | None = None
    usage: Mapping[str, JSON] | None = None


EndWrite: TypeAlias = Callable[[CatalogTransaction], None]
"""A write that joins a run's end transaction (:meth:`RunExecution._end_now`)."""
EndWriter: TypeAlias = Callable[[Run, RunOutcome], EndWrite | None]
"""Asked on the loop as a run ends: the write to add to its end transaction, if any."""


@dataclass(frozen=True, slots=True)
class _End:
    """What a run's end transaction writes."""

    run: Run
    data: JSONObject | None
    """The assistant message (``None``: nothing to store)."""
    text: str
    status: JSONObject | None
    """The session's end status (``None``: left to the run beside this one)."""
    outcome: RunOutcome
    key_store: RunKeys | None
    ended: RunEnded
    writes: list[EndWrite] = field(default_factory=list)


def _consume(task: asyncio.Task[RunOutput]) -> None:
    if not task.cancelled():
        task.exception()


class RunExecution:
    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        events: DomainEvents,
        runner: Callable[[Run], Runner],
        on_ended: Callable[[Run, RunOutcome], None],
        concurrent: Callable[[Run], bool] = lambda run: False,
        on_first_run: Callable[[Run], Awaitable[None]] | None = None,
        keys: RunKeys | None = None,
        end_writers: list[EndWriter] | None = None,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._events = events
        self._runner = runner
        self._on_ended = on_ended
        self._concurrent = concurrent
        """Whether another run of the run's session is running (a nested-lane run beside an
        ordinary one): then the entry's run status is left to the other run."""
        self._on_first_run = on_first_run
        """Awaited before the runner when the session had not run before (new or reset)."""
        self._keys = keys
        """Where a run's idempotency outcome is stored, with the session's end status."""
        self._end_writers = end_writers if end_writers is not None else []
        """Asked for the writes that join each run's end transaction (shared with the run
        manager, which registers them)."""
        self._recent = RecentHistory()

    async def execute(self, run: Run) -> None:
        await run.accepted.wait()
        clock = self._clock
        stream = RunStream(self._events, clock, run_id=run.run_id, session_key=run.session_key)
        written = run.start_written
        if run.stop is not None:
            if written is None:
                self.end_unstarted(run)
            else:  # written as started when accepted: its end is written like any run's
                run.state = RunState.RUNNING
                await self._finish(run, stream, _Ending("killed", "aborted", "", error="aborted"))
            return
        run.state = RunState.RUNNING
        if written is None or run.started_at is None:
            run.started_at = clock.now_ms()
        first = False
        started = Cause("send", "start", run.run_id)
        try:
            if written is not None:  # the accepting transaction wrote the start
                first = run.first_run
                self._events.publish(
                    SessionChanged(
                        run.session_key, "send", "start", run_id=run.run_id, entry=written
                    )
                )
            elif self._concurrent(run):  # the other run owns the entry's status; still told
                self._events.publish(
                    SessionChanged(run.session_key, "send", "start", run_id=run.run_id)
                )
            else:
                first = await self._write_status(
                    run,
                    started,
                    status="running",
                    startedAt=run.started_at,
                    endedAt=None,
                    runtimeMs=None,
                )
        except Exception as error:
            log.warning("run %s could not start: %s", run.run_id, error)
            ending = _Ending("failed", "error", "", error=str(error) or type(error).__name__)
        else:
            stream.started(run.started_at)
            if first and self._on_first_run is not None:
                await self._on_first_run(run)
            ending = await self._invoke(run, stream)
        await self._finish(run, stream, ending)

    def end_unstarted(self, run: Run) -> None:
        """End a run that never started (aborted while queued): only its end is told."""
        outcome = self._outcome(run, _Ending("killed", "aborted", "", error="aborted"))
        self._events.publish(
            RunEnded(
                run.run_id,
                run.session_key,
                status="killed",
                stop_reason="aborted",
                started_at=None,
                ended_at=outcome.ended_at,
                error="aborted",
            )
        )
        self._on_ended(run, outcome)

    def fail(self, run: Run, error: str) -> None:
        """Record a run that broke outside its runner (a bug or a lost store)."""
        self._on_ended(run, self._outcome(run, _Ending("failed", "error", "", error=error)))

    # --- the runner ----------------------------------------------------------------------

    def _context(self, run: Run, stream: RunStream) -> RunContext:
        store, workers, recent = self._store, self._workers, self._recent

        async def read(limit: int) -> list[HistoryMessage]:
            opening, run.opening = run.opening, None  # once: later reads see what followed
            if opening is not None and limit > 0:
                return [HistoryMessage(opening, convert(message_json(opening)))]
            return await workers.run(recent.read, store, run.session_id or "", limit)

        async def load_history(limit: int) -> list[JSONObject]:
            return [message_json(message.event) for message in await read(limit)]

        async def load_model_history(limit: int) -> list[ModelMessage]:
            return [message.model for message in await read(limit) if message.model is not None]

        async def append_message(data: JSONObject) -> JSONObject:
            if stream.closed:
                raise RuntimeError(f"run {run.run_id} has ended; no more transcript messages")
            run.opening = None
            event = await workers.run_short(
                self._catalog.append, run.session_key, MESSAGE_EVENT, data, run_id=run.run_id
            )
            return message_json(event)

        def append_in_transaction(work: CatalogTransaction, data: JSONObject) -> None:
            if stream.closed:
                raise RuntimeError(f"run {run.run_id} has ended; no more transcript messages")
            run.opening = None
            work.append(run.session_key, MESSAGE_EVENT, data, run_id=run.run_id)

        return RunContext(
            run_id=run.run_id,
            session_key=run.session_key,
            session_id=run.session_id or "",
            agent_id=keys.agent_id_of(run.session_key),
            message=run.message,
            origin=run.origin,
            attachments=run.attachments,
            extra_system_prompt=run.extra_system_prompt,
            lane=run.lane,
            deliver=run.deliver,
            thinking=run.thinking,
            timeout_ms=run.timeout_ms,
            stream=stream,
            stop_requested=run.stop_requested,
            load_history=load_history,
            load_model_history=load_model_history,
            message_seq=run.message_seq,
            append_message=append_message,
            entry=run.start_written,
            append_in_transaction=append_in_transaction,
        )

    async def _invoke(self, run: Run, stream: RunStream) -> _Ending:
        runner = self._runner(run)
        task = asyncio.create_task(runner.run(self._context(run, stream)))
        stopper = asyncio.create_task(run.stop_requested.wait())
        timer = asyncio.create_task(self._clock.sleep(run.timeout_ms / 1000))  # virtual in tests
        try:
            done, _ = await asyncio.wait(
                {task, stopper, timer}, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            task.add_done_callback(_consume)
            raise
        finally:
            stopper.cancel()
            timer.cancel()
        if task in done:
            return self._completed(task, stream)
        if run.stop is None:
            run.request_stop(StopRequest.TIMEOUT)
        task.cancel()
        await asyncio.wait({task}, timeout=ABORT_GRACE_S)
        if task.done():
            _consume(task)
        else:
            log.warning("runner of %s ignored cancellation; ending the run anyway", run.run_id)
            task.add_done_callback(_consume)
        if run.stop is StopRequest.TIMEOUT:
            error = f"run timed out after {run.timeout_ms} ms"
            return _Ending("timeout", "timeout", stream.text, error=error)
        return _Ending("killed", "aborted", stream.text, error="aborted")

    @staticmethod
    def _completed(task: asyncio.Task[RunOutput], stream: RunStream) -> _Ending:
        if task.cancelled():
            return _Ending("killed", "aborted", stream.text, error="aborted")
        error = task.exception()
        if error is not None:
            log.warning("runner failed: %r", error)
            return _Ending("failed", "error", stream.text, error=str(error) or type(error).__name__)
        output: object = task.result()
        if not isinstance(output, RunOutput):
            return _Ending("failed", "error", stream.text, error="runner returned no RunOutput")
        text = stream.text if output.text is None else output.text
        status = terminal_status(error=False, stop_reason=output.stop_reason, aborted=False)
        return _Ending(status, output.stop_reason, text, usage=output.usage)

    # --- the end -------------------------------------------------------------------------

    async def _finish(self, run: Run, stream: RunStream, ending: _Ending) -> None:
        stream.close()
        data: JSONObject | None = None
        if ending.status == "done" or ending.text:
            data = assistant_message(
                ending.text,
                stop_reason=ending.stop_reason,
                usage=ending.usage,
                extra={"runId": run.run_id},
            )
        partial = stream.partial_message() if ending.text else None
        ended_at = self._clock.now_ms()
        started_at = run.started_at or ended_at
        outcome = self._outcome(run, ending, ended_at=ended_at)
        status: JSONObject | None = None
        if not self._concurrent(run):
            status = {
                "status": ending.status,
                "endedAt": ended_at,
                "runtimeMs": ended_at - started_at,
                "abortedLastRun": ending.status in ("killed", "timeout"),
            }
        phase = "error" if ending.status == "failed" else "end"
        ended = RunEnded(
            run.run_id,
            run.session_key,
            status=ending.status,
            stop_reason=ending.stop_reason,
            started_at=started_at,
            ended_at=ended_at,
            message=partial,
            error=ending.error,
            usage=ending.usage,
        )
        writes = [write for prepare in self._end_writers if (write := prepare(run, outcome))]
        run.state = RunState.ENDED  # the session's row no longer counts it as active
        key_store = self._keys if run.key_pending and status is not None else None
        end = _End(run, data, ending.text, status, outcome, key_store, ended, writes)
        cause = Cause("send", phase, run.run_id)
        told = False
        try:
            told = await self._workers.run_short(self._end_now, end, cause)
        except Exception as error:
            if not writes:
                log.warning("run %s: end not stored: %s", run.run_id, error)
                self._events.publish(ended)
            else:  # the run's own end, at least; the end hooks write their part themselves
                log.warning("run %s: end not stored with its writers' part: %s", run.run_id, error)
                try:
                    told = await self._workers.run_short(
                        self._end_now, replace(end, writes=[]), cause
                    )
                except Exception as again:
                    log.warning("run %s: end not stored: %s", run.run_id, again)
                    self._events.publish(ended)
                else:
                    run.key_pending = run.key_pending and key_store is None
        else:
            run.end_written = True
            run.key_pending = run.key_pending and key_store is None
        if not told:  # nothing committed to carry the news: tell it without an entry
            self._events.publish(SessionChanged(run.session_key, "send", phase, run_id=run.run_id))
        self._on_ended(run, outcome)

    def _end_now(self, end: _End, cause: Cause) -> bool:
        """The run's end in one transaction: the assistant message (and, for a run whose reply
        goes to a channel, its outbox row: stored and queued together or not at all), the
        session's end status with the run's idempotency outcome, and what the end writers
        (:meth:`RunManager.on_end_write`) add — a sub-agent's record end, its task's terminal
        status and its requester's inbox row. Told in order once it commits: the message, the
        run's end, the session's change. Whether the session's change was told (``False``:
        the run's session is gone, or its status is left to a run beside it)."""
        run = end.run
        told = False
        with self._catalog.transaction() as work:
            ended = end.ended
            if end.data is not None:
                try:  # the end status below touches the row; one update, not two
                    event = self._append_reply(
                        work, run, end.data, end.text, touch=end.status is None
                    )
                except SessionNotFound:  # deleted mid-run; the end is still told
                    log.info("run %s: session gone, assistant message not stored", run.run_id)
                else:
                    ended = replace(ended, message=message_json(event))
            work.tell(ended)
            if end.status is not None:
                try:
                    work.patch(run.session_key, end.status, create=False, cause=cause)
                except SessionNotFound:  # deleted mid-run; its key still gets the outcome
                    log.info("run %s: session gone, end status not stored", run.run_id)
                else:
                    told = True
            if end.key_store is not None:
                end.key_store.settle(work.tx, run, end.outcome)
            for write in end.writes:
                write(work)
        return told

    def _append_reply(
        self, work: CatalogTransaction, run: Run, data: JSONObject, text: str, *, touch: bool
    ) -> TranscriptEvent:
        event = work.append(run.session_key, MESSAGE_EVENT, data, run_id=run.run_id, touch=touch)
        target = run.delivery
        shown = visible_text(text)  # a person reads it: no thinking, no tool-call markup
        if target is not None and shown and shown not in SILENT_TOKENS:
            work.queue_outbox(
                OutboxItem(
                    target=target,
                    text=shown,
                    kind=run.delivery_kind,
                    dedupe_key=f"{run.delivery_kind}:{run.run_id}@{target.describe()}",
                    created_at=event.ts,
                    session_key=run.session_key,
                    run_id=run.run_id,
                    next_attempt_at=event.ts,
                )
            )
        return event

    def _outcome(self, run: Run, ending: _Ending, *, ended_at: int | None = None) -> RunOutcome:
        return RunOutcome(
            run_id=run.run_id,
            session_key=run.session_key,
            status=ending.status,
            accepted_at=run.accepted_at,
            started_at=run.started_at,
            ended_at=self._clock.now_ms() if ended_at is None else ended_at,
            text=ending.text,
            stop_reason=ending.stop_reason,
            error=ending.error,
            usage=ending.usage,
        )

    async def _write_status(self, run: Run, cause: Cause, **changes: JSON) -> bool:
        """Patch the run's session, telling it as ``cause``; whether it had never run before
        (no ``startedAt``)."""
        change = await self._workers.run(
            self._catalog.patch, run.session_key, changes, create=False, cause=cause
        )
        return change.before is not None and change.before.started_at is None
