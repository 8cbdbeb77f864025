"""The store interface of the channel outbox: ``store.outbox`` and ``tx.outbox``.

Like the other tables these objects know SQL and indexes, not rules: the delivery loop
(:mod:`clawline.channels.outbox_delivery`) decides when to retry and when to give up. Every
backend shares the SQL (:mod:`clawline.store._outbox_sql`).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Sequence

from clawline.records.outbox import OutboxItem, OutboxStatus


class OutboxReads(abc.ABC):
    """``store.outbox``."""

    @abc.abstractmethod
    def get(self, item_id: int) -> OutboxItem | None: ...

    @abc.abstractmethod
    def due(
        self, now: int, limit: int, channels: Collection[str] | None = None
    ) -> list[OutboxItem]:
        """Pending rows whose next attempt is due, oldest first (one index range); with
        ``channels``, only rows of those channels (one index range per channel)."""

    @abc.abstractmethod
    def next_due_at(self, channels: Collection[str] | None = None) -> int | None:
        """When the earliest pending row (of ``channels``, when given) is due, ``None`` when
        none is pending."""

    @abc.abstractmethod
    def page(
        self, status: OutboxStatus | None, before_id: int | None, limit: int
    ) -> list[OutboxItem]:
        """Rows newest first (by id), optionally of one status, below ``before_id``."""

    @abc.abstractmethod
    def pending_counts(self) -> dict[tuple[str, str], int]:
        """Pending rows per ``(channel, account)``: each account's outbox depth."""


class OutboxWrites(abc.ABC):
    """``tx.outbox``."""

    @abc.abstractmethod
    def enqueue(self, items: Sequence[OutboxItem]) -> list[OutboxItem]:
        """Insert the rows whose ``dedupe_key`` is new; the inserted rows, with their ids (a
        key already queued is skipped: the same message for the same target goes out once)."""

    @abc.abstractmethod
    def delivered(self, item_id: int, at: int, remote_id: str | None) -> bool:
        """Mark a pending row delivered; whether it was pending."""

    @abc.abstractmethod
    def retry_later(self, item_id: int, at: int, error: str) -> bool:
        """Count a failed attempt and schedule the next one at ``at``."""

    @abc.abstractmethod
    def claim(self, item_id: int, now: int, until: int) -> bool:
        """Take a pending row that is due at ``now`` for one delivery attempt: its next attempt
        moves to ``until``, so no other gateway instance attempts it meanwhile (should this
        one die mid-send, it is due again then). Whether this caller got it."""

    @abc.abstractmethod
    def postpone(self, item_id: int, at: int) -> bool:
        """Move a pending row's next attempt to ``at`` without counting an attempt (it waits
        behind an earlier message to the same conversation)."""

    @abc.abstractmethod
    def failed(self, item_id: int, at: int, error: str) -> bool:
        """Give up on a pending row (the reason kept); whether it was pending."""
