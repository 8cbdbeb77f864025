"""SQL text shared by the backends: listing filters and keyset predicates.

Both SQLite and PostgreSQL understand the row-value comparison ``(a, b) < (x, y)``, which lets
the ``(updated_at desc, key desc)`` index serve every page of a keyset walk.
"""

from __future__ import annotations

from typing import Any

from clawline.store.base import PATH_SEP, Position, SessionQuery

__all__ = ["ORDER_BY", "keyset_predicate", "subtree_bounds", "where_clause"]

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
    if not query.include_global:
        conditions.append("key <> 'global'")
    if not query.include_unknown:
        conditions.append("key <> 'unknown'")
    if query.search:
        pattern = f"%{_escape_like(query.search.lower())}%"
        columns = ("key", "label", "display_name", "session_id")
        conditions.append(
            "(" + " OR ".join(f"lower({c}) LIKE {ph} ESCAPE '\\'" for c in columns) + ")"
        )
        params.extend([pattern] * len(columns))
    return conditions, params


def keyset_predicate(after: Position, ph: str) -> tuple[str, list[Any]]:
    return f"(updated_at, key) < ({ph}, {ph})", [after.updated_at, after.key]


def subtree_bounds(stored_path: str) -> tuple[str, str]:
    """Half-open range ``[low, high)`` of stored paths strictly below ``stored_path``."""
    return stored_path + PATH_SEP, stored_path + chr(ord(PATH_SEP) + 1)
