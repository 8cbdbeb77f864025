"""``store.instances``, ``store.run_owners``, ``store.handoffs`` and ``store.claims`` (and their
``tx.`` sides) in SQL shared by the backends (see :mod:`._dialect`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from clawline.records.instance import InstanceClaim, InstanceRecord, RunHandoff, RunOwner, RunStop
from clawline.store._dialect import Dialect, Execute
from clawline.store.instances import (
    ClaimReads,
    ClaimWrites,
    HandoffReads,
    HandoffWrites,
    InstanceReads,
    InstanceWrites,
    RunOwnerReads,
    RunOwnerWrites,
    RunStopWrites,
)
from clawline.types import JSONObject

_INSTANCE_COLUMNS = tuple(field.name for field in fields(InstanceRecord))
_SELECT_INSTANCES = f"SELECT {', '.join(_INSTANCE_COLUMNS)} FROM gateway_instances"
_RUNNING = "stopped_at IS NULL AND recovered_at IS NULL"
_OWNER_COLUMNS = "run_id, session_key, instance_id, accepted_at"
_CHUNK = 500
"""Keys per ``IN (…)`` list."""


def _instance(row: Sequence[Any]) -> InstanceRecord:
    return InstanceRecord(**dict(zip(_INSTANCE_COLUMNS, row, strict=True)))


class _Sql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _rows(self, statement: str, params: Sequence[Any]) -> list[Any]:
        return self._execute(self._d.q(statement), list(params))


class SqlInstanceReads(_Sql, InstanceReads):
    def get(self, instance_id: str) -> InstanceRecord | None:
        rows = self._rows(f"{_SELECT_INSTANCES} WHERE instance_id = ?", [instance_id])
        return _instance(rows[0]) if rows else None

    def running(self) -> list[InstanceRecord]:
        rows = self._rows(
            f"{_SELECT_INSTANCES} WHERE {_RUNNING} ORDER BY started_at, instance_id", []
        )
        return [_instance(row) for row in rows]

    def recent(self, limit: int) -> list[InstanceRecord]:
        rows = self._rows(
            f"{_SELECT_INSTANCES} ORDER BY started_at DESC, instance_id LIMIT ?", [limit]
        )
        return [_instance(row) for row in rows]


class SqlInstanceWrites(_Sql, InstanceWrites):
    def register(self, record: InstanceRecord) -> None:
        self._rows(
            f"INSERT INTO gateway_instances ({', '.join(_INSTANCE_COLUMNS)})"
            f" VALUES ({self._d.marks(len(_INSTANCE_COLUMNS))})",
            [getattr(record, column) for column in _INSTANCE_COLUMNS],
        )

    def heartbeat(self, instance_id: str, at: int, url: str | None) -> bool:
        rows = self._rows(
            "UPDATE gateway_instances SET heartbeat_at = ?, url = coalesce(?, url)"
            f" WHERE instance_id = ? AND {_RUNNING} RETURNING instance_id",
            [at, url, instance_id],
        )
        return bool(rows)

    def stop(self, instance_id: str, at: int) -> None:
        self._rows(
            "UPDATE gateway_instances SET stopped_at = ?"
            " WHERE instance_id = ? AND stopped_at IS NULL",
            [at, instance_id],
        )

    def take_over(self, instance_id: str, by: str, at: int, *, lapsed_only: bool = True) -> bool:
        lapsed = " AND heartbeat_at + lease_ms < ?" if lapsed_only else ""
        params: list[Any] = [at, by, instance_id]
        if lapsed_only:
            params.append(at)
        rows = self._rows(
            "UPDATE gateway_instances SET recovered_at = ?, recovered_by = ?"
            f" WHERE instance_id = ? AND {_RUNNING}{lapsed} RETURNING instance_id",
            params,
        )
        return bool(rows)


def _among(column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
    return f"{column} IN ({', '.join('?' for _ in values)})", list(values)


RUNNING_INSTANCES = f"SELECT instance_id FROM gateway_instances WHERE {_RUNNING}"
"""The ids of the running instances, for ``… instance_id IN (…)`` (evaluated per query)."""


class SqlRunOwnerReads(_Sql, RunOwnerReads):
    def unanswered(self, limit: int) -> list[RunOwner]:
        rows = self._rows(
            f"SELECT {_OWNER_COLUMNS} FROM run_owners WHERE instance_id NOT IN"
            f" ({RUNNING_INSTANCES}) ORDER BY accepted_at, run_id LIMIT ?",
            [limit],
        )
        return [RunOwner(row[0], row[1], row[2], int(row[3])) for row in rows]

    def _answered(self, column: str, values: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(values), _CHUNK):
            wanted, params = _among(column, values[start : start + _CHUNK])
            rows = self._rows(
                f"SELECT DISTINCT {column} FROM run_owners WHERE {wanted}"
                f" AND instance_id IN ({RUNNING_INSTANCES})",
                params,
            )
            found.update(row[0] for row in rows)
        return found

    def answered_sessions(self, session_keys: Sequence[str]) -> set[str]:
        return self._answered("session_key", session_keys)

    def answered_runs(self, run_ids: Sequence[str]) -> set[str]:
        return self._answered("run_id", run_ids)

    def counts(self) -> dict[str, int]:
        rows = self._rows("SELECT instance_id, count(*) FROM run_owners GROUP BY instance_id", [])
        return {row[0]: int(row[1]) for row in rows}

    def of_session(self, session_key: str) -> list[RunOwner]:
        rows = self._rows(
            f"SELECT {_OWNER_COLUMNS} FROM run_owners WHERE session_key = ?"
            f" AND instance_id IN ({RUNNING_INSTANCES}) ORDER BY accepted_at, run_id",
            [session_key],
        )
        return [RunOwner(row[0], row[1], row[2], int(row[3])) for row in rows]


class SqlRunOwnerWrites(_Sql, RunOwnerWrites):
    def __init__(self, execute: Execute, dialect: Dialect, instance_id: str | None) -> None:
        super().__init__(execute, dialect)
        self._instance_id = instance_id or ""

    def add(self, run_id: str, session_key: str, at: int, instance_id: str | None = None) -> None:
        self._rows(
            f"INSERT INTO run_owners ({_OWNER_COLUMNS}) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO UPDATE SET instance_id = excluded.instance_id",
            [run_id, session_key, instance_id or self._instance_id, at],
        )

    def session_owner(self, session_key: str, *, besides: str | None) -> str | None:
        rows = self._rows(
            "SELECT instance_id FROM run_owners WHERE session_key = ? AND instance_id <> ?"
            f" AND instance_id IN ({RUNNING_INSTANCES}) ORDER BY accepted_at, run_id LIMIT 1",
            [session_key, besides or ""],
        )
        return str(rows[0][0]) if rows else None

    def remove(self, run_ids: Sequence[str]) -> int:
        removed = 0
        for start in range(0, len(run_ids), _CHUNK):
            wanted, params = _among("run_id", run_ids[start : start + _CHUNK])
            removed += len(
                self._rows(f"DELETE FROM run_owners WHERE {wanted} RETURNING run_id", params)
            )
        return removed


_HANDOFF_COLUMNS = "id, run_id, session_key, target_instance, created_at, request"


def _json(value: JSONObject) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _HandoffSql(_Sql):
    def _handoffs(self, statement: str, params: Sequence[Any]) -> list[RunHandoff]:
        return [
            RunHandoff(int(row[0]), row[1], row[2], row[3], int(row[4]), json.loads(row[5]))
            for row in self._rows(statement, params)
        ]


class SqlHandoffReads(_HandoffSql, HandoffReads):
    def pending_for(self, instance_id: str, limit: int) -> list[RunHandoff]:
        return self._handoffs(
            f"SELECT {_HANDOFF_COLUMNS} FROM run_handoffs WHERE target_instance = ?"
            " ORDER BY id LIMIT ?",
            [instance_id, limit],
        )


class SqlHandoffWrites(_HandoffSql, HandoffWrites):
    def add(
        self, run_id: str, session_key: str, target_instance: str, at: int, request: JSONObject
    ) -> None:
        self._rows(
            "INSERT INTO run_handoffs (run_id, session_key, target_instance, created_at, request)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                run_id,
                session_key,
                target_instance,
                at,
                json.dumps(request, separators=(",", ":"), ensure_ascii=False),
            ],
        )

    def claim(self, instance_id: str, limit: int) -> list[RunHandoff]:
        claimed = self._handoffs(
            f"DELETE FROM run_handoffs WHERE id IN (SELECT id FROM run_handoffs"
            f" WHERE target_instance = ? ORDER BY id LIMIT ?{self._d.skip_locked})"
            f" RETURNING {_HANDOFF_COLUMNS}",
            [instance_id, limit],
        )
        return sorted(claimed, key=lambda handoff: handoff.id)

    def drop_unanswered(self) -> list[RunHandoff]:
        return self._handoffs(
            f"DELETE FROM run_handoffs WHERE target_instance NOT IN ({RUNNING_INSTANCES})"
            f" RETURNING {_HANDOFF_COLUMNS}",
            [],
        )


_STOP_COLUMNS = "id, session_key, run_id, target_instance, created_at"


class SqlRunStopWrites(_Sql, RunStopWrites):
    def add(self, session_key: str, run_id: str | None, target_instance: str, at: int) -> None:
        self._rows(
            "INSERT INTO run_stops (session_key, run_id, target_instance, created_at)"
            " VALUES (?, ?, ?, ?)",
            [session_key, run_id, target_instance, at],
        )

    def claim(self, instance_id: str, limit: int) -> list[RunStop]:
        rows = self._rows(
            "DELETE FROM run_stops WHERE id IN (SELECT id FROM run_stops"
            f" WHERE target_instance = ? ORDER BY id LIMIT ?{self._d.skip_locked})"
            f" RETURNING {_STOP_COLUMNS}",
            [instance_id, limit],
        )
        stops = [RunStop(int(row[0]), row[1], row[2], row[3], int(row[4])) for row in rows]
        return sorted(stops, key=lambda stop: stop.id)

    def drop_unanswered(self) -> int:
        rows = self._rows(
            f"DELETE FROM run_stops WHERE target_instance NOT IN ({RUNNING_INSTANCES})"
            " RETURNING id",
            [],
        )
        return len(rows)


_CLAIM_COLUMNS = "kind, name, instance_id, claimed_at"


class _ClaimSql(_Sql):
    def _claims(self, statement: str, params: Sequence[Any]) -> list[InstanceClaim]:
        return [
            InstanceClaim(row[0], row[1], row[2], int(row[3]))
            for row in self._rows(statement, params)
        ]


class SqlClaimReads(_ClaimSql, ClaimReads):
    def held_by(self, instance_id: str, kind: str) -> list[InstanceClaim]:
        return self._claims(
            f"SELECT {_CLAIM_COLUMNS} FROM instance_claims WHERE instance_id = ? AND kind = ?"
            " ORDER BY claimed_at, name",
            [instance_id, kind],
        )

    def unanswered(self, kind: str, limit: int) -> list[InstanceClaim]:
        return self._claims(
            f"SELECT {_CLAIM_COLUMNS} FROM instance_claims WHERE kind = ?"
            f" AND instance_id NOT IN ({RUNNING_INSTANCES}) ORDER BY claimed_at, name LIMIT ?",
            [kind, limit],
        )

    def holder(self, kind: str, name: str) -> str | None:
        rows = self._rows(
            "SELECT instance_id FROM instance_claims WHERE kind = ? AND name = ?"
            f" AND instance_id IN ({RUNNING_INSTANCES})",
            [kind, name],
        )
        return str(rows[0][0]) if rows else None

    def counts(self) -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {}
        rows = self._rows(
            "SELECT instance_id, kind, count(*) FROM instance_claims GROUP BY instance_id, kind",
            [],
        )
        for instance_id, kind, count in rows:
            found.setdefault(instance_id, {})[kind] = int(count)
        return found


class SqlClaimWrites(_ClaimSql, ClaimWrites):
    def __init__(self, execute: Execute, dialect: Dialect, instance_id: str | None) -> None:
        super().__init__(execute, dialect)
        self._instance_id = instance_id or ""

    def take(self, kind: str, name: str, at: int) -> bool:
        # One statement decides: a second instance's concurrent take finds the row and, its
        # holder running, leaves it.
        rows = self._rows(
            f"INSERT INTO instance_claims ({_CLAIM_COLUMNS}) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (kind, name) DO UPDATE SET instance_id = excluded.instance_id,"
            " claimed_at = excluded.claimed_at"
            " WHERE instance_claims.instance_id = excluded.instance_id"
            f" OR instance_claims.instance_id NOT IN ({RUNNING_INSTANCES})"
            " RETURNING instance_id",
            [kind, name, self._instance_id, at],
        )
        return bool(rows)

    def release(self, kind: str, names: Sequence[str]) -> int:
        released = 0
        for start in range(0, len(names), _CHUNK):
            wanted, params = _among("name", names[start : start + _CHUNK])
            released += len(
                self._rows(
                    f"DELETE FROM instance_claims WHERE kind = ? AND instance_id = ? AND {wanted}"
                    " RETURNING name",
                    [kind, self._instance_id, *params],
                )
            )
        return released
