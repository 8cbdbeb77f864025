"""``store.channel_cursors`` and ``tx.channel_cursors`` in SQL shared by the backends."""

from __future__ import annotations

from clawline.store._dialect import Dialect, Execute
from clawline.store.channel_cursors import ChannelCursorReads, ChannelCursorWrites


class SqlChannelCursorReads(ChannelCursorReads):
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def get(self, channel: str, account_id: str) -> str | None:
        rows = self._execute(
            self._d.q("SELECT position FROM channel_cursors WHERE channel = ? AND account_id = ?"),
            [channel, account_id],
        )
        return str(rows[0][0]) if rows else None


class SqlChannelCursorWrites(ChannelCursorWrites):
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def save(self, channel: str, account_id: str, position: str, at: int) -> None:
        self._execute(
            self._d.q(
                "INSERT INTO channel_cursors (channel, account_id, position, updated_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (channel, account_id)"
                " DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at"
            ),
            [channel, account_id, position, at],
        )
