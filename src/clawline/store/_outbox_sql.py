"""``store.outbox`` and ``tx.outbox`` in SQL shared by the backends (see :mod:`._dialect`).

The due scan and the next-due time are one range of the partial index
``outbox_due (next_attempt_at, id) WHERE status = 'pending'``; restricted to some channels (a
gateway among several delivers the channels it holds) they are one range per channel of
``outbox_due_by_channel (channel, next_attempt_at, id)``, merged. Listing walks the primary key.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import fields
from typing import Any

from clawline.records.outbox import OutboxItem, OutboxStatus, OutboxTarget
from clawline.store._dialect import Dialect, Execute
from clawline.store.outbox import OutboxReads, OutboxWrites

_TARGET = ("channel", "account_id", "target_to", "thread_id")
_OWN = tuple(field.name for field in fields(OutboxItem) if field.name != "target")
COLUMNS: tuple[str, ...] = (*_TARGET, *_OWN)
_COLUMNS = ", ".join(COLUMNS)
_SELECT = f"SELECT {_COLUMNS} FROM channel_outbox"
_INSERT = [column for column in COLUMNS if column != "id"]


def _item(row: Sequence[Any]) -> OutboxItem:
    values = dict(zip(COLUMNS, row, strict=True))
    target = OutboxTarget(
        channel=values.pop("channel"),
        account_id=values.pop("account_id"),
        to=values.pop("target_to"),
        thread_id=values.pop("thread_id"),
    )
    return OutboxItem(target=target, **values)


def _params(item: OutboxItem) -> list[Any]:
    target = item.target
    own = [getattr(item, name) for name in _OWN if name != "id"]
    return [target.channel, target.account_id, target.to, target.thread_id, *own]


class _OutboxSql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _items(self, statement: str, params: Sequence[Any]) -> list[OutboxItem]:
        return [_item(row) for row in self._execute(self._d.q(statement), params)]


class SqlOutboxReads(_OutboxSql, OutboxReads):
    def get(self, item_id: int) -> OutboxItem | None:
        found = self._items(f"{_SELECT} WHERE id = ?", [item_id])
        return found[0] if found else None

    def due(
        self, now: int, limit: int, channels: Collection[str] | None = None
    ) -> list[OutboxItem]:
        if channels is None:
            return self._items(
                f"{_SELECT} WHERE status = 'pending' AND next_attempt_at <= ?"
                " ORDER BY next_attempt_at, id LIMIT ?",
                [now, limit],
            )
        names = sorted(set(channels))
        if not names:
            return []
        # The first ``limit`` due rows of each channel, then the first ``limit`` of those.
        ranges = " UNION ALL ".join(
            f"SELECT {_COLUMNS} FROM ({_SELECT} WHERE status = 'pending' AND channel = ?"
            f" AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?) AS due_{index}"
            for index in range(len(names))
        )
        params: list[Any] = [value for name in names for value in (name, now, limit)]
        return self._items(f"{ranges} ORDER BY next_attempt_at, id LIMIT ?", [*params, limit])

    def next_due_at(self, channels: Collection[str] | None = None) -> int | None:
        if channels is None:
            statement = "SELECT min(next_attempt_at) FROM channel_outbox WHERE status = 'pending'"
            params: list[Any] = []
        else:
            names = sorted(set(channels))
            if not names:
                return None
            firsts = " UNION ALL ".join(
                "SELECT min(next_attempt_at) AS due_at FROM channel_outbox"
                " WHERE status = 'pending' AND channel = ?"
                for _ in names
            )
            statement = f"SELECT min(due_at) FROM ({firsts}) AS firsts"
            params = list(names)
        rows = self._execute(self._d.q(statement), params)
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def page(
        self, status: OutboxStatus | None, before_id: int | None, limit: int
    ) -> list[OutboxItem]:
        conditions: list[str] = []
        params: list[Any] = []
        if status is not None:
            conditions.append("status = ?")
            params.append(status)
        if before_id is not None:
            conditions.append("id < ?")
            params.append(before_id)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return self._items(f"{_SELECT}{where} ORDER BY id DESC LIMIT ?", [*params, limit])

    def pending_counts(self) -> dict[tuple[str, str], int]:
        rows = self._execute(
            "SELECT channel, account_id, count(*) FROM channel_outbox"
            " WHERE status = 'pending' GROUP BY channel, account_id",
            [],
        )
        return {(str(row[0]), str(row[1])): int(row[2]) for row in rows}


class SqlOutboxWrites(_OutboxSql, OutboxWrites):
    def enqueue(self, items: Sequence[OutboxItem]) -> list[OutboxItem]:
        statement = self._d.q(
            f"INSERT INTO channel_outbox ({', '.join(_INSERT)})"
            f" VALUES ({self._d.marks(len(_INSERT))})"
            f" ON CONFLICT (dedupe_key) DO NOTHING RETURNING {', '.join(COLUMNS)}"
        )
        inserted: list[OutboxItem] = []
        for item in items:
            inserted.extend(_item(row) for row in self._execute(statement, _params(item)))
        return inserted

    def _update(self, statement: str, params: Sequence[Any]) -> bool:
        return bool(self._execute(self._d.q(f"{statement} RETURNING id"), params))

    def delivered(self, item_id: int, at: int, remote_id: str | None) -> bool:
        return self._update(
            "UPDATE channel_outbox SET status = 'delivered', delivered_at = ?, remote_id = ?,"
            " attempts = attempts + 1 WHERE id = ? AND status = 'pending'",
            [at, remote_id, item_id],
        )

    def retry_later(self, item_id: int, at: int, error: str) -> bool:
        return self._update(
            "UPDATE channel_outbox SET attempts = attempts + 1, next_attempt_at = ?,"
            " last_error = ? WHERE id = ? AND status = 'pending'",
            [at, error, item_id],
        )

    def claim(self, item_id: int, now: int, until: int) -> bool:
        return self._update(
            "UPDATE channel_outbox SET next_attempt_at = ?"
            " WHERE id = ? AND status = 'pending' AND next_attempt_at <= ?",
            [until, item_id, now],
        )

    def postpone(self, item_id: int, at: int) -> bool:
        return self._update(
            "UPDATE channel_outbox SET next_attempt_at = ? WHERE id = ? AND status = 'pending'",
            [at, item_id],
        )

    def failed(self, item_id: int, at: int, error: str) -> bool:
        return self._update(
            "UPDATE channel_outbox SET status = 'failed', attempts = attempts + 1,"
            " next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'",
            [at, error, item_id],
        )
