"""``store.pairings`` and ``tx.pairings`` in SQL shared by the backends (see :mod:`._dialect`).

Scopes are stored as one comma-joined text (operator scope names hold no commas).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from clawline.records.pairing import PENDING, DevicePairing
from clawline.store._dialect import Dialect, Execute
from clawline.store.pairing import PairingReads, PairingWrites

PAIRING_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(DevicePairing))
_SCOPE_COLUMNS = ("requested_scopes", "granted_scopes")
_SELECT = f"SELECT {', '.join(PAIRING_COLUMNS)} FROM device_pairings"
_UPDATES = ", ".join(f"{column} = excluded.{column}" for column in PAIRING_COLUMNS[1:])
_SAVE = (
    f"INSERT INTO device_pairings ({', '.join(PAIRING_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in PAIRING_COLUMNS)})"
    f" ON CONFLICT (device_id) DO UPDATE SET {_UPDATES}"
    f" WHERE device_pairings.status = '{PENDING}' OR excluded.status <> '{PENDING}'"
    " RETURNING device_id"
)
_CHUNK = 500


def _from_row(row: Sequence[Any]) -> DevicePairing:
    values = dict(zip(PAIRING_COLUMNS, row, strict=True))
    for column in _SCOPE_COLUMNS:
        values[column] = tuple(scope for scope in str(values[column]).split(",") if scope)
    return DevicePairing(**values)


def _params(pairing: DevicePairing) -> list[Any]:
    values = []
    for column in PAIRING_COLUMNS:
        value = getattr(pairing, column)
        values.append(",".join(value) if column in _SCOPE_COLUMNS else value)
    return values


def _prefix_range(prefix: str) -> list[str]:
    """``id >= prefix AND id < prefix + U+FFFF``: an index range (ids are lower-case hex)."""
    return [prefix, prefix + "\uffff"]


class _PairingSql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _pairings(self, statement: str, params: Sequence[Any]) -> list[DevicePairing]:
        return [_from_row(row) for row in self._execute(self._d.q(statement), params)]


class SqlPairingReads(_PairingSql, PairingReads):
    def get(self, device_id: str) -> DevicePairing | None:
        found = self._pairings(f"{_SELECT} WHERE device_id = ?", [device_id])
        return found[0] if found else None

    def get_many(self, device_ids: Sequence[str]) -> dict[str, DevicePairing]:
        unique = list(dict.fromkeys(device_ids))
        found: dict[str, DevicePairing] = {}
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ", ".join("?" for _ in chunk)
            for pairing in self._pairings(f"{_SELECT} WHERE device_id IN ({marks})", chunk):
                found[pairing.device_id] = pairing
        return found

    def by_prefix(self, prefix: str, limit: int) -> list[DevicePairing]:
        return self._pairings(
            f"{_SELECT} WHERE device_id >= ? AND device_id < ? ORDER BY device_id LIMIT ?",
            [*_prefix_range(prefix), limit],
        )

    def all(self) -> list[DevicePairing]:
        return self._pairings(f"{_SELECT} ORDER BY updated_at DESC, device_id", [])


class SqlPairingWrites(_PairingSql, PairingWrites):
    def get(self, device_id: str) -> DevicePairing | None:
        found = self._pairings(f"{_SELECT} WHERE device_id = ?{self._d.for_update}", [device_id])
        return found[0] if found else None

    def by_prefix(self, prefix: str, limit: int) -> list[DevicePairing]:
        return self._pairings(
            f"{_SELECT} WHERE device_id >= ? AND device_id < ?"
            f" ORDER BY device_id LIMIT ?{self._d.for_update}",
            [*_prefix_range(prefix), limit],
        )

    def with_codes(self) -> list[DevicePairing]:
        return self._pairings(
            f"{_SELECT} WHERE status = ? AND code_hash IS NOT NULL"
            f" ORDER BY device_id{self._d.for_update}",
            [PENDING],
        )

    def save(self, pairing: DevicePairing) -> bool:
        return bool(self._execute(self._d.q(_SAVE), _params(pairing)))

    def prune_pending(self, keep: int) -> int:
        rows = self._execute(
            self._d.q(
                "DELETE FROM device_pairings WHERE status = ? AND device_id NOT IN ("
                "SELECT device_id FROM device_pairings WHERE status = ?"
                " ORDER BY requested_at DESC, device_id DESC LIMIT ?) RETURNING device_id"
            ),
            [PENDING, PENDING, keep],
        )
        return len(rows)
