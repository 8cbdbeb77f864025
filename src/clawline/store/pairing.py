"""The store interface of device pairings: ``store.pairings`` and ``tx.pairings``.

Like the collaboration tables (:mod:`clawline.store.collab`), these objects know SQL, not
rules: :class:`~clawline.pairing.registry.PairingRegistry` decides who is pending, paired or
revoked. Every backend shares the SQL (:mod:`clawline.store._pairings_sql`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from clawline.records.pairing import DevicePairing


class PairingReads(abc.ABC):
    """``store.pairings``."""

    @abc.abstractmethod
    def get(self, device_id: str) -> DevicePairing | None: ...

    @abc.abstractmethod
    def get_many(self, device_ids: Sequence[str]) -> dict[str, DevicePairing]:
        """The stored pairings among ``device_ids`` (one query per 500 ids)."""

    @abc.abstractmethod
    def by_prefix(self, prefix: str, limit: int) -> list[DevicePairing]:
        """Up to ``limit`` pairings whose device id starts with ``prefix``, in id order."""

    @abc.abstractmethod
    def all(self) -> list[DevicePairing]:
        """Every pairing, most recently changed first."""


class PairingWrites(abc.ABC):
    """``tx.pairings``."""

    @abc.abstractmethod
    def get(self, device_id: str) -> DevicePairing | None:
        """The pairing, locked for update until the transaction ends."""

    @abc.abstractmethod
    def by_prefix(self, prefix: str, limit: int) -> list[DevicePairing]:
        """Like :meth:`PairingReads.by_prefix`, locked until the transaction ends."""

    @abc.abstractmethod
    def with_codes(self) -> list[DevicePairing]:
        """Pending pairings holding a code (expired ones too), locked until the transaction
        ends: two approvals of one code cannot both see it."""

    @abc.abstractmethod
    def save(self, pairing: DevicePairing) -> bool:
        """Insert or replace the device's row. A ``pending`` row never replaces one that is
        paired or revoked (two transactions racing on a new device): ``False`` then, and
        nothing written."""

    @abc.abstractmethod
    def prune_pending(self, keep: int) -> int:
        """Delete all but the ``keep`` most recently requested pending pairings; return how
        many were deleted (unauthenticated connects cannot grow the table without bound)."""
