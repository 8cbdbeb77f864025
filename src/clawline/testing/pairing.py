"""Pairing a device identity straight in the store, for tests of a ``require_device`` gateway.

:func:`pair_device` goes the way an operator would — a pending request, then the approval of
its code — only without a gateway in between.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.gateway.device import DeviceIdentity
from clawline.pairing.registry import PairingRegistry
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.records.pairing import DeviceClaim, DevicePairing
from clawline.store.base import Store

__all__ = ["pair_device"]


def pair_device(
    store: Store,
    identity: DeviceIdentity,
    scopes: Sequence[str] = (READ, WRITE, ADMIN),
    *,
    client_id: str = "cli",
    clock: Clock = SYSTEM_CLOCK,
) -> DevicePairing:
    """Pair ``identity`` with a grant of ``scopes`` (it asked for the same)."""
    registry = PairingRegistry(store=store, clock=clock)
    claim = DeviceClaim(
        device_id=identity.device_id,
        public_key=identity.public_key,
        client_id=client_id,
        client_mode="cli",
        platform=sys.platform,
        display_name=None,
        requested_scopes=tuple(scopes),
    )
    admission = registry.admit(claim)
    if admission.code is None:  # already paired: change its grant
        return registry.approve_device(identity.device_id, scopes)
    return registry.approve_code(admission.code)
