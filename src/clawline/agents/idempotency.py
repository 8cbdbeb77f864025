"""The idempotency cache: outcomes of ended runs, by dedupe key, for a while.

``chat.send`` dedupes by its ``idempotencyKey``, ``agent`` by ``agent:<idempotencyKey>``
(:func:`dedupe_key`). Runs that are still queued or running are tracked by the run manager
itself (a repeat then answers ``in_flight``); once a run ends its outcome lands here and a
repeat within :data:`IDEMPOTENCY_TTL_MS` replays it. At most :data:`IDEMPOTENCY_MAX_ENTRIES`
outcomes are kept in memory; the oldest go first.

This cache is a front for speed: the store keeps every key with its outcome for the same
window (:mod:`clawline.agents.run_keys`), so a key that was dropped here, or that a previous
process recorded, is still found there.
"""

from __future__ import annotations

from collections import OrderedDict

from clawline.agents.run import Origin, RunOutcome
from clawline.clock import Clock

IDEMPOTENCY_TTL_MS = 5 * 60 * 1000
IDEMPOTENCY_MAX_ENTRIES = 1000


def dedupe_key(origin: Origin, idempotency_key: str) -> str:
    """The key a run is deduped under: ``chat`` runs by the key itself, others prefixed."""
    return idempotency_key if origin == "chat" else f"{origin}:{idempotency_key}"


def replayable(outcome: RunOutcome) -> bool:
    """Whether a repeat of the run's key replays this outcome. A run that failed before it
    started (its message could not be written, or it broke before running) is not kept: a
    retry runs it."""
    return outcome.started_at is not None or outcome.status != "failed"


class IdempotencyCache:
    """Outcomes by dedupe key, expiring :data:`IDEMPOTENCY_TTL_MS` after the run ended.

    The bounds are read when the cache is made (tests may patch the module constants)."""

    def __init__(
        self, clock: Clock, *, ttl_ms: int | None = None, max_entries: int | None = None
    ) -> None:
        self._clock = clock
        self.ttl_ms = IDEMPOTENCY_TTL_MS if ttl_ms is None else ttl_ms
        self.max_entries = IDEMPOTENCY_MAX_ENTRIES if max_entries is None else max_entries
        self._entries: OrderedDict[str, tuple[int, RunOutcome]] = OrderedDict()
        self._by_run: dict[str, str] = {}

    def __len__(self) -> int:
        self._expire()
        return len(self._entries)

    def put(self, dedupe_key: str, outcome: RunOutcome, *, expires_at: int | None = None) -> None:
        """Keep ``outcome`` until ``expires_at`` (default: :attr:`ttl_ms` from now)."""
        self._entries.pop(dedupe_key, None)
        if expires_at is None:
            expires_at = self._clock.now_ms() + self.ttl_ms
        self._entries[dedupe_key] = (expires_at, outcome)
        self._by_run[outcome.run_id] = dedupe_key
        self._expire()
        while len(self._entries) > self.max_entries:
            oldest, (_, dropped) = self._entries.popitem(last=False)
            self._forget_run(oldest, dropped)

    def get(self, dedupe_key: str) -> RunOutcome | None:
        self._expire()
        found = self._entries.get(dedupe_key)
        # An entry put with an earlier expiry than its predecessors may have passed it.
        if found is None or found[0] <= self._clock.now_ms():
            return None
        return found[1]

    def by_run_id(self, run_id: str) -> RunOutcome | None:
        """The outcome of the latest cached run with this id."""
        self._expire()
        dedupe_key = self._by_run.get(run_id)
        return None if dedupe_key is None else self.get(dedupe_key)

    def _forget_run(self, dedupe_key: str, outcome: RunOutcome) -> None:
        if self._by_run.get(outcome.run_id) == dedupe_key:
            del self._by_run[outcome.run_id]

    def _expire(self) -> None:
        # Entries are kept in insertion order and mostly share one TTL, so the expired ones
        # lead (one put with an explicit expiry is caught by get).
        now = self._clock.now_ms()
        while self._entries:
            dedupe_key, (expires_at, outcome) = next(iter(self._entries.items()))
            if expires_at > now:
                return
            del self._entries[dedupe_key]
            self._forget_run(dedupe_key, outcome)
