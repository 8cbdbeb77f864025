"""End to end, the XWorkmate bridge's turn (docs/xworkmate.md) against a real gateway
with the offline model: prepare → chat.send → poll tasks.get → snapshot → export → read."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from clawline.xworkmate.native import native_task_id
from tests.xworkmate.xworkmate_support import APP_KEY, SESSION, XwGateway, write, xworkmate_gateway

REPORT = "# Final report\nAll checks passed."
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'


async def poll_until_done(xw: XwGateway, params: dict[str, Any]) -> dict[str, Any]:
    """Poll ``xworkmate.tasks.get`` as the app does (faster than its 2 s) until not running."""
    for _ in range(250):
        result: dict[str, Any] = await xw.ok("xworkmate.tasks.get", params)
        assert result["ok"] is True, result
        if result["status"] != "running":
            return result
        await asyncio.sleep(0.02)
    raise AssertionError("the task never left running")


async def test_a_task_run_from_prepare_to_read(tmp_path: Path) -> None:
    media = tmp_path / "media"
    async with xworkmate_gateway(tmp_path, {"openClawMediaDir": str(media)}) as xw:
        prepared = await xw.ok(
            "xworkmate.session.prepare",
            {
                "xworkmate": {
                    "schemaVersion": 1,
                    "appThreadKey": APP_KEY,
                    "expectedArtifactDirs": ["reports", "assets/images"],
                },
                "openclawSessionKey": SESSION,
                "runId": "turn-1",
            },
        )
        scope = prepared["artifactScope"]
        assert scope == "tasks/agent_main_thread-main/turn-1"
        assert prepared["expectedArtifactDirs"] == ["reports/", "assets/images/"]

        message = (
            f"write reports/final.md: {REPORT.replace(chr(10), chr(92) + 'n')}\n"
            f"write assets/images/x.svg: {SVG}\n"
            "reply: wrote the report and the image"
        )
        ack = await xw.ok(
            "chat.send", {"sessionKey": SESSION, "message": message, "idempotencyKey": "turn-1"}
        )
        assert ack == {"runId": "turn-1", "status": "started"}

        status = await poll_until_done(xw, {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert status["status"] == "completed"
        assert status["taskStatus"] == "succeeded"
        assert status["taskId"] == native_task_id(SESSION, "turn-1")
        assert status["openclawSessionKey"] == SESSION
        assert status["artifactScope"] == scope
        assert sorted(a["relativePath"] for a in status["artifacts"]) == [
            "assets/images/x.svg",
            "reports/final.md",
        ]
        # The agent wrote into its workspace, the root export falls back to.
        assert (xw.workspace / "reports" / "final.md").read_text() == REPORT

        rendered = write(media / "cover.png", b"\x89PNG\r\n")
        run = {"openclawSessionKey": SESSION, "runId": "turn-1"}
        snapshot = await xw.ok(
            "xworkmate.artifacts.collect-and-snapshot", {**run, "sourceFiles": [str(rendered)]}
        )
        assert [c["relativePath"] for c in snapshot["copiedFiles"]] == [
            "artifacts/generated-media/cover.png"
        ]
        exported_scope = await xw.ok(
            "xworkmate.artifacts.export", {**run, "requiredArtifactExtensions": ["png"]}
        )
        # Scoped files win: once the scope has a file, the expected dirs are not adopted.
        assert [a["relativePath"] for a in exported_scope["artifacts"]] == [
            "artifacts/generated-media/cover.png"
        ]
        assert exported_scope["constraintSatisfied"] is True
        (xw.scope_dir() / "artifacts" / "generated-media" / "cover.png").unlink()

        exported = await xw.ok(
            "xworkmate.artifacts.export",
            {**run, "requiredArtifactExtensions": ["md", "svg"], "extraBridgeField": True},
        )
        assert exported["constraintSatisfied"] is True
        assert exported["expectedArtifactDirs"] == ["reports/", "assets/images/"]
        assert exported["expectedArtifactDirStatus"] == [
            {"relativePath": "reports/", "exists": True},
            {"relativePath": "assets/images/", "exists": True},
        ]
        by_path = {a["relativePath"]: a for a in exported["artifacts"]}
        assert set(by_path) == {"reports/final.md", "assets/images/x.svg"}
        assert base64.b64decode(by_path["reports/final.md"]["content"]).decode() == REPORT
        assert by_path["assets/images/x.svg"]["contentType"] == "image/svg+xml"

        for relative, expected in (("reports/final.md", REPORT), ("assets/images/x.svg", SVG)):
            token = by_path[relative]["artifactRef"]
            read = await xw.ok("xworkmate.artifacts.read", {**run, "artifactRef": token})
            [artifact] = read["artifacts"]
            assert artifact["relativePath"] == relative
            assert base64.b64decode(artifact["content"]).decode() == expected
            assert artifact["sha256"] == by_path[relative]["sha256"]
            by_scope = await xw.ok(
                "xworkmate.artifacts.read",
                {**run, "artifactScope": scope, "relativePath": relative},
            )
            assert by_scope["artifacts"][0]["sha256"] == artifact["sha256"]
