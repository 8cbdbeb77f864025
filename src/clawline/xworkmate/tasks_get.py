"""``xworkmate.tasks.get``: where an XWorkmate task run stands, with its artifacts.

Lookup: the explicit ``openclawSessionKey``, else the session mapped to ``appThreadKey``.
Then, first match wins:

1. a native task of the session (``taskId``, the task of run ``taskId|runId``, then
   ``xworkmate-<runId>``; else its latest task): its status mapped to
   ``completed``/``failed``/``running``, ``success:true``;
2. a recorded run: the run's status, output and error;
3. no record, but artifacts in the run's scope: ``status:"unknown"``,
   ``evidence:"artifacts_present"``;
4. nothing: ``{ok:false, code, message}``.

The ``ok:false`` answers (``invalid_lookup``, ``mapping_not_found``,
``no_native_task_record``, ``task_not_found``) are success payloads, as upstream returns
them, so a client reads the machine code; malformed params are request errors as everywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clawline.config import XWorkmateSettings
from clawline.errors import ClawlineError
from clawline.types import JSON, JSONObject
from clawline.xworkmate.constants import LOGGER_NAME
from clawline.xworkmate.mapping import (
    SessionMapping,
    find_mapping,
    read_mapping,
    storage_key,
)
from clawline.xworkmate.native import find_native_task
from clawline.xworkmate.open_params import optional_string
from clawline.xworkmate.operations import export
from clawline.xworkmate.scope import expected_dirs_or_default
from clawline.xworkmate.task_runs import latest_run, read_run

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

log = logging.getLogger(LOGGER_NAME)

_EXPORT_FIELDS = (
    "artifactScope",
    "remoteWorkingDirectory",
    "remoteWorkspaceRefKind",
    "scopeKind",
    "constraintSatisfied",
    "missingRequiredExtensions",
)


def app_status(task_status: str) -> str:
    """A native task status as the app reads it."""
    if task_status in ("succeeded", "completed"):
        return "completed"
    if task_status in ("failed", "timed_out", "cancelled", "lost"):
        return "failed"
    return "running"


def _lookup_error(code: str, message: str, mapping: SessionMapping | None = None) -> JSONObject:
    result: JSONObject = {"ok": False, "code": code, "message": message}
    if mapping is not None:
        result["mapping"] = mapping.to_json()
        result["expectedArtifactDirs"] = list(mapping.expected_artifact_dirs)
    return result


def _export_fields(exported: JSONObject | None) -> JSONObject:
    fields: JSONObject = {name: (exported or {}).get(name) for name in _EXPORT_FIELDS}
    artifacts = exported.get("artifacts") if exported else None
    fields["artifacts"] = artifacts if isinstance(artifacts, list) else []
    fields["artifactCount"] = len(artifacts) if isinstance(artifacts, list) else 0
    fields["warnings"] = exported.get("warnings", []) if exported else []
    return fields


async def _artifacts(
    params: Mapping[str, Any],
    session_key: str,
    run_id: str,
    dirs: list[str],
    *,
    host: PluginHost,
    config: XWorkmateSettings,
) -> JSONObject:
    return await export(
        {
            **params,
            "openclawSessionKey": session_key,
            "runId": run_id,
            "expectedArtifactDirs": dirs,
            "includeContent": params.get("includeContent", False),
        },
        host=host,
        config=config,
    )


def _native(host: PluginHost, canonical: str, token: str) -> JSONObject | None:
    try:
        task = find_native_task(canonical, token, host=host)
    except ClawlineError as error:
        log.warning("xworkmate native task lookup failed: sessionKey=%s error=%s", canonical, error)
        return None
    return dict(task.to_json()) if task is not None else None


def _recorded(host: PluginHost, session_key: str, token: str) -> dict[str, Any] | None:
    if token:
        return read_run(session_key, token, host=host)
    return latest_run(session_key, host=host)


def _native_result(task: JSONObject, run_id: str, task_id: str) -> JSONObject:
    status = optional_string(task.get("status")) or "running"
    return {
        "ok": True,
        "success": True,
        "status": app_status(status),
        "taskStatus": status,
        "mode": "gateway-chat",
        "runId": run_id or task.get("runId"),
        "taskId": task_id or task.get("taskId"),
        "task": task,
    }


def _recorded_result(run: Mapping[str, Any], run_id: str, task_id: str) -> JSONObject:
    status = optional_string(run.get("status")) or "running"
    running = status == "running"
    success = True if running else run.get("success") is True
    output = run.get("output") if isinstance(run.get("output"), str) else None
    error = run.get("error") if isinstance(run.get("error"), str) else None
    return {
        "ok": True,
        "success": success,
        "status": status,
        "taskStatus": status,
        "terminal": not running,
        "terminalSource": "session_prepare" if running else "agent_end",
        "mode": "gateway-chat",
        "runId": run_id,
        "taskId": task_id or run_id,
        "task": {
            "taskId": task_id or run_id,
            "runId": run_id,
            "status": status,
            "success": success,
            "source": "xworkmate_run_state",
            "startedAt": run.get("startedAt"),
            "updatedAt": run.get("updatedAt"),
            "completedAt": run.get("completedAt"),
            "error": error,
        },
        "output": output,
        "resultSummary": output,
        "message": output or error,
    }


def _unknown_result(run_id: str, task_id: str) -> JSONObject:
    return {
        "ok": True,
        "success": False,
        "status": "unknown",
        "taskStatus": "unknown",
        "evidence": "artifacts_present",
        "mode": "gateway-chat",
        "runId": run_id,
        "taskId": task_id or run_id,
        "task": {
            "taskId": task_id or run_id,
            "runId": run_id,
            "status": "unknown",
            "source": "artifact_fallback",
        },
    }


async def _find_mapping(host: PluginHost, app_key: str, explicit: str) -> SessionMapping | None:
    if explicit:
        return await host.run(read_mapping, explicit, host=host)
    if app_key:
        return await host.run(find_mapping, app_key, host=host)
    return None


async def tasks_get(
    params: Mapping[str, Any], *, host: PluginHost, config: XWorkmateSettings
) -> JSONObject:
    """The ``xworkmate.tasks.get`` answer for ``params`` (module docstring)."""
    app_key = optional_string(params.get("appThreadKey"))
    explicit = optional_string(params.get("openclawSessionKey"))
    mapping = await _find_mapping(host, app_key, explicit)
    if mapping is None and app_key and not explicit:
        return _lookup_error(
            "mapping_not_found", f"No OpenClaw session mapping found for {app_key}"
        )
    session_key = mapping.openclaw_session_key if mapping is not None else explicit
    if not session_key:
        return _lookup_error("invalid_lookup", "openclawSessionKey or appThreadKey required")
    dirs = (
        list(mapping.expected_artifact_dirs)
        if mapping is not None
        else expected_dirs_or_default(params.get("expectedArtifactDirs"))
    )
    run_id = optional_string(params.get("runId"))
    task_id = optional_string(params.get("taskId"))
    token = task_id or run_id
    include = params.get("includeArtifacts") is not False
    canonical = storage_key(session_key, host=host)
    common: JSONObject = {
        "mapping": mapping.to_json() if mapping is not None else None,
        "appThreadKey": mapping.app_thread_key if mapping is not None else (app_key or None),
        "openclawSessionKey": session_key,
        "expectedArtifactDirs": list[JSON](dirs),
    }

    async def artifacts(run: str) -> JSONObject | None:
        if not include or not run:
            return None
        return await _artifacts(params, session_key, run, dirs, host=host, config=config)

    task = await host.run(_native, host, canonical, token)
    if task is not None:
        run = run_id or optional_string(task.get("runId")) or str(task["taskId"])
        exported = await artifacts(run)
        return {**_native_result(task, run_id, task_id), **common, **_export_fields(exported)}
    recorded = await host.run(_recorded, host, session_key, token)
    if recorded is not None:
        run = run_id or optional_string(recorded.get("runId"))
        exported = await artifacts(run)
        result = _recorded_result(recorded, run, task_id)
        return {**result, **common, **_export_fields(exported)}
    exported = await artifacts(run_id)
    fields = _export_fields(exported)
    if fields["artifactCount"]:
        warning = (
            f"Native OpenClaw task record was unavailable for {session_key}; artifacts are"
            " present but task status is unknown."
        )
        fields["warnings"] = [*_strings(fields["warnings"]), warning]
        return {**_unknown_result(run_id, task_id), **common, **fields}
    code = "no_native_task_record" if token else "task_not_found"
    return _lookup_error(code, f"No native OpenClaw task record found for {session_key}", mapping)


def _strings(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []
