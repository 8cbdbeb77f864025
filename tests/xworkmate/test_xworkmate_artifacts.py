"""``xworkmate.artifacts.export|list|read|collect-and-snapshot`` over a real gateway."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from tests.xworkmate.xworkmate_support import (
    SESSION,
    XwGateway,
    prepare_params,
    write,
    xworkmate_gateway,
)

RUN = {"openclawSessionKey": SESSION, "runId": "turn-1"}


def refusal(message: str) -> dict[str, str]:
    return {"code": "INVALID_REQUEST", "message": message}


@pytest.mark.parametrize(
    "method",
    [
        "xworkmate.artifacts.export",
        "xworkmate.artifacts.list",
        "xworkmate.artifacts.read",
        "xworkmate.artifacts.collect-and-snapshot",
    ],
)
async def test_run_and_session_are_required(tmp_path: Path, method: str) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        assert await xw.error(method, {"openclawSessionKey": SESSION}) == refusal("runId required")
        no_key = {"runId": "turn-1", "sessionKey": SESSION}
        assert await xw.error(method, no_key) == refusal("openclawSessionKey required")
        other = {**RUN, "artifactScope": "tasks/agent_main_thread-main/turn-0"}
        assert await xw.error(method, other) == refusal(
            "artifactScope does not match sessionKey/runId"
        )


async def test_export_carries_the_prepared_dirs(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params(expectedArtifactDirs=["out"]))
        write(xw.workspace / "out" / "a.csv", "a,b\n")
        write(xw.workspace / "reports" / "r.md", "r")
        result = await xw.ok("xworkmate.artifacts.export", RUN)
        assert result["expectedArtifactDirs"] == ["out/"]
        assert [a["relativePath"] for a in result["artifacts"]] == ["out/a.csv"]
        assert base64.b64decode(result["artifacts"][0]["content"]) == b"a,b\n"
        assert result["constraintSatisfied"] is True
        overridden = await xw.ok(
            "xworkmate.artifacts.export",
            {**RUN, "expectedArtifactDirs": ["reports/"], "requiredArtifactExtensions": [".pdf"]},
        )
        assert [a["relativePath"] for a in overridden["artifacts"]] == ["reports/r.md"]
        assert overridden["missingRequiredExtensions"] == ["pdf"]
        assert overridden["constraintSatisfied"] is False
        bad_dirs = {**RUN, "expectedArtifactDirs": ["a/../.."]}
        assert await xw.error("xworkmate.artifacts.export", bad_dirs) == refusal(
            "expectedArtifactDir must stay inside the workspace"
        )


async def test_export_without_a_mapping_uses_the_default_dirs(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        write(xw.workspace / "dist" / "app.js", "js")
        result = await xw.ok("xworkmate.artifacts.export", RUN)
        assert [a["relativePath"] for a in result["artifacts"]] == ["dist/app.js"]
        assert result["warnings"] == []  # found something, so no "not prepared" warning


async def test_export_options_and_config_limits(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path, {"maxFiles": 2, "maxInlineBytes": 3}) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        for name in ("a.txt", "b.txt", "c.txt"):
            write(xw.scope_dir() / name, "1234")
        result = await xw.ok("xworkmate.artifacts.export", RUN)
        assert len(result["artifacts"]) == 2
        assert "artifact limit reached; skipped remaining files after 2" in result["warnings"]
        assert all("content" not in a for a in result["artifacts"])
        params = {**RUN, "maxFiles": 5, "maxInlineBytes": 4, "includeContent": True}
        wide = await xw.ok("xworkmate.artifacts.export", params)
        assert len(wide["artifacts"]) == 3
        assert all(a["content"] == "MTIzNA==" for a in wide["artifacts"])
        invalid = {**RUN, "maxFiles": -1, "maxInlineBytes": "lots"}
        fallback = await xw.ok("xworkmate.artifacts.export", invalid)
        assert len(fallback["artifacts"]) == 2


async def test_list_is_export_without_content_and_with_a_manifest(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        empty = await xw.ok("xworkmate.artifacts.list", RUN)
        assert empty["manifestMarkdown"] == (
            "## XWorkmate artifacts\n\n"
            f"Workspace: `{prepared['remoteWorkingDirectory']}`\n"
            f"Artifact scope: `{prepared['artifactScope']}`\n\n"
            "No artifacts found for this task run."
        )
        write(xw.scope_dir() / "report|1.md", "x" * 2048)
        result = await xw.ok("xworkmate.artifacts.list", {**RUN, "includeContent": True})
        [artifact] = result["artifacts"]
        assert "content" not in artifact
        lines = result["manifestMarkdown"].splitlines()
        assert lines[5:] == [
            "| File | Type | Size | SHA-256 | Inline |",
            "| --- | --- | ---: | --- | --- |",
            f"| `report\\|1.md` | text/markdown | 2.0 KiB | `{artifact['sha256'][:12]}` | no |",
        ]


async def read(xw: XwGateway, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await xw.ok("xworkmate.artifacts.read", {**RUN, **params})
    return result


async def test_read_by_ref_and_by_path(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        write(xw.scope_dir() / "reports" / "final.md", "final")
        listed = await xw.ok("xworkmate.artifacts.list", RUN)
        token = listed["artifacts"][0]["artifactRef"]
        by_ref = await read(xw, artifactRef=token)
        assert base64.b64decode(by_ref["artifacts"][0]["content"]) == b"final"
        by_path = await read(
            xw, artifactScope=prepared["artifactScope"], relativePath="reports/final.md"
        )
        assert by_path["artifacts"][0]["sha256"] == by_ref["artifacts"][0]["sha256"]
        other_run = {"openclawSessionKey": SESSION, "runId": "turn-2", "artifactRef": token}
        assert await xw.error("xworkmate.artifacts.read", other_run) == refusal(
            "artifactRef does not match sessionKey/runId"
        )


@pytest.mark.parametrize(
    "relative", ["../../../../../etc/passwd", "/etc/passwd", "a/../../x", "x\x00y", "leak.txt"]
)
async def test_read_never_leaves_the_scope(tmp_path: Path, relative: str) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        secret = write(tmp_path / "secret.txt", "secret")
        os.symlink(secret, xw.scope_dir() / "leak.txt")
        params = {"artifactScope": prepared["artifactScope"], "relativePath": relative}
        assert await xw.error("xworkmate.artifacts.read", {**RUN, **params}) == refusal(
            "relativePath must stay inside the workspace"
        )


async def test_a_workspace_dir_param_cannot_escape(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        outside = tmp_path / "elsewhere"
        write(outside / "tasks" / "agent_main_thread-main" / "turn-1" / "x.md")
        for method in ("xworkmate.artifacts.export", "xworkmate.artifacts.read"):
            params = {**RUN, "workspaceDir": str(outside), "relativePath": "x.md"}
            assert await xw.error(method, params) == refusal(
                "workspaceDir must stay inside the configured workspace"
            )
        xw.workspace.mkdir(parents=True, exist_ok=True)
        os.symlink(outside, xw.workspace / "link")
        via_link = {**RUN, "workspaceDir": str(xw.workspace / "link")}
        assert await xw.error("xworkmate.artifacts.export", via_link) == refusal(
            "workspaceDir must stay inside the configured workspace"
        )


async def test_collect_and_snapshot(tmp_path: Path) -> None:
    media = tmp_path / "media"
    staging = tmp_path / "tmp-openclaw"
    config = {"openClawMediaDir": str(media), "openClawTmpDir": str(staging), "snapshotMaxFiles": 2}
    async with xworkmate_gateway(tmp_path, config) as xw:
        prepared = await xw.ok("xworkmate.session.prepare", prepare_params())
        current = write(media / "current.png", b"\x89PNG")
        clip = write(staging / "clips" / "clip.mp4", b"mp4")
        extra = write(media / "third.png", b"3")
        outside = write(tmp_path / "private.txt", "no")
        os.symlink(outside, media / "sneaky.png")
        sources = [
            "relative/file.png",
            7,
            str(outside),
            str(media / "sneaky.png"),
            str(media),
            str(current),
            str(clip),
            str(extra),
        ]
        result = await xw.ok(
            "xworkmate.artifacts.collect-and-snapshot", {**RUN, "sourceFiles": sources}
        )
        scope_dir = xw.scope_dir()
        assert result["artifactScope"] == prepared["artifactScope"]
        assert result["artifactDirectory"] == str(scope_dir)
        assert result["snapshotDirectory"] == str(scope_dir / "artifacts")
        assert [c["relativePath"] for c in result["copiedFiles"]] == [
            "artifacts/generated-media/current.png",
            "artifacts/generated-tmp/clip.mp4",
        ]
        assert result["warnings"] == [
            "skipped non-absolute snapshot source file",
            "skipped non-absolute snapshot source file",
            "skipped referenced source file outside managed staging roots: private.txt",
            "skipped referenced source file outside managed staging roots: sneaky.png",
            "skipped referenced source file outside managed staging roots: media",
            "snapshot file limit reached; skipped remaining files after 2",
        ]
        copied = scope_dir / "artifacts" / "generated-media" / "current.png"
        assert copied.read_bytes() == b"\x89PNG"
        exported = await xw.ok("xworkmate.artifacts.export", RUN)
        assert sorted(a["relativePath"] for a in exported["artifacts"]) == [
            "artifacts/generated-media/current.png",
            "artifacts/generated-tmp/clip.mp4",
        ]
        none = await xw.ok("xworkmate.artifacts.collect-and-snapshot", RUN)
        assert none["copiedFiles"] == []
        assert none["warnings"] == [
            "no task-referenced source files supplied; shared media roots were not scanned"
        ]


async def test_snapshot_replaces_a_planted_symlink_instead_of_following_it(
    tmp_path: Path,
) -> None:
    media = tmp_path / "media"
    async with xworkmate_gateway(tmp_path, {"openClawMediaDir": str(media)}) as xw:
        await xw.ok("xworkmate.session.prepare", prepare_params())
        target = write(tmp_path / "victim.txt", "keep me")
        planted = xw.scope_dir() / "artifacts" / "generated-media"
        planted.mkdir(parents=True)
        os.symlink(target, planted / "current.png")
        source = write(media / "current.png", b"png")
        result = await xw.ok(
            "xworkmate.artifacts.collect-and-snapshot", {**RUN, "sourceFiles": [str(source)]}
        )
        assert len(result["copiedFiles"]) == 1
        assert target.read_text() == "keep me"
        assert not (planted / "current.png").is_symlink()
        assert (planted / "current.png").read_bytes() == b"png"
        # A symlinked target directory is refused outright.
        (planted / "current.png").unlink()
        planted.rmdir()
        os.symlink(tmp_path, planted)
        assert await xw.error(
            "xworkmate.artifacts.collect-and-snapshot", {**RUN, "sourceFiles": [str(source)]}
        ) == refusal("artifactScope must stay inside the workspace")
