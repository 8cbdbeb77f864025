"""The ACP children of the acp spawn runtime (``runtime.acp``): their agent processes and run
ends.

An ACP child (``agent:<acpAgentId>:acp:<uuid>``, made by ``sessions_spawn runtime="acp"``, see
:mod:`clawline.collab.spawn_acp`) is an ordinary clawline session whose runs are served by
:class:`~clawline.collab.acp.acp_runner.AcpRunner` instead of the model turn loop
(:mod:`clawline.collab.acp.router`). So the
run manager does for it what it does for every session — the user message in the transcript,
queueing, ``chat``/``agent`` events, the assistant message, the entry status, timeouts and
aborts (``chat.abort``, ``tasks.cancel``, ``subagents kill``) — and the runner only drives the
agent: one run = one ``session/prompt`` of the child's ACP session.

Processes (:class:`~clawline.collab.acp.child_agent.AgentProcess`), one per live child:

- ``oneshot`` (spawn ``mode: "run"``): started by the spawn, closed when its run ends;
- ``persistent`` (``mode: "session"``): kept for follow-up messages (``chat.send`` to the child
  prompts the same ACP session) until the session is deleted or the gateway stops.

A run for a child without a live process (a follow-up to a finished oneshot child, or any
child after a gateway restart) starts the agent again and reopens the child's ACP session with
``session/load``; an agent without ``loadSession`` cannot continue it, and the run fails.

On a store several gateway instances share (docs/instances.md), a persistent child's agent
process belongs to one instance: the one that starts it claims it (``instance_claims``, kind
``acp``), runs for the child are placed there (:mod:`clawline.agents.handoff`), and when that
instance is gone — its lease lapsed, or it stopped — a live one adopts the child at its next
heartbeat (:meth:`AcpRuntime.adopt_children`): it starts the agent and loads the ACP session,
so the child is up again before anyone writes to it. A deleted child's claim is given up.

An aborted or timed-out run sends ``session/cancel`` and waits up to :data:`CANCEL_WAIT_S` for
the agent's answer; a persistent agent that does not answer in time is closed. Closing is
:meth:`AgentProcess.close` (``session/close`` if supported, EOF, SIGTERM, SIGKILL, each after
``acp.shutdownGraceSeconds``); the runtime tracks every close, and the run manager's shutdown
awaits them all, so no process outlives the gateway.

Run ends (:meth:`~AcpRuntime.watch`): the spawn run of a tracked child ends its sub-agent run
record through the subagent registry (record, task, inbox row for the requester — the durable
announce), a ``streamTo: "parent"`` child's run only its task (and its relay's last message).

:class:`AcpRuntime` is what the ACP spawn uses of the runtime
(:class:`clawline.collab.spawn_acp.AcpSpawnRuntime`: open a child, watch its run with its relay,
close it); collab does not import this package. The runtime (:mod:`clawline.runtime`) builds it
with its parts and wires it::

    runs.on_run_end(acp.run_ended)
    runs.on_shutdown(acp.shutdown)
    events.subscribe(acp.session_event)
    runs.route(is_acp_key, lambda: router)  # AcpSessionRouter(..., acp=AcpRunner(acp=acp))

Nothing here loads the ACP SDK until the first agent process starts (:meth:`AcpRuntime.open`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawline.agents.run import Run, RunOutcome
from clawline.collab.acp.relay import ParentRelay, stream_log_path
from clawline.collab.completion import Ending, ending_of, result_text
from clawline.collab.spawn_acp_plan import acp_meta
from clawline.config import AcpAgentConfig, AcpConfig
from clawline.errors import AcpAgentError
from clawline.events import DomainEvent, SessionChanged
from clawline.keys import is_acp_key
from clawline.records.instance import ACP_CLAIM

if TYPE_CHECKING:
    from acp.connection import StreamEvent, StreamObserver

    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock
    from clawline.collab.acp.child_agent import AgentProcess
    from clawline.collab.spawn_acp import ParentRelayTarget
    from clawline.collab.subagents import SubagentRegistry
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab.acp")

ADOPT_BATCH = 20
"""Persistent children of gone instances restarted per pass."""
STARTUP_TIMEOUT_S = 60.0
"""Start, ``initialize`` and ``session/new``/``session/load`` together."""
CANCEL_WAIT_S = 2.0
WireObserver = Callable[["AgentProcess", "StreamEvent"], None]
"""Sees every JSON-RPC message of every agent connection (wire logs, tests)."""


@dataclass(slots=True)
class AcpChild:
    session_key: str
    agent_id: str
    mode: str
    """``oneshot`` or ``persistent``."""
    cwd: str
    process: AgentProcess

    @property
    def acp_session_id(self) -> str | None:
        """The agent's id of the child's ACP session (once opened)."""
        return self.process.session_id


@dataclass(frozen=True, slots=True)
class WatchedRun:
    run_id: str
    task_id: str
    tracked: bool
    """A sub-agent run record exists (ended through the subagent registry)."""
    relay: ParentRelay | None = None


class AcpRuntime:
    """The ACP children's agent processes and run ends (see the module docstring).

    ``config`` is ``[acp]``; ``runs`` the run manager (no agent starts once it is closed; the
    relays inject their messages through it); ``subagents`` ends the run records of tracked
    children; ``store`` and ``tasks`` end the tasks of the others; ``catalog`` and ``workers``
    read a child's entry; ``clock`` and ``state_dir`` serve the relays, their stream logs and
    the agents' stderr logs. On a ``shared_store`` this instance claims the persistent
    children whose agents it starts, and adopts those of instances gone (module docstring).
    """

    def __init__(
        self,
        *,
        config: AcpConfig,
        runs: RunManager,
        subagents: SubagentRegistry,
        catalog: SessionCatalog,
        tasks: TaskRegistry,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        state_dir: Path,
        shared_store: bool = False,
    ) -> None:
        self.config = config
        self._shared = shared_store
        self._runs = runs
        self._subagents = subagents
        self._catalog = catalog
        self._tasks = tasks
        self._store = store
        self._workers = workers
        self._clock = clock
        self._state_dir = state_dir
        self._children: dict[str, AcpChild] = {}
        self._watched: dict[str, WatchedRun] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._releasing: set[asyncio.Future[None]] = set()
        """Claims of deleted children being given up (awaited by :meth:`shutdown`)."""
        self.observers: list[WireObserver] = []
        self.startup_timeout_s = STARTUP_TIMEOUT_S
        self.cancel_wait_s = CANCEL_WAIT_S

    def child(self, session_key: str) -> AcpChild | None:
        """The live (or closing) process of a child, if any."""
        return self._children.get(session_key)

    def stderr_path(self, session_id: str) -> Path:
        return self._state_dir / "acp" / "logs" / f"{session_id}.stderr.log"

    def _relay(self, run_id: str, target: ParentRelayTarget) -> ParentRelay:
        """The ``streamTo: "parent"`` relay of a child's spawn run (not started), logging to
        its stream log under the state directory."""
        return ParentRelay(
            runs=self._runs,
            clock=self._clock,
            parent_key=target.parent_key,
            child_key=target.child_key,
            run_id=run_id,
            agent_id=target.agent_id,
            log_path=stream_log_path(self._state_dir, target.child_session_id),
        )

    # --- processes -------------------------------------------------------------------------

    async def open(
        self,
        *,
        session_key: str,
        session_id: str,
        agent: AcpAgentConfig,
        cwd: str,
        mode: str,
        resume_session_id: str | None = None,
    ) -> AcpChild:
        """Start the agent for a child and open (or load) its ACP session; raises
        :class:`AcpAgentError` with the reason."""
        if self._runs.closed:
            raise AcpAgentError("the gateway is shutting down; no ACP agent is started")
        # The ACP SDK (and pydantic) load with the first agent process, not at gateway start.
        from clawline.acp_client.agent_process import AgentCommand
        from clawline.collab.acp.callbacks import RuntimeClient
        from clawline.collab.acp.child_agent import AgentProcess

        config = self.config
        process = AgentProcess(
            AgentCommand(
                agent.command, agent.env, stderr=self.stderr_path(session_id), name=agent.id
            ),
            RuntimeClient(config.permission_mode),
            grace_s=config.shutdown_grace_s,
        )
        process.observers.extend(self._tap(process, observer) for observer in self.observers)
        try:
            await process.start(
                cwd=cwd, resume_session_id=resume_session_id, timeout_s=self.startup_timeout_s
            )
        finally:
            if process.closing:
                self._track(process)
        child = AcpChild(session_key, agent.id, mode, cwd, process)
        previous = self._children.get(session_key)
        if previous is not None:
            self._close(previous)
        self._children[session_key] = child
        log.info("ACP agent %s started for %s (pid %s)", agent.id, session_key, process.pid)
        if self._shared and mode == "persistent":
            await self._workers.run(self._claim_now, session_key)
        return child

    def _claim_now(self, session_key: str) -> bool:
        with self._store.transaction() as tx:
            return tx.claims.take(ACP_CLAIM, session_key, self._clock.now_ms())

    def _release_now(self, session_key: str) -> None:
        with self._store.transaction() as tx:
            tx.claims.release(ACP_CLAIM, [session_key])

    async def adopt_children(self) -> int:
        """Restart here the persistent children whose instance is no longer running (it
        crashed, or stopped): claim each, start its agent and ``session/load`` its ACP session.
        One that cannot be reopened (its session deleted, its agent without ``loadSession``
        or no longer configured) is given up, logged; the next message to it tries again. How
        many were restarted."""
        if not self._shared or self._runs.closed:
            return 0
        orphans = await self._workers.run(self._store.claims.unanswered, ACP_CLAIM, ADOPT_BATCH)
        restarted = 0
        for claim in orphans:
            if not await self._workers.run(self._claim_now, claim.name):
                continue  # another instance adopted it first
            try:
                await self.acquire(claim.name)
            except AcpAgentError as error:
                log.warning("ACP child %s not restarted here: %s", claim.name, error)
                await self._workers.run(self._release_now, claim.name)
                continue
            restarted += 1
            log.info(
                "ACP child %s restarted here (its instance %s is gone)",
                claim.name,
                claim.instance_id,
            )
        return restarted

    @staticmethod
    def _tap(process: AgentProcess, observer: WireObserver) -> StreamObserver:
        return lambda event: observer(process, event)

    async def acquire(self, session_key: str) -> AcpChild:
        """The child's live process, reopening its ACP session when there is none."""
        child = self._children.get(session_key)
        if child is not None and child.process.alive:
            return child
        if child is not None:
            self._close(child)
        entry = await self._workers.run(self._catalog.get, session_key)
        meta = acp_meta(entry)
        if entry is None or meta is None:
            raise AcpAgentError(f"{session_key} is not an ACP session of this gateway")
        agent_id = str(meta["agent"])
        agent = self.config.agents.get(agent_id)
        if agent is None:
            raise AcpAgentError(f'ACP agent "{agent_id}" is not configured')
        acp_session = meta.get("acpSessionId")
        if not isinstance(acp_session, str) or not acp_session:
            raise AcpAgentError(f"ACP session {session_key} was never opened")
        try:
            return await self.open(
                session_key=session_key,
                session_id=entry.session_id,
                agent=agent,
                cwd=str(meta.get("cwd") or agent.cwd or self._state_dir),
                mode=str(meta.get("mode") or "persistent"),
                resume_session_id=acp_session,
            )
        except AcpAgentError as error:
            raise AcpAgentError(f"ACP session {session_key} cannot be reopened: {error}") from None

    def release(self, child: AcpChild, *, broken: bool = False) -> None:
        """After a run: a oneshot child's process (or a broken one) is closed."""
        if child.mode == "oneshot" or broken or not child.process.alive:
            self._close(child)

    def close(self, session_key: str) -> asyncio.Task[None] | None:
        """Stop the child's process (if any); the task ends when it is gone."""
        child = self._children.get(session_key)
        return None if child is None else self._close(child)

    def _close(self, child: AcpChild) -> asyncio.Task[None]:
        if self._children.get(child.session_key) is child:
            del self._children[child.session_key]
        return self._track(child.process)

    def _track(self, process: AgentProcess) -> asyncio.Task[None]:
        task = process.close()
        if task not in self._closing and not task.done():
            self._closing.add(task)
            task.add_done_callback(self._closed)
        return task

    def _closed(self, task: asyncio.Task[None]) -> None:
        self._closing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("ACP agent did not stop cleanly: %r", task.exception())

    async def shutdown(self) -> None:
        """Stop every agent process and wait until all are gone (gateway shutdown)."""
        for child in list(self._children.values()):
            self._close(child)
        while self._closing:
            await asyncio.wait(list(self._closing))
        if self._releasing:
            await asyncio.wait(list(self._releasing))

    def session_event(self, event: DomainEvent) -> None:
        """A domain event: a deleted child loses its process."""
        if not isinstance(event, SessionChanged) or event.reason != "delete":
            return
        if event.session_key in self._children:
            self.close(event.session_key)
        if self._shared and is_acp_key(event.session_key):
            release = asyncio.ensure_future(self._workers.run(self._release_now, event.session_key))
            self._releasing.add(release)
            release.add_done_callback(self._released)

    def _released(self, release: asyncio.Future[None]) -> None:
        self._releasing.discard(release)
        if not release.cancelled() and release.exception() is not None:
            log.warning("claim of a deleted ACP child not given up: %r", release.exception())

    # --- run ends --------------------------------------------------------------------------

    def watch(
        self,
        run_id: str,
        task_id: str,
        *,
        tracked: bool,
        relay_to: ParentRelayTarget | None = None,
    ) -> ParentRelay | None:
        """Write the end of the spawn run ``run_id`` when it ends: its sub-agent run record when
        ``tracked``, else its task ``task_id``. With ``relay_to``, the run is relayed to the
        parent: the relay is returned, not started."""
        relay = None if relay_to is None else self._relay(run_id, relay_to)
        self._watched[run_id] = WatchedRun(run_id, task_id, tracked, relay)
        return relay

    def unwatch(self, run_id: str) -> None:
        self._watched.pop(run_id, None)

    def relay_of(self, run_id: str) -> ParentRelay | None:
        watched = self._watched.get(run_id)
        return None if watched is None else watched.relay

    def run_ended(self, run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        """A run ended: write the end of a watched one (a task of the run manager)."""
        watched = self._watched.pop(run.run_id, None)
        return None if watched is None else self._end(watched, outcome)

    async def _end(self, watched: WatchedRun, outcome: RunOutcome) -> None:
        if watched.relay is not None:
            try:
                await watched.relay.finish(outcome.status, outcome.error)
            except Exception:
                log.exception("ACP relay of run %s not finished", watched.run_id)
        ending = ending_of(outcome.status, outcome.error)
        if watched.tracked:
            if self._runs.closed and outcome.status == "killed":
                return  # cut off by the shutdown: start-up recovery ends it as lost
            await self._subagents.complete(
                watched.run_id, ending, result=result_text(outcome.text), usage=outcome.usage
            )
            return
        delivered = watched.relay is not None and watched.relay.delivered
        try:
            await self._workers.run(self._finish_task_now, watched.task_id, ending, delivered)
        except Exception as error:
            log.warning("ACP task %s not ended: %s", watched.task_id, error)

    def _finish_task_now(self, task_id: str, ending: Ending, delivered: bool) -> None:
        registry = self._tasks
        with self._store.transaction() as tx:
            summary = ending.status_label if ending.task_status != "succeeded" else None
            registry.finish(task_id, ending.task_status, summary=summary, error=ending.error, tx=tx)
            registry.set_delivery(task_id, "delivered" if delivered else "failed", tx=tx)
