"""SQL text shared by the backends: listing filters and keyset predicates.

Both SQLite and PostgreSQL understand the row-value comparison ``(a, b) < (x, y)``, which lets
the ``(updated_at desc, key desc)`` index serve every page of a keyset walk.
"""

from __future__ import annotations

from typing import Any

from clawline.store.base import PATH_SEP, SessionQuery
from clawline.store.cursor import Position

ORDER_BY = "ORDER BY updated_at DESC, key DESC"


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def where_clause(query: SessionQuery, ph: str) -> tuple[list[str], list[Any]]:
    """Conditions and parameters for ``query``; ``ph`` is the backend's placeholder."""
    conditions = ["key_kind <> 'cron_run'"]
    params: list[Any] = []
    if query.agent_id is not None:
        # global and unknown belong to no agent, whatever agent_id their row carries.
        conditions.append(f"agent_id = {ph} AND key_kind NOT IN ('global', 'unknown')")
        params.append(query.agent_id)
    if query.updated_since is not None:
        conditions.append(f"updated_at >= {ph}")
        params.append(query.updated_since)
    if query.label is not None:
        conditions.append(f"label = {ph}")
        params.append(query.label)
    if query.spawned_by is not None:
        conditions.append(f"(parent_key = {ph} OR spawned_by = {ph})")
        params.extend([query.spawned_by, query.spawned_by])
    if query.root is not None:
        conditions.append(f"root_session_key = {ph}")
        params.append(query.root)
    if query.cwd is not None:
        conditions.append(f"coalesce(spawned_cwd, spawned_workspace_dir) = {ph}")
        params.append(query.cwd)
    if query.exclude_subagents:
        conditions.append("key_kind <> 'subagent'")
    if query.exclude_cron:
        conditions.append("key_kind <> 'cron'")
    if not query.include_global:
        conditions.append("key <> 'global'")
    if not query.include_unknown:
        conditions.append("key <> 'unknown'")
    if query.status is not None:
        conditions.append(f"status = {ph}")
        params.append(query.status)
    if query.search:
        pattern = f"%{_escape_like(query.search.lower())}%"
        columns = ("key", "label", "display_name", "session_id")
        conditions.append(
            "(" + " OR ".join(f"lower({c}) LIKE {ph} ESCAPE '\\'" for c in columns) + ")"
        )
        params.extend([pattern] * len(columns))
    return conditions, params


def _excluded_kinds(query: SessionQuery) -> list[str] | None:
    """The key kinds ``query`` leaves out, when leaving kinds out is all it does."""
    if (
        query.agent_id is not None
        or query.updated_since is not None
        or query.label is not None
        or query.spawned_by is not None
        or query.root is not None
        or query.cwd is not None
        or query.search
        or query.status is not None
    ):
        return None
    kinds = ["cron_run"]
    if query.exclude_subagents:
        kinds.append("subagent")
    if query.exclude_cron:
        kinds.append("cron")
    if not query.include_global:
        kinds.append("global")  # the kind of the key 'global' and of no other key
    if not query.include_unknown:
        kinds.append("unknown")
    return kinds


def count_statement(query: SessionQuery, ph: str) -> tuple[str, list[Any]]:
    """``SELECT count(*)`` of the rows ``query`` lists.

    A query that only leaves out kinds of keys (the default listing) is counted as all rows
    minus the excluded kinds: the first is kept by SQLite's b-tree and the second is an index
    range on ``key_kind``, so neither visits every row.
    """
    kinds = _excluded_kinds(query)
    if kinds is not None:
        marks = ", ".join(ph for _ in kinds)
        return (
            "SELECT (SELECT count(*) FROM sessions)"
            f" - (SELECT count(*) FROM sessions WHERE key_kind IN ({marks}))",
            list(kinds),
        )
    conditions, params = where_clause(query, ph)
    return f"SELECT count(*) FROM sessions WHERE {' AND '.join(conditions)}", params


def keyset_predicate(after: Position, ph: str) -> tuple[str, list[Any]]:
    return f"(updated_at, key) < ({ph}, {ph})", [after.updated_at, after.key]


def subtree_bounds(stored_path: str) -> tuple[str, str]:
    """Half-open range ``[low, high)`` of stored paths strictly below ``stored_path``."""
    return stored_path + PATH_SEP, stored_path + chr(ord(PATH_SEP) + 1)
