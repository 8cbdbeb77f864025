"""Writing only what changed: the column values a transaction knows a row to hold, and the
``UPDATE`` that sets just the columns whose values differ.

SQLite rewrites every index that holds a column named in an ``UPDATE``'s ``SET`` list, whether
or not the value changed. The wide tables (``sessions``, ``tasks``, ``subagent_runs``) carry
ten or more indexes each, so a whole-row ``UPDATE`` dirties a dozen pages that ``COMMIT`` then
writes to the WAL: measured on a table with thirteen indexes, ~440 µs per transaction against
~25 µs when only an unindexed column is named. PostgreSQL decides HOT updates by comparing
values and is less affected, but is spared the work of binding and comparing what did not
change.

A row is known only inside the transaction that read or wrote it (it holds the row's lock, or
SQLite's write lock, until it ends), so a :class:`KnownRows` lives and dies with one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any


class KnownRows:
    """The values, in the table's column order, of rows a transaction read or wrote, by key."""

    def __init__(self) -> None:
        self._values: dict[str, Sequence[Any]] = {}

    def remember(self, key: str, values: Sequence[Any]) -> None:
        self._values[key] = values

    def forget(self, key: str | None = None) -> None:
        """Forget ``key``'s row, or every row (``None``): a statement changed them in a way
        this record does not follow."""
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)

    def changed(self, key: str, values: Sequence[Any]) -> list[int] | None:
        """Positions in ``values`` that differ from what ``key``'s row is known to hold;
        ``None`` when the row is not known (write every column)."""
        known = self._values.get(key)
        if known is None or len(known) != len(values):
            return None
        return [index for index, value in enumerate(values) if known[index] != value]


@functools.lru_cache(maxsize=2048)
def update_statement(table: str, columns: tuple[str, ...], key_column: str) -> str:
    """``UPDATE table SET c1 = ?, … WHERE key_column = ?`` (``?`` placeholders)."""
    assignments = ", ".join(f"{column} = ?" for column in columns)
    return f"UPDATE {table} SET {assignments} WHERE {key_column} = ?"


def update_changed(
    known: KnownRows,
    execute: Callable[[str, list[Any]], object],
    table: str,
    columns: Sequence[str],
    values: Sequence[Any],
) -> None:
    """Update the row of ``table`` whose key (``columns[0]``) is ``values[0]`` to ``values``:
    only the columns that changed since ``known`` saw it, every column when it did not,
    nothing when nothing changed; then know the row as ``values``. ``execute`` runs a ``?``
    statement."""
    key = values[0]
    changed = known.changed(key, values)
    if changed is None:
        changed = list(range(1, len(columns)))
    if changed:
        statement = update_statement(table, tuple(columns[i] for i in changed), columns[0])
        execute(statement, [*(values[i] for i in changed), key])
    known.remember(key, values)
