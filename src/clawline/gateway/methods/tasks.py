"""``tasks.list``, ``tasks.get`` and ``tasks.cancel``: the task registry over the gateway.

The methods call the gateway's :class:`~clawline.tasks.registry.TaskRegistry`
(``call.gateway.tasks``) on the store workers. Tasks are sent in their OpenClaw JSON form
(:meth:`TaskRecord.to_json`); see docs/tasks.md.
"""

from __future__ import annotations

import contextlib

from clawline.errors import ClawlineError, InvalidSessionKey
from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH
from clawline.pairing.scopes import READ, WRITE
from clawline.records.task import RUNTIMES, TASK_STATUSES, TaskNotFound
from clawline.sessions.catalog import SessionCatalog
from clawline.tasks.lookups import MAX_TASK_LIST_LIMIT
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


LIST = {
    "status": P.string(choices=TASK_STATUSES),
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


@methods.method("tasks.list", scope=READ, schema=LIST)
async def tasks_list(call: Call) -> JSON:
    """Tasks newest first: ``{tasks, count, nextCursor}``. ``sessionKey`` matches tasks the
    session requested or runs as the child."""
    params = call.params
    gateway = call.gateway
    session_key = params.get("sessionKey")
    if session_key is not None:
        session_key = _canonical(gateway.catalog, session_key)
    page = await gateway.workers.run(
        gateway.tasks.list,
        status=params.get("status"),
        runtime=params.get("runtime"),
        owner_key=params.get("ownerKey"),
        session_key=session_key,
        limit=params.get("limit", DEFAULT_LIMIT),
        cursor=params.get("cursor"),
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
