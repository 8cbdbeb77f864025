"""The plugin-extension index in SQL shared by the backends (see :mod:`._dialect`).

Table ``session_extension_index (plugin_id, namespace, field, value, session_key)`` with an
index on the first four columns (the reverse lookup) and one on ``session_key`` (replacing a
session's rows). The catalog replaces a session's rows in the transaction that writes its
entry, so the index never disagrees with the committed entries.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawline.store._dialect import Dialect, Execute
from clawline.store.base import ExtensionIndexRow

TABLE = "session_extension_index"
LOOKUP = (
    f"SELECT session_key FROM {TABLE}"
    " WHERE plugin_id = ? AND namespace = ? AND field = ? AND value = ? ORDER BY session_key"
)
_DELETE = f"DELETE FROM {TABLE} WHERE session_key = ?"
_INSERT = (
    f"INSERT INTO {TABLE} (plugin_id, namespace, field, value, session_key) VALUES (?, ?, ?, ?, ?)"
)


def replace_session_rows(
    execute: Execute, dialect: Dialect, session_key: str, rows: Sequence[ExtensionIndexRow]
) -> None:
    execute(dialect.q(_DELETE), [session_key])
    insert = dialect.q(_INSERT)
    for row in rows:
        execute(insert, [*row, session_key])


def lookup_sessions(
    execute: Execute, dialect: Dialect, plugin_id: str, namespace: str, field: str, value: str
) -> list[str]:
    return [row[0] for row in execute(dialect.q(LOOKUP), [plugin_id, namespace, field, value])]
