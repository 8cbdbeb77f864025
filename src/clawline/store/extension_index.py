"""Which parts of a session's ``pluginExtensions`` the reverse-lookup index holds.

Every top-level string field of every extension value is indexed as a row ``(pluginId,
namespace, field, value)``, so "which session has ``appThreadKey == "thread-main"`` in its
``xworkmate.sessionMapping``" is one index lookup, not a scan of every session.

Bounds keep each row indexable in every backend (PostgreSQL's B-tree refuses entries above
~2.7 kB): values up to :data:`MAX_INDEXED_VALUE_CHARS` characters, plugin ids, namespaces and
field names up to :data:`MAX_INDEXED_NAME_CHARS`, and at most :data:`MAX_INDEXED_ROW_BYTES`
UTF-8 bytes for the four together. What exceeds them is stored as usual but not indexed.
"""

from __future__ import annotations

from collections.abc import Mapping

from clawline.store.base import ExtensionIndexRow
from clawline.types import JSON

MAX_INDEXED_VALUE_CHARS = 512
MAX_INDEXED_NAME_CHARS = 128
MAX_INDEXED_ROW_BYTES = 2048


def _indexable(row: ExtensionIndexRow) -> bool:
    if len(row.value) > MAX_INDEXED_VALUE_CHARS:
        return False
    if any(len(name) > MAX_INDEXED_NAME_CHARS for name in row[:3]):
        return False
    return sum(len(part.encode()) for part in row) <= MAX_INDEXED_ROW_BYTES


def extension_index_rows(
    extensions: Mapping[str, Mapping[str, JSON]],
) -> list[ExtensionIndexRow]:
    """The index rows of one session's extensions, in a stable order."""
    rows: list[ExtensionIndexRow] = []
    for plugin_id in sorted(extensions):
        spaces = extensions[plugin_id]
        for namespace in sorted(spaces):
            value = spaces[namespace]
            if not isinstance(value, Mapping):
                continue
            for field in sorted(value):
                item = value[field]
                if isinstance(item, str):
                    row = ExtensionIndexRow(plugin_id, namespace, field, item)
                    if _indexable(row):
                        rows.append(row)
    return rows
