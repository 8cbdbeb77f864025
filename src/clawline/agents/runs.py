"""The run manager: accepts messages for sessions and runs them, one session at a time.

- :meth:`RunManager.send` writes the user message to the transcript (and publishes it) before it
  returns, then queues the run. Runs of one session execute one after another (queue mode
  ``followup``); different sessions run concurrently.
- Idempotency: a repeated key answers ``in_flight`` while its run is pending, queued or running
  and replays the cached terminal response for :data:`IDEMPOTENCY_TTL_MS` after it ended.
  ``run_id`` is the idempotency key; the ``agent`` method dedupes under ``agent:<key>``.
- :meth:`abort` ends queued and running runs (``killed``); :meth:`shutdown` aborts everything
  and waits until every run's end is written.
- :attr:`runner` produces replies (:class:`~clawline.agents.runner.Runner`); the default is the
  :class:`~clawline.agents.echo.EchoRunner`.

Runs live in memory: they survive neither a crash nor a restart (a graceful shutdown ends them
as ``killed`` with their status written).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clawline.agents.config import AgentSettings, effective_timeout_ms
from clawline.agents.echo import EchoRunner
from clawline.agents.execution import RunExecution
from clawline.agents.idempotency import IDEMPOTENCY_TTL_MS, IdempotencyCache
from clawline.agents.inject import inject_message
from clawline.agents.lanes import SessionLanes
from clawline.agents.messages import (
    MESSAGE_EVENT,
    attachment_blocks,
    check_idempotency_key,
    check_message,
    user_message,
)
from clawline.agents.run import (
    Origin,
    Run,
    RunOutcome,
    RunsClosed,
    RunState,
    SendAck,
    StopRequest,
)
from clawline.agents.runner import Runner
from clawline.errors import InvalidField
from clawline.sessions.notify import SessionNotifier
from clawline.sessions.transcript import TranscriptEvent
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.services import Services

__all__ = ["IDEMPOTENCY_TTL_MS", "RunManager", "RunsClosed", "SendAck"]

log = logging.getLogger("clawline.agents")


class RunManager:
    def __init__(self, services: Services) -> None:
        self._services = services
        self.settings = AgentSettings.from_settings(services.settings)
        self.runner: Runner = EchoRunner(delay_ms=self.settings.echo_delay_ms)
        self._notifier = SessionNotifier(services)
        self._cache = IdempotencyCache(services.clock)
        self._active: dict[str, Run] = {}
        """Pending, queued and running runs by dedupe key."""
        self._waiters: dict[str, list[asyncio.Future[RunOutcome]]] = {}
        self._tasks: set[asyncio.Task[SendAck]] = set()
        self._closed = False
        self._execution = RunExecution(
            services, self._notifier, runner=lambda: self.runner, on_ended=self._ended
        )
        self._lanes = SessionLanes(self._execution.execute, self._execution.fail)

    # --- queries -------------------------------------------------------------------------

    def has_active_run(self, session_key: str) -> bool:
        """Whether the session has a queued or running run (safe from the store thread)."""
        return self._lanes.busy(session_key)

    def active_runs(self, session_key: str | None = None) -> list[Run]:
        return [
            run
            for run in list(self._active.values())
            if run.active and (session_key is None or run.session_key == session_key)
        ]

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
        attachments: Sequence[Mapping[str, object]] | None = None,
        thinking: str | None = None,
    ) -> SendAck:
        """Accept a message for a session; see the module docstring."""
        if self._closed:
            raise RunsClosed("the gateway is shutting down; no new runs are accepted")
        key = self._services.catalog.canonical(session_key)
        blocks = attachment_blocks(attachments)
        text = check_message(message, has_attachments=bool(blocks))
        check_idempotency_key(idempotency_key)
        if timeout_ms is not None and (
            isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms < 0
        ):
            raise InvalidField("invalid timeoutMs (use an integer >= 0)")
        dedupe = idempotency_key if origin == "chat" else f"{origin}:{idempotency_key}"
        active = self._active.get(dedupe)
        if active is not None:
            return self._ack(active, "in_flight")
        cached = self._cache.get(dedupe)
        if cached is not None:
            done = asyncio.get_running_loop().create_future()
            done.set_result(cached)
            response = cached.response()
            return SendAck(
                run_id=cached.run_id,
                status=cached.reply_status,
                cached=response,
                message_seq=None,
                accepted_at=cached.accepted_at,
                session_key=cached.session_key,
                done=done,
            )
        run = Run(
            run_id=idempotency_key,
            dedupe_key=dedupe,
            session_key=key,
            message=text,
            origin=origin,
            timeout_ms=effective_timeout_ms(timeout_ms, self.settings.run_timeout_ms),
            accepted_at=self._services.clock.now_ms(),
            attachments=blocks,
            extra_system_prompt=extra_system_prompt,
            lane=lane,
            deliver=deliver,
            thinking=thinking,
        )
        self._active[dedupe] = run
        # Shielded: once the key is reserved, a cancelled caller must not leave half a send.
        accepting = self._spawn(self._accept(run))
        try:
            ack = await asyncio.shield(accepting)
        except asyncio.CancelledError:
            accepting.add_done_callback(lambda _: run.accepted.set())
            raise
        # The run starts only once the caller has resumed, so that a caller answering a
        # request without awaiting (chat.send, agent) answers before the run's first event.
        run.accepted.set()
        return ack

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

    def _prepare_now(self, key: str, data: JSONObject) -> tuple[str, TranscriptEvent, bool]:
        """On the store thread: create the entry when missing, append the user message."""
        catalog = self._services.catalog
        entry = catalog.get(key)
        created = entry is None
        if entry is None:
            entry = catalog.patch(key, {}).after
            assert entry is not None
        event = catalog.append(key, MESSAGE_EVENT, data)
        return entry.session_id, event, created

    async def _accept(self, run: Run) -> SendAck:
        data = user_message(run.message, run.attachments)
        try:
            session_id, event, created = await self._services.call(
                self._prepare_now, run.session_key, data
            )
        except BaseException as error:
            self._active.pop(run.dedupe_key, None)
            run.state = RunState.ENDED
            self._execution.fail(run, str(error) or type(error).__name__)
            raise
        run.session_id = session_id
        run.message_seq = event.seq
        if run.stop is None and not self._closed:
            self._lanes.enqueue(run)
        try:
            if created:
                await self._notifier.changed(run.session_key, reason="create")
            await self._notifier.message(run.session_key, event, run_id=run.run_id)
        except Exception as error:
            log.warning("run %s: user message not published: %s", run.run_id, error)
        if run.state is RunState.PENDING:
            self._execution.end_unstarted(run)
        return self._ack(run, "started")

    def _ended(self, run: Run, outcome: RunOutcome) -> None:
        """Called once per run when its end is written: free the session, cache, notify."""
        run.state = RunState.ENDED
        if self._active.get(run.dedupe_key) is run:
            del self._active[run.dedupe_key]
        if outcome.started_at is not None or outcome.status != "failed":
            self._cache.put(run.dedupe_key, outcome)
        if not run.done.done():
            run.done.set_result(outcome)
        for waiter in self._waiters.pop(run.run_id, []):
            if not waiter.done():
                waiter.set_result(outcome)

    def _spawn(self, coro: Coroutine[Any, Any, SendAck]) -> asyncio.Task[SendAck]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- abort, wait, shutdown -----------------------------------------------------------

    async def abort(self, session_key: str, run_id: str | None = None) -> list[str]:
        """Abort the session's run ``run_id``, else all its queued and running runs; return
        the ids aborted once their ends are written."""
        key = self._services.catalog.canonical(session_key)
        targets = [run for run in self.active_runs(key) if run_id is None or run.run_id == run_id]
        for run in targets:
            self._stop(run, StopRequest.ABORT)
        await self._settle(targets)
        return [run.run_id for run in targets]

    def _stop(self, run: Run, reason: StopRequest) -> None:
        run.request_stop(reason)
        if run.state is RunState.QUEUED and self._lanes.unqueue(run):
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
        if active is None and cached is not None:
            return cached
        waiter: asyncio.Future[RunOutcome] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(run_id, []).append(waiter)
        timeout = None if timeout_ms is None else timeout_ms / 1000
        try:
            return await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return None
        finally:
            waiters = self._waiters.get(run_id)
            if waiters is not None:
                with contextlib.suppress(ValueError):
                    waiters.remove(waiter)
                if not waiters:
                    del self._waiters[run_id]

    async def shutdown(self) -> None:
        """Refuse new runs, abort every run and wait until each one's end is written."""
        self._closed = True
        runs = self.active_runs()
        for run in runs:
            self._stop(run, StopRequest.ABORT)
        await self._settle(runs)
        workers = self._lanes.workers()
        if workers:
            await asyncio.wait(workers)

    # --- inject --------------------------------------------------------------------------

    async def inject(self, session_key: str, message: str, label: str | None = None) -> JSONObject:
        """``chat.inject``: see :func:`clawline.agents.inject.inject_message`."""
        return await inject_message(self._services, self._notifier, session_key, message, label)
