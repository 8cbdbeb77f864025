"""The durable side of idempotency: each run's dedupe key in the store, with its outcome.

The in-memory :class:`~clawline.agents.idempotency.IdempotencyCache` answers repeats fast; the
store (table ``run_idempotency``, :mod:`clawline.store.idempotency`) is the truth, so a repeat
after a restart still finds its key:

- :meth:`RunKeys.claim` records the key live in the transaction that appends the run's user
  message; a key the store already holds (live, or ended within the window) is answered from
  the stored record and that transaction writes nothing;
- :meth:`RunKeys.settle` writes the outcome in the transaction that writes the session's end
  status (or on its own, for a run that ended without running); the row then expires
  :data:`~clawline.agents.idempotency.IDEMPOTENCY_TTL_MS` after the run ended. A run that
  failed before it started loses its row instead (a retry runs it, as in memory);
- start-up recovery gives the keys of runs the process died with a lost outcome
  (:func:`lose_live_keys`), so a retry replays that instead of running again;
- the archive sweep deletes expired rows in batches (:func:`prune_expired`).

Runs of a message that is already in the transcript (``existing_message_seq``: completion
deliveries, keyed ``announce:<inbox ids>``) get no stored key: nothing outside the process
retries them, and the inbox already makes their message durable exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast, get_args

from clawline.agents.idempotency import dedupe_key, replayable
from clawline.agents.run import Origin, Run, RunOutcome
from clawline.clock import Clock
from clawline.errors import Conflict
from clawline.records.idempotency import IdempotencyRecord
from clawline.store.base import Store, StoreTransaction
from clawline.types import JSON, JSONObject, SessionStatus

KEY_PRUNE_BATCH = 1000
"""Expired keys deleted per transaction."""

_STATUSES: frozenset[str] = frozenset(get_args(SessionStatus))


def outcome_json(outcome: RunOutcome) -> JSONObject:
    """What the store keeps of an outcome (the run id, session and acceptance are columns)."""
    return {
        "status": outcome.status,
        "startedAt": outcome.started_at,
        "endedAt": outcome.ended_at,
        "text": outcome.text,
        "stopReason": outcome.stop_reason,
        "error": outcome.error,
        "usage": dict(outcome.usage) if outcome.usage is not None else None,
    }


def stored_outcome(record: IdempotencyRecord) -> RunOutcome | None:
    """The outcome of a stored key; ``None`` while its run is live."""
    data = record.outcome
    if data is None:
        return None
    status = data.get("status")
    ended_at = data.get("endedAt")
    if status not in _STATUSES or not isinstance(ended_at, int):
        raise ValueError(f"malformed stored outcome of {record.dedupe_key!r}")
    started_at = data.get("startedAt")
    text = data.get("text")
    stop_reason = data.get("stopReason")
    error = data.get("error")
    usage = data.get("usage")
    return RunOutcome(
        run_id=record.run_id,
        session_key=record.session_key,
        status=cast(SessionStatus, status),  # checked against its values above
        accepted_at=record.accepted_at,
        started_at=started_at if isinstance(started_at, int) else None,
        ended_at=ended_at,
        text=text if isinstance(text, str) else "",
        stop_reason=stop_reason if isinstance(stop_reason, str) else "stop",
        error=error if isinstance(error, str) else None,
        usage=_usage(usage),
    )


def _usage(value: JSON) -> Mapping[str, JSON] | None:
    return dict(value) if isinstance(value, Mapping) else None


class RunKeys:
    """The store side of a run manager's idempotency (store-thread methods take the open
    transaction). ``ttl_ms`` is read from the manager's cache when it is made."""

    def __init__(self, store: Store, clock: Clock, ttl_ms: int) -> None:
        self._store = store
        self._clock = clock
        self.ttl_ms = ttl_ms

    def claim(self, tx: StoreTransaction, run: Run) -> IdempotencyRecord | None:
        """Record the run's key as live; ``None`` when it is recorded, else the record that
        holds the key (nothing written). Call it first in the transaction: a concurrent
        claim of the same key waits for this transaction to end."""
        now = self._clock.now_ms()
        try:
            tx.idempotency.insert(
                dedupe_key=run.dedupe_key,
                run_id=run.run_id,
                session_key=run.session_key,
                accepted_at=run.accepted_at,
                now=now,
            )
        except Conflict:
            held = tx.idempotency.get(run.dedupe_key, now)
            if held is None:  # deleted since the insert looked; the caller may retry
                raise
            return held
        return None

    def settle(self, tx: StoreTransaction, run: Run, outcome: RunOutcome) -> None:
        """Write the run's outcome (kept :attr:`ttl_ms` after it ended), or drop its key when
        the outcome is not replayed (:func:`~clawline.agents.idempotency.replayable`)."""
        if replayable(outcome):
            expires_at = outcome.ended_at + self.ttl_ms
            tx.idempotency.finish(run.dedupe_key, run.run_id, outcome_json(outcome), expires_at)
        else:
            tx.idempotency.delete(run.dedupe_key, run.run_id)

    def settle_now(self, run: Run, outcome: RunOutcome) -> None:
        """Blocking: :meth:`settle` in a transaction of its own."""
        with self._store.transaction() as tx:
            self.settle(tx, run, outcome)

    def find_now(self, run_id: str) -> RunOutcome | None:
        """Blocking: the stored outcome of the latest ended run with this id (a run id is its
        idempotency key, deduped under one key per origin)."""
        now = self._clock.now_ms()
        found: list[RunOutcome] = []
        for origin in get_args(Origin):
            record = self._store.idempotency.get(dedupe_key(origin, run_id), now)
            outcome = None if record is None else stored_outcome(record)
            if outcome is not None:
                found.append(outcome)
        return max(found, key=lambda outcome: outcome.accepted_at, default=None)


def lose_live_keys(store: Store, *, now: int, ttl_ms: int, error: str, batch: int) -> int:
    """Blocking (recovery): give every live key whose run no running gateway instance answers
    for (it died with its instance) the outcome of a failed run with ``error``, ended ``now``
    and kept ``ttl_ms``; ``batch`` keys per transaction. Returns how many."""
    lost = 0
    after: str | None = None
    while True:
        records = store.idempotency.live(after, batch)
        if not records:
            return lost
        answered = store.run_owners.answered_runs([record.run_id for record in records])
        with store.transaction() as tx:
            for record in records:
                if record.run_id in answered:
                    continue
                outcome = RunOutcome(
                    run_id=record.run_id,
                    session_key=record.session_key,
                    status="failed",
                    accepted_at=record.accepted_at,
                    started_at=None,
                    ended_at=now,
                    stop_reason="error",
                    error=error,
                )
                stored = outcome_json(outcome)
                lost += tx.idempotency.finish(
                    record.dedupe_key, record.run_id, stored, now + ttl_ms
                )
        after = records[-1].dedupe_key


def prune_expired(store: Store, now: int, limit: int = KEY_PRUNE_BATCH) -> int:
    """Blocking: delete up to ``limit`` expired keys in one transaction; return how many."""
    with store.transaction() as tx:
        return tx.idempotency.prune(now, limit)
