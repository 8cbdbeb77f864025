"""``xworkmate.session.prepare`` over a real gateway: registration, the envelope, every refusal
and the fail-closed mapping (CONFLICT)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.xworkmate.constants import (
    MAPPING_NAMESPACE,
    METHOD_NAMES,
    PLUGIN_ID,
    TOOL_NAME,
)
from clawline.xworkmate.native import native_task_id
from tests.gateway.wire import WireClient
from tests.xworkmate.xworkmate_support import (
    APP_KEY,
    SESSION,
    TOKEN,
    prepare_params,
    xworkmate_gateway,
)

DEFAULT_DIRS = ["artifacts/", "reports/", "exports/", "assets/", "assets/images/", "dist/"]


async def test_methods_are_registered_in_order_with_the_tool(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        names = xw.gw.gateway.methods.names()
        start = names.index("xworkmate.session.prepare")
        assert tuple(names[start : start + 6]) == METHOD_NAMES
        assert xw.gw.runtime.runs.tools.get(TOOL_NAME) is not None
        hello = xw.gw.gateway.features()
        assert "xworkmate.artifacts.read" in hello["methods"]  # type: ignore[operator]


async def test_prepare_maps_the_thread_and_prepares_the_run(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        params = prepare_params(expectedArtifactDirs=["reports", "assets/images"], extra="x")
        result = await xw.ok("xworkmate.session.prepare", params)
        scope = "tasks/agent_main_thread-main/turn-1"
        mapping = result.pop("mapping")
        assert result == {
            "runId": "turn-1",
            "sessionKey": SESSION,
            "remoteWorkingDirectory": str(xw.workspace),
            "remoteWorkspaceRefKind": "remotePath",
            "artifactScope": scope,
            "scopeKind": "task",
            "artifactDirectory": str(xw.workspace / scope),
            "relativeArtifactDirectory": scope,
            "warnings": [],
            "expectedArtifactDirs": ["reports/", "assets/images/"],
            "expectedArtifactDirStatus": [
                {"relativePath": "reports/", "exists": False},
                {"relativePath": "assets/images/", "exists": False},
            ],
            "appThreadKey": APP_KEY,
            "openclawSessionKey": SESSION,
            "taskId": native_task_id(SESSION, "turn-1"),
        }
        assert (xw.workspace / scope).is_dir()
        assert mapping["appThreadKey"] == APP_KEY
        assert mapping["openclawSessionKey"] == SESSION
        assert mapping["expectedArtifactDirs"] == ["reports/", "assets/images/"]
        assert mapping["source"] == "bridge_prepare"
        assert mapping["schemaVersion"] == 1
        services = xw.gw.runtime
        stored = await services.call(
            services.plugin_host.read_extension, SESSION, PLUGIN_ID, MAPPING_NAMESPACE
        )
        assert stored == mapping
        task = await services.call(services.tasks.get, native_task_id(SESSION, "turn-1"))
        assert task is not None
        assert (task.status, task.runtime, task.run_id) == ("running", "cli", "turn-1")
        assert (task.requester_session_key, task.owner_key) == (SESSION, SESSION)


async def test_prepare_defaults_and_envelopes(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        plain = await xw.ok("xworkmate.session.prepare", prepare_params())
        assert plain["expectedArtifactDirs"] == DEFAULT_DIRS
        assert plain["mapping"]["expectedArtifactDirs"] == DEFAULT_DIRS
        nested = {
            "openclawSessionKey": "agent:main:nested",
            "runId": "r1",
            "appThreadKey": "ignored-root-field",
            "xworkmate": {
                "schemaVersion": 1,
                "appThreadKey": "draft:1",
                "expectedArtifactDirs": [],
            },
        }
        result = await xw.ok("xworkmate.session.prepare", nested)
        assert result["appThreadKey"] == "draft:1"
        assert result["expectedArtifactDirs"] == []
        legacy = {
            "runId": "r2",
            "xworkmateMetadata": {
                "appThreadKey": "draft:2",
                "openclawSessionKey": "agent:main:draft:2",
                "createdAt": "2026-06-01T00:00:00.000Z",
            },
        }
        result = await xw.ok("xworkmate.session.prepare", legacy)
        assert result["openclawSessionKey"] == "agent:main:draft:2"
        assert result["mapping"]["createdAt"] == "2026-06-01T00:00:00.000Z"
        assert result["artifactScope"] == "tasks/agent_main_draft_2/r2"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (prepare_params(schemaVersion=2), "schemaVersion must be 1"),
        (prepare_params(schemaVersion="one"), "schemaVersion must be 1"),
        ({**prepare_params(), "appThreadKey": " "}, "appThreadKey required"),
        ({"openclawSessionKey": SESSION, "runId": "r"}, "appThreadKey required"),
        ({"appThreadKey": APP_KEY, "runId": "r"}, "openclawSessionKey required"),
        (
            {"appThreadKey": APP_KEY, "sessionKey": SESSION, "runId": "r"},
            "openclawSessionKey required",
        ),
        ({**prepare_params(), "openclawSessionKey": "<nil>"}, "openclawSessionKey required"),
        ({**prepare_params(), "runId": None}, "runId required"),
        (
            prepare_params(expectedArtifactDirs=["../up"]),
            "expectedArtifactDir must stay inside the workspace",
        ),
        (
            prepare_params(expectedArtifactDirs=["/etc"]),
            "expectedArtifactDir must stay inside the workspace",
        ),
        (
            prepare_params(artifactScope="tasks/agent_main_thread-main/turn-2"),
            "artifactScope does not match sessionKey/runId",
        ),
        (prepare_params(artifactScope="tasks/x"), "artifactScope must be a task artifact scope"),
        (
            prepare_params(workspaceDir="/"),
            "workspaceDir must stay inside the configured workspace",
        ),
        (prepare_params(workspaceDir="rel/dir"), "workspaceDir must be an absolute path"),
    ],
)
async def test_prepare_refusals_write_nothing(
    tmp_path: Path, params: dict[str, Any], message: str
) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        assert await xw.error("xworkmate.session.prepare", params) == {
            "code": "INVALID_REQUEST",
            "message": message,
        }
        services = xw.gw.runtime
        assert await services.call(services.catalog.get, SESSION) is None
        assert await services.call(services.tasks.get, native_task_id(SESSION, "turn-1")) is None
        assert not (xw.workspace / "tasks").exists()


async def test_a_conflicting_mapping_is_refused_with_conflict(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        first = await xw.ok("xworkmate.session.prepare", prepare_params())
        again = await xw.ok("xworkmate.session.prepare", prepare_params("turn-2"))
        assert again["mapping"]["createdAt"] == first["mapping"]["createdAt"]
        conflict = {
            "code": "CONFLICT",
            "message": "conflict: xworkmate session mapping already points to a different session",
        }
        other_thread = {**prepare_params("turn-3"), "appThreadKey": "thread-other"}
        assert await xw.error("xworkmate.session.prepare", other_thread) == conflict
        alias = {**prepare_params("turn-3"), "openclawSessionKey": "agent:main:THREAD-MAIN"}
        assert await xw.error("xworkmate.session.prepare", alias) == conflict
        services = xw.gw.runtime
        assert await services.call(services.tasks.get, native_task_id(SESSION, "turn-3")) is None
        assert not xw.scope_dir("turn-3").exists()
        stored = await services.call(
            services.plugin_host.read_extension, SESSION, PLUGIN_ID, MAPPING_NAMESPACE
        )
        assert isinstance(stored, dict)
        assert stored["appThreadKey"] == APP_KEY


async def test_a_workspace_dir_inside_the_root_is_accepted(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        inner = xw.workspace / "projects" / "p1"
        result = await xw.ok("xworkmate.session.prepare", prepare_params(workspaceDir=str(inner)))
        assert result["remoteWorkingDirectory"] == str(inner)
        assert (inner / result["artifactScope"]).is_dir()


async def test_the_configured_workspace_dir_is_the_root(tmp_path: Path) -> None:
    root = tmp_path / "xwm-root"
    async with xworkmate_gateway(tmp_path, {"workspaceDir": str(root)}) as xw:
        result = await xw.ok("xworkmate.session.prepare", prepare_params())
        assert result["remoteWorkingDirectory"] == str(root.resolve())
        refused = prepare_params("turn-2", workspaceDir=str(xw.workspace))
        assert (await xw.error("xworkmate.session.prepare", refused))["message"] == (
            "workspaceDir must stay inside the configured workspace"
        )


async def test_writing_methods_need_the_write_scope(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        reader = await WireClient.open(xw.gw.url)
        try:
            assert (await reader.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
            for method in ("xworkmate.session.prepare", "xworkmate.artifacts.collect-and-snapshot"):
                frame = await reader.call(method, prepare_params())
                assert frame["error"]["message"] == "missing scope: operator.write"
            frame = await reader.call("xworkmate.artifacts.list", prepare_params())
            assert frame["ok"] is True, frame
        finally:
            await reader.close()
