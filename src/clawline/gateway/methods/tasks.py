"""``tasks.list``, ``tasks.get`` and ``tasks.cancel``: the task registry over the gateway.

The methods call the gateway's :class:`~clawline.tasks.registry.TaskRegistry`
(``call.gateway.tasks``) on the store workers. Tasks are sent in their OpenClaw JSON form
(:meth:`TaskRecord.to_json`); see docs/tasks.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from clawline.errors import ClawlineError, InvalidSessionKey
from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH, normalize_agent_id
from clawline.pairing.scopes import READ, WRITE
from clawline.records.task import RUNTIMES, TASK_STATUSES, TaskNotFound, TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.tasks.lookups import MAX_TASK_LIST_LIMIT
from clawline.tasks.registry import TaskRegistry
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_ID = P.string(min_len=1, max_len=512)
_KEY = P.string(min_len=1, max_len=MAX_KEY_LENGTH)
DEFAULT_LIMIT = 100


def _canonical(catalog: SessionCatalog, key: str) -> str:
    """``key`` in canonical form when it is a valid session key, else as given."""
    try:
        return catalog.canonical(key)
    except ClawlineError:
        return key


LEDGER_STATUSES = {"completed": "succeeded"}
"""OpenClaw's task ledger names for clawline's statuses."""
SORT_BY = ("updatedAt", "endedAt")
MAX_SORTED_TASKS = 10_000
"""A listing by several statuses or by ``sortBy`` orders the matching tasks in memory; it
reads at most this many."""
LIST = {
    "status": P.anything(),
    "agentId": P.string(min_len=1, max_len=128),
    "sortBy": P.string(choices=SORT_BY),
    "runtime": P.string(choices=RUNTIMES),
    "ownerKey": _KEY,
    "sessionKey": _KEY,
    "limit": P.integer(min=1, max=MAX_TASK_LIST_LIMIT),
    "cursor": P.string(min_len=1, max_len=2048),
}
GET = {"taskId": _ID, "runId": _ID, "token": _KEY}
CANCEL = {
    "taskId": P.string(required=True, min_len=1, max_len=512),
    "reason": P.string(max_len=4096),
}


def _statuses(value: object) -> list[str] | None:
    """``status`` as a list of clawline statuses: one name or a list of them (OpenClaw's
    ``completed`` is clawline's ``succeeded``)."""
    if value is None:
        return None
    raw: list[object] = list(value) if isinstance(value, list) else [value]
    allowed = (*TASK_STATUSES, *LEDGER_STATUSES)
    names = [name for name in raw if isinstance(name, str) and name in allowed]
    if not names or len(names) != len(raw):
        choices = ", ".join(repr(choice) for choice in TASK_STATUSES)
        raise GatewayError(f"invalid tasks.list params: status must be one of {choices}")
    return list(dict.fromkeys(LEDGER_STATUSES.get(name, name) for name in names))


def _updated_at(task: TaskRecord) -> int:
    return task.last_event_at or task.ended_at or task.started_at or task.created_at


def _sort_key(sort_by: str | None) -> Callable[[TaskRecord], tuple[int, str]]:
    """Newest first by the chosen time (OpenClaw's order: a task that never ended sorts last
    by ``endedAt``); ties by task id."""
    if sort_by == "endedAt":
        return lambda task: (-(task.ended_at if task.ended_at is not None else -1), task.task_id)
    if sort_by == "updatedAt":
        return lambda task: (-_updated_at(task), task.task_id)
    return lambda task: (-task.created_at, task.task_id)


def _offset_of(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if cursor.startswith("o") and cursor[1:].isdigit():
        return int(cursor[1:])
    raise GatewayError("invalid or expired tasks.list cursor; restart pagination without a cursor")


def _sorted_page(
    registry: TaskRegistry,
    statuses: list[str | None],
    sort_by: str | None,
    limit: int,
    cursor: str | None,
    **filters: str | None,
) -> JSONObject:
    """Every matching task (up to :data:`MAX_SORTED_TASKS`) in the chosen order, paged by an
    offset cursor (``o<offset>``)."""
    offset = _offset_of(cursor)
    found: dict[str, TaskRecord] = {}
    for status in statuses:
        after: str | None = None
        while len(found) < MAX_SORTED_TASKS:
            page = registry.list(status=status, limit=MAX_TASK_LIST_LIMIT, cursor=after, **filters)
            found.update((task.task_id, task) for task in page.tasks)
            after = page.next_cursor
            if after is None:
                break
    ordered = sorted(found.values(), key=_sort_key(sort_by))
    tasks: list[JSON] = [task.to_json() for task in ordered[offset : offset + limit]]
    following = offset + len(tasks)
    return {
        "tasks": tasks,
        "count": len(tasks),
        "nextCursor": f"o{following}" if following < len(ordered) else None,
    }


@methods.method("tasks.list", scope=READ, schema=LIST)
async def tasks_list(call: Call) -> JSON:
    """Tasks newest first: ``{tasks, count, nextCursor}``. ``sessionKey`` matches tasks the
    session requested or runs as the child; ``agentId`` the tasks of one agent (ignored with
    a ``sessionKey``, as OpenClaw does). Several statuses or a ``sortBy`` order the matching
    tasks in memory and page them by offset."""
    params = call.params
    gateway = call.gateway
    statuses = _statuses(params.get("status"))
    session_key = params.get("sessionKey")
    if session_key is not None:
        session_key = _canonical(gateway.catalog, session_key)
    agent_id = params.get("agentId")
    if agent_id is not None:
        agent_id = None if session_key is not None else normalize_agent_id(agent_id)
    filters: dict[str, str | None] = {
        "runtime": params.get("runtime"),
        "owner_key": params.get("ownerKey"),
        "session_key": session_key,
        "agent_id": agent_id,
    }
    limit = params.get("limit", DEFAULT_LIMIT)
    sort_by = params.get("sortBy")
    if sort_by is not None or (statuses is not None and len(statuses) > 1):
        return await gateway.workers.run(
            _sorted_page,
            gateway.tasks,
            [None] if statuses is None else list[str | None](statuses),
            sort_by,
            limit,
            params.get("cursor"),
            **filters,
        )
    page = await gateway.workers.run(
        gateway.tasks.list,
        status=None if statuses is None else statuses[0],
        limit=limit,
        cursor=params.get("cursor"),
        **filters,
    )
    tasks: list[JSON] = [task.to_json() for task in page.tasks]
    return {"tasks": tasks, "count": len(tasks), "nextCursor": page.next_cursor}


@methods.method("tasks.get", scope=READ, schema=GET)
async def tasks_get(call: Call) -> JSON:
    """One task and its history: ``{task, events}``, found by exactly one of ``taskId``,
    ``runId`` (its newest task) or ``token`` (id, else run id, else session key)."""
    chosen = [
        (name, call.params[name]) for name in ("taskId", "runId", "token") if name in call.params
    ]
    if len(chosen) > 1:
        raise GatewayError("Provide either taskId, runId, or token (not multiple)")
    if not chosen:
        raise GatewayError("Either taskId, runId, or token is required")
    gateway = call.gateway
    registry = gateway.tasks
    name, value = chosen[0]

    def read() -> JSONObject:
        if name == "taskId":
            task = registry.require(value)
        elif name == "runId":
            found = registry.by_run_id(value)
            if found is None:
                raise TaskNotFound(f"task not found for run: {value}")
            task = found
        else:
            task = registry.require_token(value, canonical=gateway.catalog.canonical)
        events: list[JSON] = [event.to_json() for event in registry.events(task.task_id)]
        return {"task": task.to_json(), "events": events}

    return await gateway.workers.run(read)


@methods.method("tasks.cancel", scope=WRITE, schema=CANCEL)
async def tasks_cancel(call: Call) -> JSON:
    """Cancel a queued or running task, then abort its run if it has a live one:
    ``{ok, task, aborted, runIds}``. Unknown task → ``task not found: <id>``; a task that has
    already ended → ``invalid task transition: <status> -> cancelled (task <id>)``."""
    gateway = call.gateway
    task = await gateway.workers.run(
        gateway.tasks.cancel, call.params["taskId"], reason=call.params.get("reason")
    )
    run_ids: list[str] = []
    session_key = task.child_session_key or (
        task.requester_session_key if task.runtime == "cli" else None
    )
    if task.run_id and session_key:
        with contextlib.suppress(InvalidSessionKey):  # no such session, so no run to abort
            run_ids = await gateway.runs.abort(session_key, task.run_id)
    return {"ok": True, "task": task.to_json(), "aborted": bool(run_ids), "runIds": list(run_ids)}
