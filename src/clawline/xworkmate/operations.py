"""The plugin's operations on a request's params: prepare, export, list, read, snapshot.

Each takes the (open) params, the plugin host and the plugin's settings, and returns the result
object or raises a :class:`~clawline.errors.ClawlineError` with the upstream plugin's exact
message. Store work runs on a store worker (``host.run``), file work in a worker thread, so the
event loop never waits on either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawline.config import XWorkmateSettings
from clawline.types import JSONObject
from clawline.xworkmate.export import ExportOptions, expected_dir_status, export_artifacts
from clawline.xworkmate.manifest import manifest_markdown
from clawline.xworkmate.mapping import read_mapping, storage_key, upsert_mapping
from clawline.xworkmate.native import create_native_task
from clawline.xworkmate.open_params import (
    XWorkmateError,
    optional_string,
    record,
    required_string,
)
from clawline.xworkmate.paths import make_directory
from clawline.xworkmate.read import read_artifact
from clawline.xworkmate.scope import (
    TaskScope,
    expected_dirs_or_default,
    normalize_expected_dirs,
)
from clawline.xworkmate.snapshot import collect_and_snapshot
from clawline.xworkmate.task_runs import record_run_started
from clawline.xworkmate.workspace_root import open_root, resolve_root

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

Params = Mapping[str, Any]


def target(params: Params) -> TaskScope:
    """The run a request is about: ``runId`` and ``openclawSessionKey`` are required, and a
    supplied ``artifactScope`` must be that run's."""
    run_id = required_string(params.get("runId"), "runId required")
    session_key = required_string(params.get("openclawSessionKey"), "openclawSessionKey required")
    scope = TaskScope(session_key, run_id)
    scope.check_supplied(params.get("artifactScope"))
    return scope


async def expected_dirs_for(params: Params, session_key: str, *, host: PluginHost) -> list[str]:
    """The request's ``expectedArtifactDirs``, else those prepare recorded in the session's
    mapping, else clawline's default list."""
    if params.get("expectedArtifactDirs") is not None:
        return normalize_expected_dirs(params.get("expectedArtifactDirs"))
    mapping = await host.run(read_mapping, session_key, host=host)
    if mapping is not None:
        return list(mapping.expected_artifact_dirs)
    return expected_dirs_or_default(None)


def _root(
    host: PluginHost,
    config: XWorkmateSettings,
    scope: TaskScope,
    params: Params,
    root: Path | None,
) -> Path:
    if root is not None:
        return root
    return resolve_root(scope.session_key, params.get("workspaceDir"), host=host, config=config)


async def export(
    params: Params,
    *,
    host: PluginHost,
    config: XWorkmateSettings,
    include_content: bool = True,
    root: Path | None = None,
) -> JSONObject:
    """``xworkmate.artifacts.export``; ``root`` is a trusted host workspace (the agent tool)."""
    scope = target(params)
    workspace = _root(host, config, scope, params, root)
    dirs = await expected_dirs_for(params, scope.session_key, host=host)
    options = ExportOptions.from_params(params, config, dirs, include_content=include_content)
    return await asyncio.to_thread(
        export_artifacts, workspace, scope, options, config.signing_secret
    )


async def list_artifacts(
    params: Params, *, host: PluginHost, config: XWorkmateSettings, root: Path | None = None
) -> JSONObject:
    """``xworkmate.artifacts.list``: export without content, plus ``manifestMarkdown``."""
    result = await export({**params, "includeContent": False}, host=host, config=config, root=root)
    result["manifestMarkdown"] = manifest_markdown(result)
    return result


async def read(
    params: Params, *, host: PluginHost, config: XWorkmateSettings, root: Path | None = None
) -> JSONObject:
    """``xworkmate.artifacts.read``."""
    scope = target(params)
    workspace = _root(host, config, scope, params, root)
    dirs = await expected_dirs_for(params, scope.session_key, host=host)
    max_inline = ExportOptions.from_params(params, config, dirs).max_inline_bytes
    return await asyncio.to_thread(
        lambda: read_artifact(
            workspace,
            scope,
            params,
            expected_dirs=dirs,
            secret=config.signing_secret,
            max_inline_bytes=max_inline,
            allow_hardlinks=config.allow_hardlinks,
        )
    )


async def snapshot(params: Params, *, host: PluginHost, config: XWorkmateSettings) -> JSONObject:
    """``xworkmate.artifacts.collect-and-snapshot``."""
    scope = target(params)
    workspace = _root(host, config, scope, params, None)
    return await asyncio.to_thread(collect_and_snapshot, workspace, scope, params, config)


def _metadata(params: Params) -> Params:
    return record(params.get("xworkmate")) or record(params.get("xworkmateMetadata")) or params


def _schema_version(value: object) -> None:
    text = optional_string(value) if value is not None else "1"
    try:
        ok = float(text) == 1
    except ValueError:
        ok = False
    if not ok:
        raise XWorkmateError("schemaVersion must be 1")


def _prepare_dirs(root: Path, scope: TaskScope, dirs: list[str]) -> JSONObject:
    with open_root(root, create=True) as top:
        directory = make_directory(top, scope.relative)
        dir_status = expected_dir_status(top, dirs)
    return {
        **scope.result_fields(root),
        "artifactDirectory": str(directory),
        "relativeArtifactDirectory": scope.relative,
        "warnings": [],
        "expectedArtifactDirs": list(dirs),
        "expectedArtifactDirStatus": dir_status,
    }


async def prepare(params: Params, *, host: PluginHost, config: XWorkmateSettings) -> JSONObject:
    """``xworkmate.session.prepare``: checks everything first, then records the mapping
    (fail closed), creates the scope directory, the native task and the recorded run."""
    metadata = _metadata(params)
    _schema_version(metadata.get("schemaVersion"))
    app_key = required_string(metadata.get("appThreadKey"), "appThreadKey required")
    dirs = expected_dirs_or_default(metadata.get("expectedArtifactDirs"))
    session_key = required_string(
        params.get("openclawSessionKey") or metadata.get("openclawSessionKey"),
        "openclawSessionKey required",
    )
    run_id = required_string(params.get("runId"), "runId required")
    scope = TaskScope(session_key, run_id)
    scope.check_supplied(params.get("artifactScope"))
    canonical = storage_key(session_key, host=host)  # refuses a malformed key before writing
    root = resolve_root(session_key, params.get("workspaceDir"), host=host, config=config)
    mapping = await host.run(
        lambda: upsert_mapping(
            host=host,
            app_thread_key=app_key,
            openclaw_session_key=session_key,
            expected_artifact_dirs=dirs,
            source="bridge_prepare",
            created_at=optional_string(metadata.get("createdAt")) or None,
        )
    )
    result = await asyncio.to_thread(_prepare_dirs, root, scope, dirs)
    task = await host.run(create_native_task, canonical, run_id, app_key, host=host)
    await host.run(record_run_started, session_key, run_id, host=host)
    result["mapping"] = mapping.to_json()
    result["appThreadKey"] = app_key
    result["openclawSessionKey"] = session_key
    result["taskId"] = task.task_id
    return result
