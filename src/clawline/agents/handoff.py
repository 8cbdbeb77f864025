"""Runs across gateway instances: where a run is placed, and how it is handed to another
instance through the store (docs/instances.md).

On a store several gateways share (PostgreSQL), the transaction that accepts a run — the one
that claims its idempotency key and appends its user message — also decides where it runs
(:meth:`RunPlacement.target`), with the session's row locked, so two instances accepting
messages for one session decide one after the other:

1. a session with a run that another running instance answers for: that instance (the run
   queues behind the session's current turn there, as on one instance);
2. a session whose active sub-agent record another running instance answers for (a deferred
   orchestrator waiting there for its children): that instance;
3. a persistent ACP child whose agent process another running instance holds (its claim in
   ``instance_claims``): that instance, whose process serves the run;
4. a spawned child's first run (``place``): the alive instance answering for the fewest runs
   (this one on a tie, else one of the lightest at random; the counts are read at most every
   :data:`LOAD_TTL_MS` and kept up to date here in between) — so a wave of children spreads
   over the instances;
5. else here.

A run placed elsewhere gets, in that same transaction, its owner row naming the target and a
row in ``run_handoffs`` with what the target needs to start it (:func:`handoff_request`). The
target claims its rows (``FOR UPDATE SKIP LOCKED``, deleting them) and runs them as its own;
the instance that accepted it keeps a stand-in run that ends when the owner row is gone (the
target released it after its end hooks, or recovery did), with the stored outcome of its key.
A target that dies before claiming leaves rows no running instance answers for: recovery drops
them with the rest of its runs.

An abort (``chat.abort``, ``sessions.abort``, a task's cancel, ``subagents kill``/``steer``)
reaches runs another instance runs the same way: a row in ``run_stops`` per instance running
the session's runs, claimed with the handoffs; the aborting instance waits until their owner
rows are gone.

On an exclusive store (SQLite) there is no placement: every run runs where it was accepted.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

from clawline.agents.run import Run
from clawline.keys import is_acp_key
from clawline.records.instance import ACP_CLAIM, RunHandoff
from clawline.records.outbox import OutboxTarget
from clawline.store.base import Store, StoreTransaction
from clawline.types import JSON, JSONObject

LOAD_TTL_MS = 250
"""How long a read of the instances' load serves the placement of spawned children."""
HANDOFF_BATCH = 50
"""Handoffs claimed per transaction."""
HANDOFF_POLL_S = 0.1
"""How often an instance looks for runs handed to it."""
REMOTE_POLL_S = (0.05, 0.1, 0.2, 0.5, 1.0)
"""How often the accepting instance looks whether a run handed elsewhere has ended
(backing off to the last)."""
REMOTE_STOP_WAIT_S = 10.0
"""How long an abort waits for the runs it stopped on other instances to end."""


class RunPlacement:
    """Decides, inside a run's accepting transaction, which instance runs it (module
    docstring)."""

    def __init__(self, *, store: Store, instance_id: str) -> None:
        self._store = store
        self.instance_id = instance_id
        self._load_lock = threading.Lock()  # accepting transactions run on several workers
        self._load: tuple[int, list[str], dict[str, int]] | None = None

    def target(self, tx: StoreTransaction, run: Run, now: int) -> str | None:
        """The instance that runs ``run``, ``None`` for this one. Call with the session's row
        locked."""
        owner = tx.run_owners.session_owner(run.session_key, besides=self.instance_id)
        if owner is not None:
            return owner
        keeper = self._record_keeper(run.session_key)
        if keeper is not None:
            return keeper
        if is_acp_key(run.session_key):
            holder = self._store.claims.holder(ACP_CLAIM, run.session_key)
            if holder is not None and holder != self.instance_id:
                return holder
        if not run.place:
            return None
        with self._load_lock:
            alive, load = self._load_now(now)
            if len(alive) < 2 or self.instance_id not in alive:
                return None
            lightest = min(load.get(instance, 0) for instance in alive)
            if load.get(self.instance_id, 0) <= lightest:
                target = self.instance_id
            else:
                # Among equally loaded ones, at random: instances placing side by side read
                # the same counts, and would otherwise all pick the same one.
                target = random.choice([i for i in alive if load.get(i, 0) == lightest])
            load[target] = load.get(target, 0) + 1
        return None if target == self.instance_id else target

    def _load_now(self, now: int) -> tuple[list[str], dict[str, int]]:
        """The live instances and the runs each answers for, read at most every
        :data:`LOAD_TTL_MS` (and counted on here for what this instance placed since): a wave
        of spawns costs one count per interval, not one per child."""
        if self._load is None or now - self._load[0] >= LOAD_TTL_MS:
            alive = [
                record.instance_id
                for record in self._store.instances.running()
                if record.alive(now)
            ]
            self._load = (now, alive, self._store.run_owners.counts())
        return self._load[1], self._load[2]

    def _record_keeper(self, session_key: str) -> str | None:
        """Another running instance answering for the session's active sub-agent record (a
        deferred orchestrator waiting there for its children): its later turns run there."""
        for record in self._store.runs.by_child(session_key):
            keeper = record.instance_id
            if record.active and keeper is not None and keeper != self.instance_id:
                found = self._store.instances.get(keeper)
                if found is not None and found.running:
                    return keeper
        return None


def handoff_request(run: Run, *, key_stored: bool, watch: bool) -> JSONObject:
    """What the target needs to start ``run`` (its message is in the transcript at
    ``run.message_seq``); ``watch``: :attr:`HandedRun.watch`."""
    return {
        "message": run.message,
        "messageSeq": run.message_seq,
        "dedupeKey": run.dedupe_key,
        "origin": run.origin,
        "timeoutMs": run.timeout_ms,
        "acceptedAt": run.accepted_at,
        "attachments": [dict(block) for block in run.attachments],
        "extraSystemPrompt": run.extra_system_prompt,
        "lane": run.lane,
        "deliver": run.deliver,
        "delivery": None if run.delivery is None else run.delivery.to_json(),
        "deliveryKind": run.delivery_kind,
        "thinking": run.thinking,
        "bypassQueue": run.bypass_queue,
        "place": run.place,
        "keyStored": key_stored,
        "watch": watch,
    }


@dataclass(frozen=True, slots=True)
class HandedRun:
    """A claimed handoff, ready to run here."""

    run: Run
    session_id: str
    watch: bool = False
    """Its end ends an active sub-agent record, which moved here with it."""


def run_from_handoff(handoff: RunHandoff, session_id: str) -> HandedRun:
    """The run a claimed handoff describes, owned by this instance from now on."""
    request = handoff.request
    delivery = request.get("delivery")
    run = Run(
        run_id=handoff.run_id,
        dedupe_key=_text(request, "dedupeKey"),
        session_key=handoff.session_key,
        message=_text(request, "message"),
        origin="agent" if request.get("origin") == "agent" else "chat",
        timeout_ms=_int(request, "timeoutMs"),
        accepted_at=_int(request, "acceptedAt"),
        attachments=[dict(block) for block in _list(request, "attachments")],
        extra_system_prompt=_optional_text(request, "extraSystemPrompt"),
        lane=_optional_text(request, "lane"),
        deliver=request.get("deliver") is True,
        delivery=_target(delivery) if isinstance(delivery, dict) else None,
        delivery_kind="completion" if request.get("deliveryKind") == "completion" else "reply",
        thinking=_optional_text(request, "thinking"),
        bypass_queue=request.get("bypassQueue") is True,
        message_seq=_int(request, "messageSeq"),
        place=request.get("place") is True,
    )
    run.key_pending = request.get("keyStored") is True
    run.owned = True
    run.session_id = session_id
    return HandedRun(run, session_id, request.get("watch") is True)


def _text(request: JSONObject, name: str) -> str:
    value = request.get(name)
    if not isinstance(value, str):
        raise ValueError(f"handoff without {name}")
    return value


def _optional_text(request: JSONObject, name: str) -> str | None:
    value = request.get(name)
    return value if isinstance(value, str) else None


def _int(request: JSONObject, name: str) -> int:
    value = request.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"handoff without {name}")
    return value


def _list(request: JSONObject, name: str) -> list[dict[str, JSON]]:
    value = request.get(name)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _target(data: dict[str, JSON]) -> OutboxTarget | None:
    channel, account, to = data.get("channel"), data.get("accountId"), data.get("to")
    if not (isinstance(channel, str) and isinstance(account, str) and isinstance(to, str)):
        return None
    thread = data.get("threadId")
    return OutboxTarget(channel, account, to, thread if isinstance(thread, str) else None)
