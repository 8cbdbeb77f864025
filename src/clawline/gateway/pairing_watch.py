"""Revocation for open connections: a ``require_device`` gateway re-reads the pairings of its
connected devices every ``pairing_check_interval_s`` (default 2 s).

A connection whose device was revoked is closed (1008, ``device pairing revoked``); one whose
grant was narrowed keeps only what the new grant allows, and one whose pairing is gone keeps
none. Scopes are never widened on an open connection: a newly approved device reconnects. One
store query per round covers every connected device (none when no device is connected), so
revocation takes effect within one interval plus that query, also when ``clawline devices
revoke`` ran in another process or against another gateway's store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from clawline.pairing.scopes import cap_scopes
from clawline.records.pairing import PAIRED, REVOKED

if TYPE_CHECKING:
    from clawline.gateway.connection import Connection
    from clawline.pairing.registry import PairingRegistry
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.gateway")

REVOKED_REASON = "device pairing revoked"


async def recheck_pairings(
    connections: Iterable[Connection], *, pairings: PairingRegistry, workers: StoreWorkers
) -> int:
    """Apply the stored pairings to the open ``connections``; return how many were closed."""
    connections = [c for c in connections if c.info and c.info.device_id]
    if not connections:
        return 0
    device_ids = sorted({c.info.device_id for c in connections if c.info and c.info.device_id})
    current = await workers.run(pairings.current, device_ids)
    closed = 0
    for connection in connections:
        info = connection.info
        if info is None or info.device_id is None:
            continue
        pairing = current.get(info.device_id)
        if pairing is not None and pairing.status == REVOKED:
            connection.disconnect(REVOKED_REASON)
            closed += 1
            continue
        # Capping what the connection holds (not what it asked for) can only narrow it.
        allowed = (
            cap_scopes(info.scopes, pairing.granted_scopes)
            if pairing is not None and pairing.status == PAIRED
            else frozenset()
        )
        if allowed != info.scopes:
            log.info("%s: device pairing narrowed; scopes now %s", connection.id, sorted(allowed))
            connection.info = replace(info, scopes=allowed)
    return closed
