"""The store interface of run idempotency keys: ``store.idempotency`` and ``tx.idempotency``.

Table ``run_idempotency``: one row per dedupe key (``chat.send``'s ``idempotencyKey``, or
``agent:<idempotencyKey>``) with the run it started. A row is written live (``outcome`` and
``expires_at`` NULL) in the transaction that appends the run's user message, and gets its
outcome (JSON) and its expiry when the run ends. Live rows never expire; an expired row is
never returned and is replaced by the next insert of its key (and pruned in batches).

Like the other collaboration tables these objects know SQL and indexes, not rules: what an
outcome holds and how long it is kept is decided by :mod:`clawline.agents.run_keys`.
"""

from __future__ import annotations

import abc

from clawline.records.idempotency import IdempotencyRecord
from clawline.types import JSONObject


class IdempotencyReads(abc.ABC):
    """``store.idempotency``."""

    @abc.abstractmethod
    def get(self, dedupe_key: str, now: int) -> IdempotencyRecord | None:
        """The key's row unless it expired (``expires_at <= now``)."""

    @abc.abstractmethod
    def live(self, after: str | None, limit: int) -> list[IdempotencyRecord]:
        """Up to ``limit`` rows without an outcome, by dedupe key, strictly after ``after``
        (start-up recovery)."""


class IdempotencyWrites(abc.ABC):
    """``tx.idempotency``."""

    @abc.abstractmethod
    def get(self, dedupe_key: str, now: int) -> IdempotencyRecord | None:
        """Like :meth:`IdempotencyReads.get`, locked until the transaction ends."""

    @abc.abstractmethod
    def insert(
        self, *, dedupe_key: str, run_id: str, session_key: str, accepted_at: int, now: int
    ) -> None:
        """Record a live key, replacing an expired row of it. Raises
        :class:`~clawline.errors.Conflict` (and writes nothing) when an unexpired row holds
        the key; a concurrent insert of the same key waits for the first one to commit."""

    @abc.abstractmethod
    def finish(self, dedupe_key: str, run_id: str, outcome: JSONObject, expires_at: int) -> bool:
        """Give the live row of ``run_id`` its outcome and expiry; whether it was live."""

    @abc.abstractmethod
    def delete(self, dedupe_key: str, run_id: str) -> bool:
        """Drop the key's row if it belongs to ``run_id``; whether there was one."""

    @abc.abstractmethod
    def prune(self, now: int, limit: int) -> int:
        """Delete up to ``limit`` expired rows (soonest expired first); return how many."""
