"""A run idempotency key as stored (table ``run_idempotency``; the interface is
:mod:`clawline.store.idempotency`)."""

from __future__ import annotations

from dataclasses import dataclass

from clawline.types import JSONObject


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """One stored key: the run it started and, once that run ended, its outcome."""

    dedupe_key: str
    run_id: str
    session_key: str
    accepted_at: int
    outcome: JSONObject | None = None
    """``None`` while the run is live."""
    expires_at: int | None = None
    """``None`` while the run is live."""

    @property
    def live(self) -> bool:
        return self.outcome is None
