"""``store.inbox`` and ``tx.inbox`` in SQL shared by the backends (see :mod:`._dialect`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawline.records.collab import InboxItem
from clawline.store._dialect import INBOX_COLUMNS, Dialect, Execute, inbox_from_row
from clawline.store.collab import InboxReads, InboxWrites
from clawline.types import JSONObject

_SELECT = f"SELECT {', '.join(INBOX_COLUMNS)} FROM announce_inbox"
_PENDING = f"{_SELECT} WHERE requester_session_key = ? AND delivered_at IS NULL ORDER BY id"
_CHUNK = 500


class _InboxSql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _items(self, statement: str, params: Sequence[Any]) -> list[InboxItem]:
        rows = self._execute(self._d.q(statement), params)
        return [inbox_from_row(row, self._d) for row in rows]


class SqlInboxReads(_InboxSql, InboxReads):
    def get(self, item_id: int) -> InboxItem | None:
        found = self._items(f"{_SELECT} WHERE id = ?", [item_id])
        return found[0] if found else None

    def by_run(self, run_id: str) -> InboxItem | None:
        found = self._items(f"{_SELECT} WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def pending_for(self, requester_session_key: str) -> list[InboxItem]:
        return self._items(_PENDING, [requester_session_key])

    def requesters_with_pending(self) -> list[str]:
        rows = self._execute(
            "SELECT requester_session_key, min(id) AS first FROM announce_inbox"
            " WHERE delivered_at IS NULL GROUP BY requester_session_key ORDER BY first",
            [],
        )
        return [row[0] for row in rows]

    def delivered_since(self, since: int, limit: int) -> list[InboxItem]:
        return self._items(
            f"{_SELECT} WHERE delivered_at >= ? AND delivery_seq IS NOT NULL ORDER BY id LIMIT ?",
            [since, limit],
        )


class SqlInboxWrites(_InboxSql, InboxWrites):
    def add(
        self,
        *,
        requester_session_key: str,
        child_session_key: str,
        run_id: str,
        status: str,
        payload: JSONObject,
        created_at: int,
        task_id: str | None = None,
    ) -> InboxItem | None:
        rows = self._execute(
            self._d.q(
                "INSERT INTO announce_inbox (requester_session_key, child_session_key, run_id,"
                " task_id, status, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id) DO NOTHING RETURNING id"
            ),
            [
                requester_session_key,
                child_session_key,
                run_id,
                task_id,
                status,
                self._d.json_in(payload),
                created_at,
            ],
        )
        if not rows:
            return None
        return InboxItem(
            id=int(rows[0][0]),
            requester_session_key=requester_session_key,
            child_session_key=child_session_key,
            run_id=run_id,
            task_id=task_id,
            status=status,
            payload=payload,
            created_at=created_at,
        )

    def pending_for(self, requester_session_key: str) -> list[InboxItem]:
        return self._items(f"{_PENDING}{self._d.for_update}", [requester_session_key])

    def mark_delivered(
        self, item_ids: Sequence[int], at: int, delivery_seq: int | None = None
    ) -> list[int]:
        marked: list[int] = []
        unique = sorted(set(item_ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = self._execute(
                self._d.q(
                    "UPDATE announce_inbox SET delivered_at = ?, delivery_seq = ?"
                    f" WHERE id IN ({self._d.marks(len(chunk))}) AND delivered_at IS NULL"
                    " RETURNING id"
                ),
                [at, delivery_seq, *chunk],
            )
            marked.extend(int(row[0]) for row in rows)
        return sorted(marked)

    def retarget(self, item_ids: Sequence[int], requester_session_key: str) -> int:
        changed = 0
        unique = sorted(set(item_ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = self._execute(
                self._d.q(
                    "UPDATE announce_inbox SET requester_session_key = ?"
                    f" WHERE id IN ({self._d.marks(len(chunk))}) AND delivered_at IS NULL"
                    " RETURNING id"
                ),
                [requester_session_key, *chunk],
            )
            changed += len(rows)
        return changed

    def prune_delivered(self, before: int, limit: int) -> int:
        rows = self._execute(
            self._d.q(
                "DELETE FROM announce_inbox WHERE id IN (SELECT id FROM announce_inbox"
                " WHERE delivered_at < ? ORDER BY delivered_at, id LIMIT ?) RETURNING id"
            ),
            [before, limit],
        )
        return len(rows)
