"""``xworkmate.artifacts.read`` as a function: lookups, refusals, path escapes."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from clawline.xworkmate.export import export_artifacts
from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.read import read_artifact
from clawline.xworkmate.scope import TaskScope
from tests.xworkmate.xworkmate_support import SECRET, options, write

SCOPE = TaskScope("agent:main:thread-main", "turn-1")
OUTSIDE = "relativePath must stay inside the workspace"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    (path / SCOPE.relative).mkdir(parents=True)
    return Path(os.path.realpath(path))


def read(root: Path, expected_dirs: list[str] | None = None, **params: Any) -> dict[str, Any]:
    return dict(
        read_artifact(
            root,
            SCOPE,
            params,
            expected_dirs=expected_dirs or [],
            secret=SECRET,
            max_inline_bytes=params.pop("max_inline", 1024),
        )
    )


def refused(root: Path, message: str, **params: Any) -> None:
    with pytest.raises(XWorkmateError) as caught:
        read(root, **params)
    assert str(caught.value) == message


def ref_for(root: Path, relative: str, expected_dirs: list[str] | None = None) -> str:
    exported = export_artifacts(root, SCOPE, options(expected_dirs=expected_dirs or []), SECRET)
    artifacts: Any = exported["artifacts"]
    return next(str(a["artifactRef"]) for a in artifacts if a["relativePath"] == relative)


def content(result: dict[str, Any]) -> bytes:
    return base64.b64decode(result["artifacts"][0]["content"])


def test_read_by_scope_and_path(root: Path) -> None:
    write(root / SCOPE.relative / "reports" / "final.md", "final")
    result = read(root, artifactScope=SCOPE.relative, relativePath="reports/final.md")
    assert content(result) == b"final"
    assert result["artifactScope"] == SCOPE.relative
    assert result["warnings"] == []
    [artifact] = result["artifacts"]
    assert artifact["relativePath"] == "reports/final.md"
    assert artifact["contentType"] == "text/markdown"
    again = read(root, artifactRef=artifact["artifactRef"])
    assert content(again) == b"final"


def test_read_by_ref_returns_that_ref(root: Path) -> None:
    write(root / SCOPE.relative / "a.txt", "a")
    token = ref_for(root, "a.txt")
    result = read(root, artifactRef=token, relativePath="./a.txt", artifactScope=SCOPE.relative)
    assert result["artifacts"][0]["artifactRef"] == token
    assert content(result) == b"a"


def test_files_of_expected_dirs_are_read_from_the_workspace_root(root: Path) -> None:
    write(root / "assets" / "images" / "x.svg", "<svg/>")
    token = ref_for(root, "assets/images/x.svg", ["assets/images/"])
    assert content(read(root, ["assets/images/"], artifactRef=token)) == b"<svg/>"
    by_path = read(
        root, ["assets/"], artifactScope=SCOPE.relative, relativePath="assets/images/x.svg"
    )
    assert content(by_path) == b"<svg/>"
    refused(root, "relativePath must point to a file", artifactRef=token)  # not expected now


def test_expected_dir_reads_follow_the_scan_rules(root: Path) -> None:
    write(root / "dist" / "app.js", "app")
    write(root / "dist" / "node_modules" / "dep" / "index.js", "dep")
    write(root / "dist" / "secret.env", "TOKEN=1")
    write(root / "dist" / "artifact-ignore.md", "*.env\n")
    dirs = ["dist/"]
    assert content(read(root, dirs, artifactScope=SCOPE.relative, relativePath="dist/app.js")) == (
        b"app"
    )
    for hidden in ("dist/node_modules/dep/index.js", "dist/secret.env", "dist/artifact-ignore.md"):
        refused(
            root,
            "relativePath must point to a file",
            expected_dirs=dirs,
            artifactScope=SCOPE.relative,
            relativePath=hidden,
        )


def test_a_large_file_is_described_not_inlined(root: Path) -> None:
    write(root / SCOPE.relative / "big.bin", b"z" * 20)
    result = read(root, artifactScope=SCOPE.relative, relativePath="big.bin", max_inline=10)
    assert "content" not in result["artifacts"][0]
    assert result["artifacts"][0]["sizeBytes"] == 20
    assert result["warnings"] == ["big.bin exceeds maxInlineBytes and was not inlined"]


def test_required_params(root: Path) -> None:
    refused(root, "artifactScope or artifactRef required")
    refused(root, "artifactScope or artifactRef required", relativePath="a.txt")
    refused(root, "relativePath required", artifactScope=SCOPE.relative)
    refused(root, "relativePath required", artifactScope=SCOPE.relative, relativePath="  ")


def test_only_the_current_runs_scope(root: Path) -> None:
    other = TaskScope("agent:main:thread-main", "turn-0").relative
    write(root / other / "old.md")
    refused(
        root,
        "artifactScope does not match sessionKey/runId",
        artifactScope=other,
        relativePath="old.md",
    )
    refused(
        root,
        "artifactScope must be a task artifact scope",
        artifactScope="reports",
        relativePath="old.md",
    )


@pytest.mark.parametrize(
    "relative",
    [
        "../turn-0/old.md",
        "a/../../turn-0/old.md",
        "..",
        "/etc/passwd",
        "\\etc\\passwd",
        "C:\\Windows\\win.ini",
        "c:/x",
        "old\x00.md",
        "..\\turn-0\\old.md",
    ],
)
def test_paths_that_leave_the_scope_are_refused(root: Path, relative: str) -> None:
    write(root / TaskScope("agent:main:thread-main", "turn-0").relative / "old.md")
    refused(root, OUTSIDE, artifactScope=SCOPE.relative, relativePath=relative)


def test_symlinks_out_of_the_scope_are_refused(root: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "secret")
    scope_dir = root / SCOPE.relative
    os.symlink(secret, scope_dir / "leak.txt")
    os.symlink(tmp_path, scope_dir / "up")
    other = write(root / TaskScope("agent:main:other", "turn-1").relative / "x.md")
    os.symlink(other, scope_dir / "sideways.md")
    for relative in ("leak.txt", "up/secret.txt", "sideways.md"):
        refused(root, OUTSIDE, artifactScope=SCOPE.relative, relativePath=relative)


def test_symlinks_out_of_an_expected_dir_are_refused(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "secret")
    (root / "reports").mkdir()
    os.symlink(tmp_path / "secret.txt", root / "reports" / "leak.md")
    refused(
        root,
        OUTSIDE,
        expected_dirs=["reports/"],
        artifactScope=SCOPE.relative,
        relativePath="reports/leak.md",
    )


def test_a_symlinked_expected_dir_is_not_a_place_to_read(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "private" / "id_rsa", "key")
    os.symlink(tmp_path / "private", root / "reports")
    refused(
        root,
        "relativePath must point to a file",
        expected_dirs=["reports/"],
        artifactScope=SCOPE.relative,
        relativePath="reports/id_rsa",
    )


def test_a_link_inside_the_scope_is_followed(root: Path) -> None:
    scope_dir = root / SCOPE.relative
    write(scope_dir / "real.md", "real")
    os.symlink(scope_dir / "real.md", scope_dir / "alias.md")
    result = read(root, artifactScope=SCOPE.relative, relativePath="alias.md")
    assert content(result) == b"real"


def test_directories_and_missing_files_are_not_files(root: Path) -> None:
    (root / SCOPE.relative / "dir").mkdir()
    for relative in ("dir", "missing.md", "./"):
        refused(
            root,
            "relativePath must point to a file",
            artifactScope=SCOPE.relative,
            relativePath=relative,
        )


def test_ref_mismatches(root: Path) -> None:
    path = write(root / SCOPE.relative / "a.txt", "a")
    write(root / SCOPE.relative / "b.txt", "b")
    token = ref_for(root, "a.txt")
    refused(
        root, "artifactRef does not match relativePath", artifactRef=token, relativePath="b.txt"
    )
    refused(
        root,
        "artifactRef does not match artifactScope",
        artifactRef=token,
        artifactScope="tasks/agent_main_thread-main/turn-2",
    )
    refused(root, OUTSIDE, artifactRef=token, relativePath="../a.txt")
    path.write_text("changed")
    refused(root, "artifactRef does not match file content", artifactRef=token)
    refused(root, "invalid artifactRef", artifactRef=token + "x")
