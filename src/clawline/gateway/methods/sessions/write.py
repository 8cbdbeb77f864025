"""``sessions.create``, ``sessions.patch``, ``sessions.delete`` and ``sessions.reset``.

Every write goes through the catalog on the store thread; the ``sessions.changed`` event is
published afterwards, on the event loop, with a fresh row snapshot.
"""

from __future__ import annotations

import uuid
from typing import Any

from clawline import keys
from clawline.errors import ClawlineError, SessionNotFound
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.methods.sessions.common import (
    is_main_key,
    refuse_webchat,
    required_key,
    resolved_model,
)
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import ADMIN, WRITE
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import Cause, Change, SessionCatalog
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_KEY = P.string(max_len=keys.MAX_KEY_LENGTH)
_REQUIRED_KEY = P.string(required=True, min_len=1)
"""A key that names the session to change; blank after trimming is refused too."""
_SETTING = P.string(nullable=True, max_len=256)
_CHECKED_BY_CATALOG = P.anything()
_ROUTE = P.string(nullable=True, min_len=1, max_len=512)
"""Values whose exact error texts come from the catalog's change rules."""

PATCH_FIELDS = {
    "label": _CHECKED_BY_CATALOG,
    "displayName": _CHECKED_BY_CATALOG,
    "thinkingLevel": _SETTING,
    "fastMode": P.boolean(nullable=True),
    "verboseLevel": _SETTING,
    "traceLevel": _SETTING,
    "reasoningLevel": _SETTING,
    "responseUsage": _SETTING,
    "elevatedLevel": _SETTING,
    "execHost": _SETTING,
    "execSecurity": _SETTING,
    "execAsk": _SETTING,
    "execNode": _SETTING,
    "model": _SETTING,
    "sendPolicy": _SETTING,
    "groupActivation": _SETTING,
    "spawnedBy": _CHECKED_BY_CATALOG,
    "spawnedWorkspaceDir": _CHECKED_BY_CATALOG,
    "spawnedCwd": _CHECKED_BY_CATALOG,
    "spawnDepth": _CHECKED_BY_CATALOG,
    "subagentRole": _CHECKED_BY_CATALOG,
    "subagentControlScope": _CHECKED_BY_CATALOG,
    "lastChannel": _ROUTE,
    "lastTo": _ROUTE,
    "lastAccountId": _ROUTE,
    "lastThreadId": _ROUTE,
}
"""``sessions.patch`` fields besides ``key``. The ``last*`` fields are the session's channel
origin (where its replies, completions and announce results are delivered, docs/channels.md).
``parentSessionKey`` is set only by ``sessions.create``."""

WEBCHAT_PATCH = "webchat clients cannot patch sessions; use chat.send for session-scoped updates"
WEBCHAT_DELETE = "webchat clients cannot delete sessions"


def _text(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


async def _session_ended(call: Call, before: SessionEntry, reason: str) -> None:
    """The plugins' ``session_end`` (``reason``: ``deleted`` | ``reset``)."""
    plugins = call.gateway.plugins
    if not plugins.implements("session_end"):
        return
    event: JSONObject = {"sessionKey": before.key, "sessionId": before.session_id, "reason": reason}
    ctx = plugins.context(session_key=before.key, agent_id=before.agent_id)
    await plugins.session_end(event, ctx)


async def _stop_runs(call: Call, key: str) -> None:
    """Abort the session's runs (pending, queued or running) before it is deleted or reset;
    returns once their ends are written."""
    await call.gateway.runs.abort(key)


# --- sessions.create -------------------------------------------------------------------------


def _create(
    catalog: SessionCatalog, key: str, changes: dict[str, object], parent: str | None
) -> Change:
    """Blocking: create (or update) the entry and check its transcript."""
    store = catalog.store
    if parent is not None:
        if store.get(parent) is None:
            raise SessionNotFound(f"unknown parent session: {parent}")
        changes["parentSessionKey"] = parent
    try:
        change = catalog.patch(key, changes, cause=Cause("create"))
    except ClawlineError:
        raise
    except Exception as error:  # the backend's own failure, e.g. while writing the transcript
        raise GatewayError(
            f"failed to create session transcript: {error}", ErrorCode.UNAVAILABLE
        ) from error
    assert change.after is not None
    if store.transcript_info(change.after.session_id) is None:
        if change.created:
            catalog.delete(key, archive_transcript=False)
        raise GatewayError(
            "failed to create session transcript: the store kept no transcript header",
            ErrorCode.UNAVAILABLE,
        )
    return change


@methods.method(
    "sessions.create",
    scope=WRITE,
    schema={
        "key": _KEY,
        "agentId": P.string(max_len=128),
        "label": _CHECKED_BY_CATALOG,
        "model": P.string(max_len=256),
        "parentSessionKey": _KEY,
        "task": P.string(),
        "message": P.string(),
    },
)
async def sessions_create(call: Call) -> JSON:
    params = call.params
    gateway = call.gateway
    catalog = gateway.catalog
    agent_raw = _text(params, "agentId")
    agent = None if agent_raw is None else keys.normalize_agent_id(agent_raw)
    raw_key = _text(params, "key")
    if raw_key is None:
        key = keys.dashboard_session_key(agent or catalog.default_agent_id)
    else:
        key = keys.canonicalize(
            raw_key,
            default_agent_id=agent or catalog.default_agent_id,
            main_key=catalog.main_key,
        )
        parsed = keys.parse_agent_session_key(key)
        if agent is not None and parsed is not None and parsed.agent_id != agent:
            raise GatewayError(
                f"sessions.create key agent ({parsed.agent_id}) does not match agentId ({agent})"
            )
    changes: dict[str, object] = {}
    if params.get("label") is not None:
        changes["label"] = params["label"]
    if _text(params, "model") is not None:
        changes["model"] = _text(params, "model")
    parent_raw = _text(params, "parentSessionKey")
    parent = None if parent_raw is None else catalog.canonical(parent_raw)
    change = await gateway.workers.run(_create, catalog, key, changes, parent)
    assert change.after is not None
    result: JSONObject = {
        "ok": True,
        "key": key,
        "sessionId": change.after.session_id,
        "entry": change.after.to_json(),
        "runStarted": False,
    }
    text = next((params[name] for name in ("message", "task") if _text(params, name)), None)
    if text is not None:
        try:
            ack = await gateway.runs.send(
                session_key=key,
                message=text,
                idempotency_key=str(uuid.uuid4()),
                origin="chat",
            )
        except ClawlineError as error:
            result["runError"] = error.message
        else:
            # The run manager publishes the run's own events (sessions.changed reason "send").
            result.update(
                runStarted=True, runId=ack.run_id, status=ack.status, messageSeq=ack.message_seq
            )
    return result


# --- sessions.patch --------------------------------------------------------------------------


@methods.method("sessions.patch", scope=ADMIN, schema={"key": _REQUIRED_KEY, **PATCH_FIELDS})
async def sessions_patch(call: Call) -> JSON:
    refuse_webchat(call, WEBCHAT_PATCH)
    gateway = call.gateway
    key = required_key(call)
    changes = {name: value for name, value in call.params.items() if name != "key"}
    change = await gateway.workers.run(gateway.catalog.patch, key, changes, cause=Cause("patch"))
    assert change.after is not None
    return {
        "ok": True,
        "path": gateway.store.location,
        "key": change.key,
        "entry": change.after.to_json(),
        "resolved": resolved_model(change.after),
    }


# --- sessions.delete -------------------------------------------------------------------------


def _delete(catalog: SessionCatalog, key: str, archive: bool) -> Change | None:
    try:
        return catalog.delete(key, archive_transcript=archive, cause=Cause("delete"))
    except SessionNotFound:
        return None


@methods.method(
    "sessions.delete",
    scope=ADMIN,
    schema={
        "key": _REQUIRED_KEY,
        "deleteTranscript": P.boolean(),
        "emitLifecycleHooks": P.boolean(),
    },
)
async def sessions_delete(call: Call) -> JSON:
    refuse_webchat(call, WEBCHAT_DELETE)
    gateway = call.gateway
    key = required_key(call)
    if is_main_key(call, key):
        raise GatewayError(f"Cannot delete the main session ({key}).")
    archive = call.params.get("deleteTranscript", True)
    await _stop_runs(call, key)
    change = await gateway.workers.run(_delete, gateway.catalog, key, archive)
    deleted = change is not None and change.before is not None
    hooks = call.params.get("emitLifecycleHooks") is not False
    await gateway.thread_bindings.unbind_deleted_session(key, deleted=deleted, emit_hooks=hooks)
    if change is None or change.before is None:
        return {"ok": True, "key": key, "deleted": False, "archived": []}
    if hooks:
        await _session_ended(call, change.before, "deleted")
    archived: list[JSON] = [change.before.session_id] if archive else []
    return {"ok": True, "key": key, "deleted": True, "archived": archived}


# --- sessions.reset --------------------------------------------------------------------------


@methods.method(
    "sessions.reset",
    scope=ADMIN,
    schema={"key": _REQUIRED_KEY, "reason": P.string(choices=("new", "reset"))},
)
async def sessions_reset(call: Call) -> JSON:
    gateway = call.gateway
    key = required_key(call)
    await _stop_runs(call, key)
    cause = Cause(call.params.get("reason", "reset"))
    change = await gateway.workers.run(gateway.catalog.reset, key, cause=cause)
    assert change.after is not None
    assert change.before is not None
    await _session_ended(call, change.before, "reset")
    return {"ok": True, "key": key, "entry": change.after.to_json()}
