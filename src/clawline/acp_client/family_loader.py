"""A session's family as any ACP agent lists it (docs/acp-client.md).

:func:`get_session_family` rebuilds the current session and its direct native sub-agent children
from ``session/list`` alone: it initialises the connection (lazily, single-flight), checks the
``session/list`` capability, walks at most 128 pages and projects the rows. It never calls
``session/load`` and never raises: every failure is logged (a bad key at INFO, a failing agent
at WARNING, a bug at ERROR, see :mod:`clawline.failure_log`) and returned as ``{success: false,
current: null, children: [], error}``. :func:`project_family` is the pure projection.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypedDict

from clawline import keys
from clawline.acp_client.agent_calls import AcpClientError
from clawline.acp_client.link import AcpAgentConnection
from clawline.acp_client.walk import MAX_FAMILY_PAGES, js_trim, walk_session_list
from clawline.failure_log import failure_level, one_line

INVALID_PAYLOAD = "Invalid ACP session family payload"
NO_SESSION_LIST = "ACP agent does not support session/list"
_LOG_PREFIX = "[acp-chat] getSessionFamily failed: "
_KEY_PREFIX = "agent:"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

log = logging.getLogger("clawline.acp.family")


class Member(TypedDict):
    sessionKey: str
    title: str
    updatedAt: str | None
    parentSessionKey: str | None


class FamilySuccess(TypedDict):
    success: Literal[True]
    current: Member | None
    children: list[Member]


class FamilyFailure(TypedDict):
    success: Literal[False]
    current: None
    children: list[Member]
    error: str


FamilyResult = FamilySuccess | FamilyFailure


def parse_parent(row: Mapping[str, Any]) -> str | None:
    """``_meta.parentSessionId``, else ``_meta.spawnedBy``: the first that is a string, not blank,
    and not exactly the row's own ``sessionId``; returned verbatim (spaces kept)."""
    meta = row.get("_meta")
    if type(meta) is not dict:
        return None
    for name in ("parentSessionId", "spawnedBy"):
        candidate = meta.get(name)
        if type(candidate) is str and js_trim(candidate) and candidate != row.get("sessionId"):
            return candidate
    return None


def is_native_subagent(session_id: str) -> bool:
    """``agent:<agentId>:subagent:<childId>``, exactly four parts, neither id empty."""
    return keys.is_native_subagent_key(session_id)


def member_of(row: Mapping[str, Any]) -> Member:
    session_id: str = row["sessionId"]
    title = row.get("title")
    updated_at = row.get("updatedAt")
    return {
        "sessionKey": session_id,
        "title": js_trim(title) if type(title) is str and js_trim(title) else session_id,
        "updatedAt": updated_at if type(updated_at) is str else None,
        "parentSessionKey": parse_parent(row),
    }


def _instant(updated_at: str | None) -> datetime | None:
    """Timezone-aware; offset-less values are UTC. Truncated to milliseconds, the precision of
    a JavaScript Date, so the order and its ties match ClawX."""
    if updated_at is None:
        return None
    try:
        parsed = datetime.fromisoformat(updated_at)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.replace(microsecond=parsed.microsecond // 1000 * 1000)


def _order(member: Member) -> tuple[bool, timedelta, str]:
    instant = _instant(member["updatedAt"])
    age = timedelta(0) if instant is None else _EPOCH - instant
    return (instant is None, age, member["sessionKey"])


def project_family(rows: Iterable[Mapping[str, Any]], session_key: str) -> FamilySuccess:
    """The family of ``session_key`` among ``rows`` (validated ``SessionInfo`` objects)."""
    first: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        first.setdefault(row["sessionId"], row)
    current = member_of(first[session_key]) if session_key in first else None
    children = [
        member
        for session_id, row in first.items()
        if is_native_subagent(session_id)
        and (member := member_of(row))["parentSessionKey"] == session_key
    ]
    children.sort(key=_order)
    return {"success": True, "current": current, "children": children}


def _session_key_of(payload: object) -> str:
    if type(payload) is not dict:
        raise AcpClientError(INVALID_PAYLOAD)
    return _valid_key(payload.get("sessionKey"))


def _valid_key(session_key: object) -> str:
    if type(session_key) is not str or not session_key.startswith(_KEY_PREFIX):
        raise AcpClientError(INVALID_PAYLOAD)
    if len(session_key) == len(_KEY_PREFIX):
        raise AcpClientError(INVALID_PAYLOAD)
    return session_key


async def get_acp_session_family(connection: AcpAgentConnection, payload: object) -> FamilyResult:
    """The host action: ``payload`` must be a plain object ``{"sessionKey": "agent:…"}``."""
    try:
        session_key = _session_key_of(payload)
    except AcpClientError as error:
        return _failure(error, logging.INFO)
    return await get_session_family(connection, session_key)


async def get_session_family(connection: AcpAgentConnection, session_key: object) -> FamilyResult:
    """The family of ``session_key`` as the agent behind ``connection`` lists it."""
    try:
        key = _valid_key(session_key)
    except AcpClientError as error:
        return _failure(error, logging.INFO)
    try:
        features = await connection.ready()
        if not features.lists_sessions:
            raise AcpClientError(NO_SESSION_LIST)
        rows = await walk_session_list(connection, max_pages=MAX_FAMILY_PAGES)
        return project_family(rows, key)
    except Exception as error:
        return _failure(error, failure_level(error))


def _failure(error: Exception, level: int) -> FamilyFailure:
    """Log and answer a failure. A bad key is the caller's mistake (INFO); an agent that
    failed, went away or broke the protocol is WARNING; anything else is a bug (ERROR, with
    its traceback)."""
    message = str(error) or type(error).__name__
    trace = error if level >= logging.ERROR else None
    log.log(level, "%s%s", _LOG_PREFIX, one_line(message), exc_info=trace)
    return {"success": False, "current": None, "children": [], "error": message}
