"""The announce dispatcher (``runtime.announcer``): delivers the durable inbox to requesters
(docs/design-agents.md; clawline's answer to the completions OpenClaw loses on a restart or
while the requester is busy).

A child's end writes an inbox row in the same transaction as its run record and task
(:func:`clawline.collab.completion.end_record`). The dispatcher delivers a requester's pending
rows when the requester is **idle** (no queued or running run):

1. one catalog transaction appends the rows' events — in inbox order, at most
   :data:`ANNOUNCE_BATCH` per delivery, joined into one user message with internal provenance —
   to the requester's transcript and marks exactly those rows delivered (``deliverySeq`` = the
   message's seq) and their tasks ``deliveryStatus: delivered``. A row is appended iff it is
   marked, in the same commit; rows another dispatcher marked first abort the transaction.
2. then the requester's turn starts on that message (``RunManager.send(...,
   existing_message_seq=…)``, lane ``subagent`` for a sub-agent requester). A top-level
   requester's answer is queued for a channel: the child's bound thread first, else the
   requester's origin (:func:`~clawline.channels.thread_bindings.living.resolve_delivery_target`);
   one delivery carries only rows with one target.

A crash (or a stop) between the two leaves a delivered message no answer follows: at start-up,
every delivery of the last :data:`ANNOUNCE_GIVE_UP_MS` with no assistant message after it in
the requester's transcript gets its turn again, so the answer still reaches the channel.

When it is tried: right after a completion is written; when a run of a waiting requester ends
(:meth:`Announcer.run_ended`, which the runtime registers as a run-end hook); every
:data:`ANNOUNCE_TICK_MS` for every requester with pending rows; and at start-up after
recovery. A requester that has been busy for :data:`ANNOUNCE_QUEUE_AFTER_MS`
since its oldest pending row gets the rows anyway, queued behind its current run (OpenClaw's
followup queue). A failed attempt is retried after 1, 2, 4, 8, 8… seconds
(:data:`ANNOUNCE_RETRY_DELAYS_MS`); rows still undeliverable :data:`ANNOUNCE_GIVE_UP_MS` after
they were written are retired (marked delivered without a ``deliverySeq``, task
``deliveryStatus: failed``).

A requester whose session no longer exists: rows of a sub-agent requester are handed to *its*
requester when that session exists (as OpenClaw re-targets them); otherwise they are retired
(``deliveredAt`` set, ``deliverySeq`` null) and their tasks get ``deliveryStatus: parent_missing``.

The dispatcher also runs start-up recovery (:meth:`Announcer.start`); its periodic tick runs in
the runtime's background task group (:mod:`clawline.background`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.messages import MESSAGE_EVENT, user_message
from clawline.agents.run import Run, RunOutcome
from clawline.channels.thread_bindings.living import resolve_delivery_target
from clawline.errors import ClawlineError, Conflict
from clawline.records.collab import InboxItem
from clawline.records.outbox import OutboxTarget
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.sessions.catalog import CatalogTransaction
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock
    from clawline.collab.recovery import StartupRecovery
    from clawline.config import AgentsConfig
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry

log = logging.getLogger("clawline.collab")

ANNOUNCE_TICK_MS = 1_000
"""How often every requester with pending rows is looked at."""
ANNOUNCE_BATCH = 50
"""The most completion events one delivery (one requester turn) carries."""
ANNOUNCE_QUEUE_AFTER_MS = 5 * 60_000
"""OpenClaw's announce expiry (5 min): after it a busy requester gets its rows queued."""
ANNOUNCE_GIVE_UP_MS = 30 * 60_000
"""OpenClaw's hard announce expiry (30 min): rows that still fail to deliver are retired."""
ANNOUNCE_RETRY_DELAYS_MS = (1_000, 2_000, 4_000, 8_000)
RESUME_LIMIT = 10_000
"""The most delivered rows start-up looks at for deliveries no answer followed."""
RESUME_LOOK = 50
"""Transcript events read after such a delivery to find the requester's answer."""
"""Waits after failed attempts (OpenClaw: 1-8 s); the last one repeats."""


class _Raced(Conflict):
    """Another dispatcher marked some of the rows first: roll back, try again."""


@dataclass(frozen=True, slots=True)
class Delivery:
    requester: str
    rows: tuple[InboxItem, ...]
    event: TranscriptEvent
    run_id: str
    text: str
    entry: SessionEntry
    target: OutboxTarget | None
    """The channel conversation the requester's answer is queued for (``None``: none)."""


@dataclass(slots=True)
class _Failures:
    count: int
    retry_at: int


class Announcer:
    """The dispatcher (module docstring). ``config`` gives a sub-agent requester's prompt its
    ``maxSpawnDepth``; ``recovery`` is what :meth:`start` runs first."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        tasks: TaskRegistry,
        runs: RunManager,
        config: AgentsConfig,
        recovery: StartupRecovery,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._task_registry = tasks
        self._runs = runs
        self._config = config
        self._recovery = recovery
        self._waiting: set[str] = set()
        """Requesters known to have pending rows (tried again when their run ends)."""
        self._delivering: set[str] = set()
        self._again: set[str] = set()
        self._failures: dict[str, _Failures] = {}
        self._tasks: set[asyncio.Future[object]] = set()
        """The deliveries under way (this dispatcher owns them; :meth:`stop` awaits them)."""
        self._after_delivery: list[Callable[[str], None]] = []
        self._after_recovery: list[Callable[[], Awaitable[object]]] = []

    def on_recovered(self, callback: Callable[[], Awaitable[object]]) -> None:
        """Await ``callback()`` after the start-up recovery, before any pending row is
        delivered (the sub-agent registry adopts the deferred orchestrators there)."""
        self._after_recovery.append(callback)

    def on_delivery_done(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(requester)`` whenever a delivery attempt to a requester is over
        (its turn started, or nothing was delivered)."""
        self._after_delivery.append(callback)

    # --- triggers --------------------------------------------------------------------------

    def kick(self, requester: str) -> None:
        """Deliver ``requester``'s pending rows soon (when it is idle)."""
        self._waiting.add(requester)
        runs = self._runs
        if runs.closed or runs.has_active_run(requester):
            return
        if requester in self._delivering:
            self._again.add(requester)  # a delivery is under way; look again after it
            return
        self._spawn(self.deliver(requester))

    def run_ended(self, run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        """The run-end hook: a waiting requester that is idle now gets its rows."""
        if run.session_key in self._waiting and not self._runs.has_active_run(run.session_key):
            self.kick(run.session_key)
        return None

    def _spawn(self, coro: Awaitable[object]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("announce delivery broke: %r", task.exception())

    # --- delivery --------------------------------------------------------------------------

    async def deliver(self, requester: str, *, force: bool = False) -> Delivery | None:
        """Deliver the requester's oldest pending rows (one batch) if it is idle, or anyway
        with ``force``; start its turn on them. ``None`` when nothing was delivered (also when
        a delivery to it is already under way: that one looks again when it is done)."""
        if requester in self._delivering:
            self._again.add(requester)
            return None
        self._delivering.add(requester)
        try:
            return await self._deliver(requester, force)
        finally:
            self._delivering.discard(requester)
            if requester in self._again:
                self._again.discard(requester)
                self.kick(requester)
            for callback in self._after_delivery:
                callback(requester)

    async def _deliver(self, requester: str, force: bool) -> Delivery | None:
        runs = self._runs
        if runs.closed:
            return None
        if not force and runs.has_active_run(requester):
            self._waiting.add(requester)
            return None
        now = self._clock.now_ms()
        failures = self._failures.get(requester)
        if failures is not None and now < failures.retry_at and not force:
            return None
        try:
            outcome = await self._workers.run_short(self._deliver_now, requester, now, force)
        except ClawlineError as error:
            self._failed(requester, now, error)
            return None
        self._failures.pop(requester, None)
        if isinstance(outcome, _BusyElsewhere):
            self._waiting.add(requester)
            return None
        if isinstance(outcome, str):  # handed to the requester's own requester
            self._waiting.discard(requester)
            self.kick(outcome)
            return None
        if outcome is None:
            self._waiting.discard(requester)
            return None
        await self._start_turn(outcome)
        return outcome

    def _failed(self, requester: str, now: int, error: Exception) -> None:
        previous = self._failures.get(requester)
        count = 1 if previous is None else previous.count + 1
        delay = ANNOUNCE_RETRY_DELAYS_MS[min(count, len(ANNOUNCE_RETRY_DELAYS_MS)) - 1]
        self._failures[requester] = _Failures(count, now + delay)
        log.warning("announce to %s failed (attempt %d): %s", requester, count, error)

    def _deliver_now(
        self, requester: str, now: int, force: bool = False
    ) -> Delivery | str | _BusyElsewhere | None:
        """On the store thread: the delivery transaction (module docstring). Returns the
        delivery, the requester the rows were handed to, :data:`_BUSY_ELSEWHERE` (unless
        ``force``) while another gateway instance runs the requester, or ``None``."""
        for _ in range(3):
            try:
                with self._catalog.transaction() as work:
                    rows = work.tx.inbox.pending_for(requester)[:ANNOUNCE_BATCH]
                    if not rows:
                        return None
                    entry = work.tx.get(requester)
                    if entry is None:
                        return self._orphaned(work, requester, rows, now)
                    if not force and work.tx.run_owners.session_owner(
                        requester, besides=self._store.instance_id
                    ):
                        return _BUSY_ELSEWHERE
                    return self._append(work, entry, rows, now)
            except _Raced:
                continue
        return None

    def _append(
        self, work: CatalogTransaction, entry: SessionEntry, rows: Sequence[InboxItem], now: int
    ) -> Delivery:
        target, rows = self._target(entry, rows)
        ids = [row.id for row in rows]
        run_id = f"announce:{ids[0]}-{ids[-1]}"
        text = "\n\n".join(_text(row) for row in rows)
        data = user_message(text)
        events: list[JSON] = [_event(row) for row in rows]
        data.update(
            {
                "runId": run_id,
                "provenance": {
                    "kind": "inter_session",
                    "sourceTool": "subagent_announce",
                    "sourceChannel": "webchat",
                    "sourceSessionKeys": [row.child_session_key for row in rows],
                },
                "internalEvents": events,
                "announce": {"inboxIds": list(ids), "runIds": [row.run_id for row in rows]},
            }
        )
        event = work.append(entry.key, MESSAGE_EVENT, data, run_id=run_id)
        marked = work.tx.inbox.mark_delivered(ids, now, event.seq)
        if marked != sorted(ids):
            raise _Raced("another dispatcher marked some of the rows first")
        self._set_delivery(work, rows, "delivered")
        return Delivery(entry.key, tuple(rows), event, run_id, text, entry, target)

    def _target(
        self, entry: SessionEntry, rows: Sequence[InboxItem]
    ) -> tuple[OutboxTarget | None, Sequence[InboxItem]]:
        """Where the requester's answer to ``rows`` goes, and the rows one turn answers.

        OpenClaw's rule: the answer goes out to a channel when the requester has an external
        one and is not itself a sub-agent — the child's bound thread first, else the
        requester's origin. One turn answers one target: the rows stop before the first one
        bound elsewhere."""
        if (entry.spawn_depth or 0) >= 1:
            return None, rows
        bound = self._store.bindings.active_for_sessions([row.child_session_key for row in rows])
        config = self._config.thread_bindings
        targets = [
            resolve_delivery_target(bound.get(row.child_session_key, ()), entry, config)
            for row in rows
        ]
        same = next((i for i, t in enumerate(targets) if t != targets[0]), len(rows))
        return targets[0], rows[:same]

    def _unanswered(self, since: int) -> list[Delivery]:
        """On the store thread: deliveries since ``since`` that no answer of the requester
        follows in its transcript — a crash (or a stop) cut the requester's turn off after
        the delivery committed."""
        groups: dict[tuple[str, int], list[InboxItem]] = {}
        for row in self._store.inbox.delivered_since(since, RESUME_LIMIT):
            if row.delivery_seq is not None:
                groups.setdefault((row.requester_session_key, row.delivery_seq), []).append(row)
        found: list[Delivery] = []
        for (requester, seq), rows in groups.items():
            entry = self._store.get(requester)
            if entry is None:
                continue
            events = self._store.events(entry.session_id, after_seq=seq - 1, limit=RESUME_LOOK)
            if not events or events[0].seq != seq or any(_answers(e) for e in events[1:]):
                continue
            target, _ = self._target(entry, rows)
            run_id = f"announce:{rows[0].id}-{rows[-1].id}"
            text = "\n\n".join(_text(row) for row in rows)
            found.append(Delivery(requester, tuple(rows), events[0], run_id, text, entry, target))
        return found

    async def _resume_unanswered(self) -> None:
        now = self._clock.now_ms()
        for delivery in await self._workers.run(self._unanswered, now - ANNOUNCE_GIVE_UP_MS):
            log.info(
                "announce: %s did not answer completions %s before the restart; asking again",
                delivery.requester,
                delivery.run_id,
            )
            # A fresh key: the cut-off turn's key holds its lost outcome.
            await self._start_turn(delivery, key=f"{delivery.run_id}:resumed:{now}")

    def _orphaned(
        self, work: CatalogTransaction, requester: str, rows: Sequence[InboxItem], now: int
    ) -> str | None:
        for record in self._store.runs.by_child(requester):
            grand = record.requester_session_key
            if grand != requester and work.tx.get(grand) is not None:
                work.tx.inbox.retarget([row.id for row in rows], grand)
                return grand
        work.tx.inbox.mark_delivered([row.id for row in rows], now, None)
        self._set_delivery(work, rows, "parent_missing")
        log.info("announce: requester %s is gone; %d completion(s) retired", requester, len(rows))
        return None

    def _set_delivery(
        self, work: CatalogTransaction, rows: Sequence[InboxItem], status: str
    ) -> None:
        ids = [row.task_id for row in rows if row.task_id is not None]
        # one read and one write for the batch, not one of each per row
        found = work.tx.tasks.get_many(ids)
        tasks = [found[i] for i in dict.fromkeys(ids) if i in found]
        self._task_registry.set_deliveries(tasks, status, tx=work.tx)

    async def _start_turn(self, delivery: Delivery, *, key: str | None = None) -> None:
        entry = delivery.entry
        subagent = (entry.spawn_depth or 0) >= 1
        prompt = await self._workers.run(self._requester_prompt, entry) if subagent else None
        target = delivery.target
        try:
            await self._runs.send(
                session_key=delivery.requester,
                message=delivery.text,
                idempotency_key=key or delivery.run_id,
                origin="agent",
                lane="subagent" if subagent else None,
                extra_system_prompt=prompt,
                existing_message_seq=delivery.event.seq,
                deliver=target is not None,
                delivery=target,
                delivery_kind="completion",
            )
        except ClawlineError as error:
            log.warning(
                "completions delivered to %s but its turn did not start: %s",
                delivery.requester,
                error,
            )

    def _requester_prompt(self, entry: SessionEntry) -> str | None:
        """A sub-agent requester's turns keep its subagent system prompt."""
        from clawline.collab.spawn_plan import subagent_system_prompt

        records = self._store.runs.by_child(entry.key)
        requester = records[0].requester_session_key if records else entry.spawned_by
        if requester is None:
            return None
        agent = self._config.resolve_agent(keys.agent_id_of(requester))
        return subagent_system_prompt(
            requester=requester,
            child_key=entry.key,
            label=entry.label,
            depth=entry.spawn_depth or 1,
            max_depth=agent.subagents.max_spawn_depth,
        )

    # --- the periodic pass -----------------------------------------------------------------

    async def tick(self) -> None:
        """One pass over every requester with pending rows."""
        inbox = self._store.inbox
        requesters = await self._workers.run(inbox.requesters_with_pending)
        now = self._clock.now_ms()
        for requester in requesters:
            self._waiting.add(requester)
            if not self._runs.has_active_run(requester):
                self.kick(requester)
                continue
            pending = await self._workers.run(inbox.pending_for, requester)
            if pending and now - pending[0].created_at >= ANNOUNCE_QUEUE_AFTER_MS:
                self._spawn(self._deliver_forced(requester))
        await self._give_up(now)

    async def _deliver_forced(self, requester: str) -> None:
        await self.deliver(requester, force=True)

    async def _give_up(self, now: int) -> None:
        for requester, failures in list(self._failures.items()):
            if failures.count < len(ANNOUNCE_RETRY_DELAYS_MS):
                continue
            pending = await self._workers.run(self._store.inbox.pending_for, requester)
            stale = [row for row in pending if now - row.created_at >= ANNOUNCE_GIVE_UP_MS]
            retired = await self._workers.run(self._retire_now, stale, now) if stale else 0
            if retired:
                log.error(
                    "announce to %s gave up after %d attempts: %d completion(s) retired",
                    requester,
                    failures.count,
                    retired,
                )

    def _retire_now(self, rows: Sequence[InboxItem], now: int) -> int:
        """Retire the rows still undelivered (a delivery may have taken some meanwhile: those
        keep their ``delivered`` status); return how many."""
        with self._catalog.transaction() as work:
            marked = set(work.tx.inbox.mark_delivered([row.id for row in rows], now, None))
            self._set_delivery(work, [row for row in rows if row.id in marked], "failed")
        return len(marked)

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start-up (before the gateway serves): recovery, then every pending row. The runtime
        then runs :meth:`tick` every :data:`ANNOUNCE_TICK_MS` (its background task group)."""
        await self._recovery.recover()
        for callback in self._after_recovery:
            await callback()
        await self._resume_unanswered()
        await self.tick()

    async def stop(self) -> None:
        """Wait for the deliveries under way (each is one transaction, then its turn)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    @property
    def busy(self) -> bool:
        """Whether a delivery is under way."""
        return bool(self._tasks)

    def delivering_to(self, requester: str) -> bool:
        """Whether a delivery to ``requester`` is under way (rows marked delivered, its turn not
        yet started)."""
        return requester in self._delivering or requester in self._again

    def pending_requesters(self) -> set[str]:
        """Requesters known to be waiting for a delivery (for tests and diagnostics)."""
        return set(self._waiting)


class _BusyElsewhere:
    """The requester runs on another gateway instance: it is not idle."""


_BUSY_ELSEWHERE = _BusyElsewhere()


def _event(row: InboxItem) -> JSON:
    event = row.payload.get("event")
    return dict(event) if isinstance(event, Mapping) else {"type": "task_completion"}


def _answers(event: TranscriptEvent) -> bool:
    return event.type == MESSAGE_EVENT and event.data.get("role") == "assistant"


def _text(row: InboxItem) -> str:
    text = row.payload.get("text")
    return text if isinstance(text, str) else f"[completion of {row.child_session_key}]"


def delivery_json(delivery: Delivery) -> JSONObject:
    return {
        "requester": delivery.requester,
        "runId": delivery.run_id,
        "seq": delivery.event.seq,
        "inboxIds": [row.id for row in delivery.rows],
    }
