"""``store.idempotency`` and ``tx.idempotency`` in SQL shared by the backends (see
:mod:`._dialect`). Every statement is a primary-key lookup or a range of the expiry index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawline.errors import Conflict
from clawline.records.idempotency import IdempotencyRecord
from clawline.store._dialect import Dialect, Execute
from clawline.store.idempotency import IdempotencyReads, IdempotencyWrites
from clawline.types import JSONObject

_COLUMNS = "dedupe_key, run_id, session_key, accepted_at, outcome, expires_at"
_GET = (
    f"SELECT {_COLUMNS} FROM run_idempotency"
    " WHERE dedupe_key = ? AND (expires_at IS NULL OR expires_at > ?)"
)
# A live row (expires_at NULL) never satisfies the WHERE: only an expired row is replaced.
_INSERT = (
    "INSERT INTO run_idempotency (dedupe_key, run_id, session_key, accepted_at)"
    " VALUES (?, ?, ?, ?) ON CONFLICT (dedupe_key) DO UPDATE SET run_id = excluded.run_id,"
    " session_key = excluded.session_key, accepted_at = excluded.accepted_at,"
    " outcome = NULL, expires_at = NULL WHERE run_idempotency.expires_at <= ?"
    " RETURNING dedupe_key"
)


class _KeySql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _records(self, statement: str, params: Sequence[Any]) -> list[IdempotencyRecord]:
        rows = self._execute(self._d.q(statement), params)
        return [
            IdempotencyRecord(
                dedupe_key=row[0],
                run_id=row[1],
                session_key=row[2],
                accepted_at=int(row[3]),
                outcome=None if row[4] is None else self._d.json_out(row[4]),
                expires_at=None if row[5] is None else int(row[5]),
            )
            for row in rows
        ]


class SqlIdempotencyReads(_KeySql, IdempotencyReads):
    def get(self, dedupe_key: str, now: int) -> IdempotencyRecord | None:
        found = self._records(_GET, [dedupe_key, now])
        return found[0] if found else None

    def live(self, after: str | None, limit: int) -> list[IdempotencyRecord]:
        return self._records(
            f"SELECT {_COLUMNS} FROM run_idempotency WHERE expires_at IS NULL"
            " AND dedupe_key > ? ORDER BY dedupe_key LIMIT ?",
            ["" if after is None else after, limit],
        )


class SqlIdempotencyWrites(_KeySql, IdempotencyWrites):
    def get(self, dedupe_key: str, now: int) -> IdempotencyRecord | None:
        found = self._records(f"{_GET}{self._d.for_update}", [dedupe_key, now])
        return found[0] if found else None

    def insert(
        self, *, dedupe_key: str, run_id: str, session_key: str, accepted_at: int, now: int
    ) -> None:
        rows = self._execute(
            self._d.q(_INSERT), [dedupe_key, run_id, session_key, accepted_at, now]
        )
        if not rows:
            raise Conflict(f"idempotency key already recorded: {dedupe_key}")

    def finish(self, dedupe_key: str, run_id: str, outcome: JSONObject, expires_at: int) -> bool:
        rows = self._execute(
            self._d.q(
                "UPDATE run_idempotency SET outcome = ?, expires_at = ?"
                " WHERE dedupe_key = ? AND run_id = ? AND expires_at IS NULL"
                " RETURNING dedupe_key"
            ),
            [self._d.json_in(outcome), expires_at, dedupe_key, run_id],
        )
        return bool(rows)

    def delete(self, dedupe_key: str, run_id: str) -> bool:
        rows = self._execute(
            self._d.q(
                "DELETE FROM run_idempotency WHERE dedupe_key = ? AND run_id = ?"
                " RETURNING dedupe_key"
            ),
            [dedupe_key, run_id],
        )
        return bool(rows)

    def prune(self, now: int, limit: int) -> int:
        rows = self._execute(
            self._d.q(
                "DELETE FROM run_idempotency WHERE dedupe_key IN (SELECT dedupe_key"
                " FROM run_idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)"
                " RETURNING dedupe_key"
            ),
            [now, limit],
        )
        return len(rows)
