"""The pairing rules over ``store.pairings``: admit a connecting device, approve, revoke, list.

- :meth:`PairingRegistry.admit` (the gateway, for each verified device on a ``require_device``
  gateway): a paired device gets its requested scopes capped by its grant
  (:func:`~clawline.pairing.scopes.cap_scopes`); a revoked one is refused
  (:class:`~clawline.records.pairing.DeviceRevoked`); any other gets no scopes and a new pending
  request with a fresh one-time code, which replaces the code of its previous request.
- :meth:`approve_code` / :meth:`approve_device` (``clawline devices approve``) pair a pending
  device, granting what it asked for or, with ``scopes``, less. A code is single-use and
  expires after :data:`CODE_TTL_MS`; it is compared with every live code's digest in constant
  time.
- :meth:`revoke` (``clawline devices revoke``) refuses the device from now on.

Every change is one transaction; a refused change writes nothing.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from clawline.errors import InvalidInput
from clawline.pairing.codes import code_digest, new_code, normalize_code
from clawline.pairing.scopes import OPERATOR_SCOPES, cap_scopes, implied_scopes, known_scopes
from clawline.records.pairing import (
    PAIRED,
    PENDING,
    REVOKED,
    DeviceClaim,
    DevicePairing,
    DeviceRevoked,
    InvalidPairingCode,
    PairingNotFound,
)

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.store.base import Store, StoreTransaction

CODE_TTL_MS = 10 * 60_000
MAX_PENDING = 256
"""Pending requests kept; older ones are dropped (their devices simply ask again)."""
MIN_PREFIX = 6
"""Shortest device id prefix accepted where a device is named."""

_HEX = re.compile(r"[0-9a-f]+")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


@dataclass(frozen=True, slots=True)
class Admission:
    """What a connecting device gets."""

    scopes: frozenset[str]
    pairing: DevicePairing
    code: str | None = None
    """The new pairing code when the device is not paired (for the gateway to print)."""


@dataclass(frozen=True, slots=True)
class Revocation:
    pairing: DevicePairing
    changed: bool
    """``False`` when the device was already revoked."""


def short_id(device_id: str) -> str:
    """The first 12 hex digits of a device id, for humans (the whole id is 64)."""
    return f"{device_id[:12]}…"


def _clean(text: str, limit: int = 48) -> str:
    """A client-supplied value made safe for one log line."""
    return _UNPRINTABLE.sub("?", text)[:limit] or "?"


def request_line(pairing: DevicePairing, code: str) -> str:
    """The line a gateway logs for a new pairing request."""
    scopes = ",".join(pairing.requested_scopes) or "no scopes"
    who = f"{_clean(pairing.client_id)} on {_clean(pairing.platform)}"
    return (
        f"pairing request from device {short_id(pairing.device_id)} ({who}) for {scopes}: "
        f"approve with: clawline devices approve {code}"
    )


def _grant(pairing: DevicePairing, scopes: Sequence[str] | None) -> tuple[str, ...]:
    """The scopes an approval grants: the request, or ``scopes`` when they only narrow it."""
    if scopes is None:
        return pairing.requested_scopes
    chosen = tuple(dict.fromkeys(scope.strip() for scope in scopes if scope.strip()))
    if not chosen:
        raise InvalidInput("no scopes to grant: name at least one (or revoke the device)")
    for scope in chosen:
        if scope not in OPERATOR_SCOPES:
            raise InvalidInput(
                f"unknown scope {scope[:64]!r} (operator scopes: {', '.join(OPERATOR_SCOPES)})"
            )
    covered = implied_scopes(pairing.requested_scopes)
    beyond = [scope for scope in chosen if scope not in covered]
    if beyond:
        asked = ", ".join(pairing.requested_scopes) or "no scopes"
        raise InvalidInput(
            f"cannot grant {', '.join(beyond)}: device {short_id(pairing.device_id)} asked "
            f"for {asked} (--scopes can only narrow a request)"
        )
    return chosen


class PairingRegistry:
    def __init__(self, *, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    # --- the gateway ---------------------------------------------------------------------

    def admit(self, claim: DeviceClaim) -> Admission:
        """Decide a verified device's scopes; raise :class:`DeviceRevoked` for a revoked one."""
        current = self.store.pairings.get(claim.device_id)
        decided = self._decided(claim, current)
        if decided is not None:
            return decided
        secret = self.store.secret()  # before the transaction: it may write the secret
        code = new_code()
        now = self.clock.now_ms()
        with self.store.transaction() as tx:
            current = tx.pairings.get(claim.device_id)
            decided = self._decided(claim, current)
            if decided is not None:
                return decided
            pending = DevicePairing(
                device_id=claim.device_id,
                public_key=claim.public_key,
                status=PENDING,
                client_id=claim.client_id,
                client_mode=claim.client_mode,
                platform=claim.platform,
                display_name=claim.display_name,
                requested_scopes=known_scopes(claim.requested_scopes),
                granted_scopes=(),
                created_at=current.created_at if current is not None else now,
                requested_at=now,
                updated_at=now,
                code_hash=code_digest(secret, normalize_code(code)),
                code_expires_at=now + CODE_TTL_MS,
            )
            if not tx.pairings.save(pending):  # paired or revoked meanwhile
                return self._decided(claim, tx.pairings.get(claim.device_id)) or Admission(
                    frozenset(), pending
                )
            tx.pairings.prune_pending(MAX_PENDING)
        return Admission(scopes=frozenset(), pairing=pending, code=code)

    @staticmethod
    def _decided(claim: DeviceClaim, current: DevicePairing | None) -> Admission | None:
        if current is None or current.status == PENDING:
            return None
        if current.status == REVOKED:
            raise DeviceRevoked(
                f"device pairing revoked: device {short_id(claim.device_id)} may not connect "
                "(a revoked device identity cannot be paired again)"
            )
        scopes = cap_scopes(claim.requested_scopes, current.granted_scopes)
        return Admission(scopes=scopes, pairing=current)

    def current(self, device_ids: Sequence[str]) -> dict[str, DevicePairing]:
        """The stored pairings of ``device_ids`` (the gateway's re-check of open connections)."""
        return self.store.pairings.get_many(device_ids)

    # --- operators -----------------------------------------------------------------------

    def list(self) -> list[DevicePairing]:
        """Every device: pending first (newest request first), then paired, then revoked."""
        order = {PENDING: 0, PAIRED: 1, REVOKED: 2}
        rows = self.store.pairings.all()
        return sorted(rows, key=lambda row: (order.get(row.status, 3), -row.updated_at))

    def approve_code(self, code: str, scopes: Sequence[str] | None = None) -> DevicePairing:
        """Pair the device whose pending request printed ``code``."""
        digest = code_digest(self.store.secret(), normalize_code(code))
        now = self.clock.now_ms()
        with self.store.transaction() as tx:
            match: DevicePairing | None = None
            for pairing in tx.pairings.with_codes():
                # Every live digest is compared (no early exit), each in constant time.
                if hmac.compare_digest(pairing.code_hash or "", digest):
                    match = pairing
            if match is None:
                raise InvalidPairingCode(
                    "no pending pairing request has this code (it may be mistyped or already "
                    "used; connecting the device again prints a new one)"
                )
            if match.code_expires_at is None or match.code_expires_at <= now:
                raise InvalidPairingCode(
                    f"pairing code expired (codes last {CODE_TTL_MS // 60_000} minutes): "
                    f"connect device {short_id(match.device_id)} again for a new one"
                )
            return self._pair(tx, match, scopes, now)

    def approve_device(self, device: str, scopes: Sequence[str] | None = None) -> DevicePairing:
        """Pair a pending device (or change a paired device's grant) named by id or prefix."""
        prefix = self._prefix(device)
        now = self.clock.now_ms()
        with self.store.transaction() as tx:
            found = self._one(tx, prefix)
            if found.status == REVOKED:
                raise DeviceRevoked(
                    f"device {short_id(found.device_id)} is revoked; a revoked device identity "
                    "cannot be paired again (the client must create a new one)"
                )
            return self._pair(tx, found, scopes, now)

    def revoke(self, device: str) -> Revocation:
        """Refuse a device (pending or paired) named by id or prefix from now on."""
        prefix = self._prefix(device)
        now = self.clock.now_ms()
        with self.store.transaction() as tx:
            found = self._one(tx, prefix)
            if found.status == REVOKED:
                return Revocation(found, changed=False)
            revoked = replace(
                found,
                status=REVOKED,
                revoked_at=now,
                updated_at=now,
                code_hash=None,
                code_expires_at=None,
            )
            tx.pairings.save(revoked)
        return Revocation(revoked, changed=True)

    # --- helpers -------------------------------------------------------------------------

    @staticmethod
    def _pair(
        tx: StoreTransaction, pairing: DevicePairing, scopes: Sequence[str] | None, now: int
    ) -> DevicePairing:
        paired = replace(
            pairing,
            status=PAIRED,
            granted_scopes=_grant(pairing, scopes),
            approved_at=now,
            updated_at=now,
            code_hash=None,
            code_expires_at=None,
        )
        tx.pairings.save(paired)
        return paired

    @staticmethod
    def _prefix(device: str) -> str:
        prefix = device.strip().lower()
        if not _HEX.fullmatch(prefix) or not MIN_PREFIX <= len(prefix) <= 64:
            raise InvalidInput(
                f"not a device id: {device.strip()[:70]!r} (give the id, or at least its first "
                f"{MIN_PREFIX} hex digits, as clawline devices list shows it)"
            )
        return prefix

    @staticmethod
    def _one(tx: StoreTransaction, prefix: str) -> DevicePairing:
        found = tx.pairings.by_prefix(prefix, 2)
        if not found:
            raise PairingNotFound(f"no device matches {prefix!r} (see clawline devices list)")
        if len(found) > 1:
            raise InvalidInput(
                f"device prefix {prefix!r} is ambiguous (matches at least "
                f"{' and '.join(short_id(row.device_id) for row in found)}): give more digits"
            )
        return found[0]
