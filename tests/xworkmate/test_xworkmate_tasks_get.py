"""``xworkmate.tasks.get``: lookup errors and the four precedence rows, over a gateway."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.xworkmate.native import native_task_id
from clawline.xworkmate.scope import TaskScope
from clawline.xworkmate.task_runs import record_run_ended
from tests.xworkmate.xworkmate_support import (
    APP_KEY,
    SESSION,
    XwGateway,
    prepare_params,
    write,
    xworkmate_gateway,
)

GET = "xworkmate.tasks.get"
TURN_1 = native_task_id(SESSION, "turn-1")


async def forget_native_task(xw: XwGateway, run_id: str = "turn-1") -> None:
    services = xw.gw.runtime
    assert await services.call(services.tasks.delete, native_task_id(SESSION, run_id))


async def test_lookup_errors(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        invalid = {
            "ok": False,
            "code": "invalid_lookup",
            "message": "openclawSessionKey or appThreadKey required",
        }
        assert await xw.ok(GET, {}) == invalid
        assert await xw.ok(GET, {"sessionKey": SESSION, "runId": "turn-1"}) == invalid
        assert await xw.ok(GET, {"appThreadKey": "nobody"}) == {
            "ok": False,
            "code": "mapping_not_found",
            "message": "No OpenClaw session mapping found for nobody",
        }


async def test_not_found_codes(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        message = f"No native OpenClaw task record found for {SESSION}"
        assert await xw.ok(GET, {"openclawSessionKey": SESSION, "runId": "turn-9"}) == {
            "ok": False,
            "code": "no_native_task_record",
            "message": message,
        }
        assert await xw.ok(GET, {"openclawSessionKey": SESSION}) == {
            "ok": False,
            "code": "task_not_found",
            "message": message,
        }
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        await forget_native_task(xw)
        services = xw.gw.runtime
        await services.call(
            services.catalog.patch,
            SESSION,
            {"pluginExtensions": {"openclaw-multi-session-plugins": {"xworkmate.taskRuns": None}}},
        )
        found = await xw.ok(GET, {"appThreadKey": APP_KEY, "taskId": "t-9"})
        assert found == {
            "ok": False,
            "code": "no_native_task_record",
            "message": message,
            "mapping": prepared["mapping"],
            "expectedArtifactDirs": prepared["expectedArtifactDirs"],
        }


@pytest.mark.parametrize(
    ("finish", "status"),
    [
        ("succeeded", "completed"),
        ("failed", "failed"),
        ("timed_out", "failed"),
        ("cancelled", "failed"),
        ("lost", "failed"),
        (None, "running"),
    ],
)
async def test_row_1_the_native_task(tmp_path: Path, finish: str | None, status: str) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok(
            "xworkmate.session.prepare", prepare_params(expectedArtifactDirs=["reports"])
        )
        write(xw.scope_dir() / "out.md", "out")
        services = xw.gw.runtime
        if finish == "cancelled":
            await services.call(services.tasks.cancel, TURN_1)
        elif finish == "lost":
            await services.call(services.tasks.mark_lost, TURN_1, "gone")
        elif finish is not None:
            await services.call(services.tasks.finish, TURN_1, finish)
        result = await xw.ok(GET, {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert result["ok"] is True
        assert result["success"] is True
        assert result["status"] == status
        assert result["taskStatus"] == (finish or "running")
        assert result["mode"] == "gateway-chat"
        assert (result["runId"], result["taskId"]) == ("turn-1", TURN_1)
        assert result["task"]["taskId"] == TURN_1
        assert result["task"]["runtime"] == "cli"
        assert result["mapping"] == {
            **prepared["mapping"],
            "updatedAt": result["mapping"]["updatedAt"],
        }
        assert result["appThreadKey"] == APP_KEY
        assert result["openclawSessionKey"] == SESSION
        assert result["expectedArtifactDirs"] == ["reports/"]
        assert result["artifactScope"] == prepared["artifactScope"]
        assert result["remoteWorkingDirectory"] == prepared["remoteWorkingDirectory"]
        assert result["remoteWorkspaceRefKind"] == "remotePath"
        assert result["scopeKind"] == "task"
        assert result["artifactCount"] == 1
        assert result["artifacts"][0]["relativePath"] == "out.md"
        assert "content" not in result["artifacts"][0]  # includeContent defaults to false
        assert result["constraintSatisfied"] is True
        assert result["missingRequiredExtensions"] == []
        assert result["warnings"] == []


async def test_native_lookup_is_bound_to_the_session(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        other = {**prepare_params(), "appThreadKey": "t2", "openclawSessionKey": "agent:main:t2"}
        await xw.ok("xworkmate.session.prepare", {**other, "runId": "turn-2"})
        theirs = native_task_id("agent:main:t2", "turn-2")
        for token in (theirs, "xworkmate-turn-2", "turn-2"):
            result = await xw.ok(GET, {"openclawSessionKey": SESSION, "taskId": token})
            assert result["code"] == "no_native_task_record", token
        by_token = await xw.ok(GET, {"openclawSessionKey": SESSION})
        assert by_token["taskId"] == TURN_1  # its latest task, no token


async def test_row_2_the_recorded_run(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        await forget_native_task(xw)
        running = await xw.ok(GET, {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert running["success"] is True
        assert running["status"] == running["taskStatus"] == "running"
        assert running["terminal"] is False
        assert running["terminalSource"] == "session_prepare"
        assert running["task"]["source"] == "xworkmate_run_state"
        assert running["task"]["taskId"] == "turn-1"
        assert running["output"] is None
        services = xw.gw.runtime
        await services.call(
            lambda: record_run_ended(
                SESSION,
                "turn-1",
                host=services.plugin_host,
                success=True,
                output="All done.",
                error=None,
            )
        )
        done = await xw.ok(GET, {"appThreadKey": APP_KEY, "taskId": "turn-1"})
        assert done["status"] == "completed"
        assert done["success"] is True
        assert done["terminal"] is True
        assert done["terminalSource"] == "agent_end"
        assert done["output"] == done["resultSummary"] == done["message"] == "All done."
        assert done["task"]["completedAt"] is not None
        assert done["task"]["startedAt"] == running["task"]["startedAt"]
        await services.call(
            lambda: record_run_ended(
                SESSION,
                "turn-1",
                host=services.plugin_host,
                success=False,
                output=None,
                error="nvapi-XYZ123 bad",
            )
        )
        failed = await xw.ok(GET, {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert failed["status"] == "failed"
        assert failed["success"] is False
        assert failed["output"] is None
        assert failed["message"] == "nvapi-[REDACTED] bad"
        assert failed["task"]["error"] == "nvapi-[REDACTED] bad"


async def test_row_3_artifacts_without_a_record(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        scope = TaskScope(SESSION, "turn-1")
        write(xw.workspace / scope.relative / "report.md", "r")
        params = {"openclawSessionKey": SESSION, "runId": "turn-1", "includeContent": True}
        result = await xw.ok(GET, params)
        assert result["success"] is False
        assert result["status"] == result["taskStatus"] == "unknown"
        assert result["evidence"] == "artifacts_present"
        assert result["task"] == {
            "taskId": "turn-1",
            "runId": "turn-1",
            "status": "unknown",
            "source": "artifact_fallback",
        }
        assert result["mapping"] is None
        assert result["artifactCount"] == 1
        assert result["artifacts"][0]["content"] == "cg=="
        assert result["warnings"] == [
            f"Native OpenClaw task record was unavailable for {SESSION}; artifacts are present"
            " but task status is unknown."
        ]
        without = await xw.ok(GET, {**params, "includeArtifacts": False})
        assert without["code"] == "no_native_task_record"


async def test_include_artifacts_false(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        write(xw.scope_dir() / "out.md")
        result = await xw.ok(GET, {"appThreadKey": APP_KEY, "includeArtifacts": False})
        assert result["status"] == "running"
        assert result["artifacts"] == []
        assert result["artifactCount"] == 0
        assert result["artifactScope"] is None
