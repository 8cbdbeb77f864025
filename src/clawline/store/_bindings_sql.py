"""``store.bindings`` and ``tx.bindings`` in SQL shared by the backends (see :mod:`._dialect`).

``expires_at`` is a generated column (the earlier of the idle and max-age deadlines, ``NULL``
without limits), so expiry is one index range over active bindings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clawline.errors import Conflict
from clawline.records.collab import ThreadBinding
from clawline.store._dialect import (
    BINDING_COLUMNS,
    Dialect,
    Execute,
    binding_from_row,
    binding_params,
)
from clawline.store.collab import BindingReads, BindingWrites

_SELECT = f"SELECT {', '.join(BINDING_COLUMNS)} FROM thread_bindings"
_ACTIVE = (
    f"{_SELECT} WHERE channel = ? AND account_id = ? AND conversation_id = ? AND unbound_at IS NULL"
)
_INSERT_COLUMNS = [column for column in BINDING_COLUMNS if column != "id"]
_RETURNING = f"RETURNING {', '.join(BINDING_COLUMNS)}"


class _BindingSql:
    def __init__(self, execute: Execute, dialect: Dialect) -> None:
        self._execute = execute
        self._d = dialect

    def _bindings(self, statement: str, params: list[Any]) -> list[ThreadBinding]:
        return [binding_from_row(row) for row in self._execute(self._d.q(statement), params)]


class SqlBindingReads(_BindingSql, BindingReads):
    def get(self, binding_id: int) -> ThreadBinding | None:
        found = self._bindings(f"{_SELECT} WHERE id = ?", [binding_id])
        return found[0] if found else None

    def active(self, channel: str, account_id: str, conversation_id: str) -> ThreadBinding | None:
        found = self._bindings(_ACTIVE, [channel, account_id, conversation_id])
        return found[0] if found else None

    def for_session(self, session_key: str, *, active_only: bool = True) -> list[ThreadBinding]:
        active = " AND unbound_at IS NULL" if active_only else ""
        return self._bindings(
            f"{_SELECT} WHERE session_key = ?{active} ORDER BY bound_at DESC, id DESC",
            [session_key],
        )

    def active_for_sessions(self, session_keys: Sequence[str]) -> dict[str, list[ThreadBinding]]:
        found: dict[str, list[ThreadBinding]] = {}
        wanted = sorted(set(session_keys))
        if not wanted:
            return found
        for binding in self._bindings(
            f"{_SELECT} WHERE session_key IN ({self._d.marks(len(wanted))})"
            " AND unbound_at IS NULL ORDER BY bound_at DESC, id DESC",
            list(wanted),
        ):
            found.setdefault(binding.session_key, []).append(binding)
        return found

    def expiring(self, before: int, limit: int) -> list[ThreadBinding]:
        return self._bindings(
            f"{_SELECT} WHERE unbound_at IS NULL AND expires_at <= ?"
            " ORDER BY expires_at, id LIMIT ?",
            [before, limit],
        )


class SqlBindingWrites(_BindingSql, BindingWrites):
    def get_active(
        self, channel: str, account_id: str, conversation_id: str
    ) -> ThreadBinding | None:
        found = self._bindings(
            f"{_ACTIVE}{self._d.for_update}", [channel, account_id, conversation_id]
        )
        return found[0] if found else None

    def bind(self, binding: ThreadBinding) -> ThreadBinding:
        active = replace(binding, unbound_at=None, unbind_reason=None, id=None)
        rows = self._execute(
            self._d.q(
                f"INSERT INTO thread_bindings ({', '.join(_INSERT_COLUMNS)})"
                f" VALUES ({self._d.marks(len(_INSERT_COLUMNS))})"
                " ON CONFLICT (channel, account_id, conversation_id) WHERE unbound_at IS NULL"
                " DO NOTHING RETURNING id"
            ),
            binding_params(active),
        )
        if not rows:
            where = f"{binding.channel}/{binding.account_id}/{binding.conversation_id}"
            raise Conflict(f"conversation already bound: {where}")
        return replace(active, id=int(rows[0][0]))

    def touch(self, binding_id: int, at: int) -> bool:
        rows = self._execute(
            self._d.q(
                "UPDATE thread_bindings SET last_activity_at ="
                " CASE WHEN last_activity_at < ? THEN ? ELSE last_activity_at END"
                " WHERE id = ? AND unbound_at IS NULL RETURNING id"
            ),
            [at, at, binding_id],
        )
        return bool(rows)

    def unbind(self, binding_id: int, at: int, reason: str) -> ThreadBinding | None:
        found = self._bindings(
            "UPDATE thread_bindings SET unbound_at = ?, unbind_reason = ?"
            f" WHERE id = ? AND unbound_at IS NULL {_RETURNING}",
            [at, reason, binding_id],
        )
        return found[0] if found else None

    def unbind_session(self, session_key: str, at: int, reason: str) -> list[ThreadBinding]:
        found = self._bindings(
            "UPDATE thread_bindings SET unbound_at = ?, unbind_reason = ?"
            f" WHERE session_key = ? AND unbound_at IS NULL {_RETURNING}",
            [at, reason, session_key],
        )
        return sorted(found, key=lambda binding: (-binding.bound_at, -(binding.id or 0)))
