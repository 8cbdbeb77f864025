"""``store.pairings`` / ``tx.pairings`` and the pairing registry on each backend."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from clawline.errors import InvalidInput
from clawline.gateway.device import DeviceIdentity
from clawline.pairing.registry import CODE_TTL_MS, PairingRegistry
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.records.pairing import (
    PAIRED,
    PENDING,
    REVOKED,
    DeviceClaim,
    DevicePairing,
    DeviceRevoked,
    InvalidPairingCode,
)
from clawline.store.base import Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend


def make_pairing(device_id: str, **changes: object) -> DevicePairing:
    base = DevicePairing(
        device_id=device_id,
        public_key="pk-" + device_id[:8],
        status=PENDING,
        client_id="cli",
        client_mode="cli",
        platform="linux",
        display_name=None,
        requested_scopes=(READ, WRITE),
        granted_scopes=(),
        created_at=1_000,
        requested_at=1_000,
        updated_at=1_000,
        code_hash="ab" * 32,
        code_expires_at=2_000,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def save(store: Store, *pairings: DevicePairing) -> list[bool]:
    with store.transaction() as tx:
        return [tx.pairings.save(pairing) for pairing in pairings]


def claim(identity: DeviceIdentity, *scopes: str) -> DeviceClaim:
    return DeviceClaim(
        device_id=identity.device_id,
        public_key=identity.public_key,
        client_id="cli",
        client_mode="cli",
        platform="linux",
        display_name="laptop",
        requested_scopes=scopes or (READ, WRITE),
    )


# --- the table ----------------------------------------------------------------------------


def test_a_pairing_round_trips(store: Store) -> None:
    pending = make_pairing("a" * 64, display_name="Laptop ✓")
    paired = make_pairing(
        "b" * 64,
        status=PAIRED,
        granted_scopes=(READ,),
        approved_at=1_500,
        code_hash=None,
        code_expires_at=None,
    )
    assert save(store, pending, paired) == [True, True]
    assert store.pairings.get("a" * 64) == pending
    assert store.pairings.get("b" * 64) == paired
    assert store.pairings.get("c" * 64) is None
    assert store.pairings.get_many(["b" * 64, "c" * 64, "b" * 64]) == {"b" * 64: paired}
    with store.transaction() as tx:
        assert tx.pairings.get("a" * 64) == pending


def test_saving_replaces_the_row_and_lists_most_recent_first(store: Store) -> None:
    first, second = make_pairing("a" * 64), make_pairing("b" * 64, updated_at=1_100)
    save(store, first, second)
    assert [row.device_id for row in store.pairings.all()] == ["b" * 64, "a" * 64]
    approved = replace(first, status=PAIRED, granted_scopes=(ADMIN,), updated_at=1_200)
    assert save(store, approved) == [True]
    assert store.pairings.all() == [approved, second]


@pytest.mark.parametrize("status", [PAIRED, REVOKED])
def test_a_pending_row_never_replaces_a_decided_one(
    backend: Backend, store: Store, status: str
) -> None:
    decided = make_pairing("a" * 64, status=status, code_hash=None, code_expires_at=None)
    save(store, decided)
    before = backend.dump()
    assert save(store, make_pairing("a" * 64, requested_at=9_000)) == [False]
    assert backend.dump() == before
    assert store.pairings.get("a" * 64) == decided


def test_prefix_lookup_is_an_id_range(store: Store) -> None:
    ids = ["ab12" + "0" * 60, "ab13" + "0" * 60, "ab12" + "f" * 60, "ac" + "0" * 62]
    save(store, *(make_pairing(device_id) for device_id in ids))
    assert [row.device_id for row in store.pairings.by_prefix("ab12", 10)] == sorted(ids[::2][:2])
    assert [row.device_id for row in store.pairings.by_prefix("ab", 2)] == sorted(ids[:3])[:2]
    assert store.pairings.by_prefix("ad", 5) == []
    assert [row.device_id for row in store.pairings.by_prefix(ids[3], 5)] == [ids[3]]
    with store.transaction() as tx:
        assert [row.device_id for row in tx.pairings.by_prefix("ab1", 1)] == [sorted(ids)[0]]


def test_with_codes_lists_pending_rows_holding_a_code(store: Store) -> None:
    save(
        store,
        make_pairing("a" * 64),
        make_pairing("b" * 64, code_hash=None, code_expires_at=None),
        make_pairing("c" * 64, status=PAIRED, granted_scopes=(READ,)),
        make_pairing("d" * 64, code_expires_at=1),  # expired codes are listed too
    )
    with store.transaction() as tx:
        assert [row.device_id for row in tx.pairings.with_codes()] == ["a" * 64, "d" * 64]


def test_pruning_keeps_the_newest_pending_requests_only(store: Store) -> None:
    pending = [make_pairing(f"{n:x}" * 64, requested_at=1_000 + n) for n in range(1, 6)]
    decided = make_pairing("0" * 64, status=REVOKED, requested_at=1)
    save(store, *pending, decided)
    with store.transaction() as tx:
        assert tx.pairings.prune_pending(2) == 3
        assert tx.pairings.prune_pending(2) == 0
    remaining = {row.device_id for row in store.pairings.all()}
    assert remaining == {pending[3].device_id, pending[4].device_id, decided.device_id}


def test_a_bad_status_is_refused_by_the_table(store: Store) -> None:
    with pytest.raises(Exception, match=r"(?i)check"):
        save(store, make_pairing("a" * 64, status="approved"))
    assert store.pairings.get("a" * 64) is None


# --- the registry on the store ------------------------------------------------------------


def test_a_device_is_pending_until_its_code_is_approved(store: Store, clock: FakeClock) -> None:
    registry = PairingRegistry(store=store, clock=clock)
    identity = DeviceIdentity.generate()
    first = registry.admit(claim(identity))
    assert first.scopes == frozenset()
    assert first.code is not None
    assert first.pairing.status == PENDING
    stored = store.pairings.get(identity.device_id)
    assert stored is not None
    assert stored.code_hash is not None
    assert first.code.replace("-", "") not in stored.code_hash.upper()
    paired = registry.approve_code(first.code.lower())
    assert (paired.status, paired.granted_scopes) == (PAIRED, (READ, WRITE))
    again = registry.admit(claim(identity, ADMIN, READ))
    assert again.code is None
    assert again.scopes == frozenset({READ, WRITE})  # admin asked, read and write granted


def test_a_used_or_replaced_or_expired_code_changes_nothing(
    backend: Backend, store: Store, clock: FakeClock
) -> None:
    registry = PairingRegistry(store=store, clock=clock)
    identity = DeviceIdentity.generate()
    old = registry.admit(claim(identity)).code
    new = registry.admit(claim(identity)).code
    assert old is not None
    assert new is not None
    assert old != new
    before = backend.dump()
    with pytest.raises(InvalidPairingCode, match="no pending pairing request has this code"):
        registry.approve_code(old)
    clock.advance(CODE_TTL_MS)
    with pytest.raises(InvalidPairingCode, match="pairing code expired"):
        registry.approve_code(new)
    assert backend.dump() == before
    fresh = registry.admit(claim(identity)).code
    assert fresh is not None
    registry.approve_code(fresh)
    with pytest.raises(InvalidPairingCode, match="no pending pairing request"):
        registry.approve_code(fresh)


def test_a_grant_can_only_narrow_the_request(
    backend: Backend, store: Store, clock: FakeClock
) -> None:
    registry = PairingRegistry(store=store, clock=clock)
    identity = DeviceIdentity.generate()
    code = registry.admit(claim(identity, WRITE)).code
    assert code is not None
    before = backend.dump()
    for scopes, message in (
        ([ADMIN], "cannot grant operator.admin"),
        (["operator.root"], "unknown scope 'operator.root'"),
        ([" "], "no scopes to grant"),
    ):
        with pytest.raises(InvalidInput, match=message):
            registry.approve_code(code, scopes)
    assert backend.dump() == before
    assert registry.approve_code(code, [READ]).granted_scopes == (READ,)
    assert registry.admit(claim(identity, WRITE)).scopes == frozenset({READ})


def test_revoked_devices_are_refused_and_cannot_be_paired_again(
    backend: Backend, store: Store, clock: FakeClock
) -> None:
    registry = PairingRegistry(store=store, clock=clock)
    identity = DeviceIdentity.generate()
    registry.admit(claim(identity))
    revocation = registry.revoke(identity.device_id[:8].upper())
    assert revocation.changed
    assert revocation.pairing.status == REVOKED
    assert revocation.pairing.code_hash is None
    assert registry.revoke(identity.device_id).changed is False
    before = backend.dump()
    with pytest.raises(DeviceRevoked, match="device pairing revoked"):
        registry.admit(claim(identity))
    with pytest.raises(DeviceRevoked, match="cannot be paired again"):
        registry.approve_device(identity.device_id)
    assert backend.dump() == before


def test_one_code_is_approved_once_under_concurrency(backend: Backend, clock: FakeClock) -> None:
    registry = PairingRegistry(store=backend.store, clock=clock)
    code = registry.admit(claim(DeviceIdentity.generate())).code
    assert code is not None
    others = [PairingRegistry(store=backend.open(), clock=clock) for _ in range(4)]
    start = threading.Barrier(len(others))

    def approve(other: PairingRegistry) -> str:
        start.wait(timeout=10)
        try:
            other.approve_code(code)
        except InvalidPairingCode:
            return "refused"
        return "paired"

    with ThreadPoolExecutor(len(others)) as pool:
        outcomes = sorted(pool.map(approve, others))
    assert outcomes == ["paired", "refused", "refused", "refused"]
