"""Export's scan rules and result fields, on real directories."""

from __future__ import annotations

import base64
import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from clawline.agents.confined import ConfinedDir
from clawline.xworkmate.artifacts import content_type_for
from clawline.xworkmate.export import export_artifacts, order_candidates
from clawline.xworkmate.scan import Candidate, ScanBudget, scan_tree
from clawline.xworkmate.scope import TaskScope
from tests.xworkmate.xworkmate_support import SECRET, options, write

SCOPE = TaskScope("agent:main:thread-main", "turn-1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def scope_dir(root: Path) -> Path:
    path = root / SCOPE.relative
    path.mkdir(parents=True)
    return path


def export(root: Path, **overrides: Any) -> dict[str, Any]:
    return dict(export_artifacts(root, SCOPE, options(**overrides), SECRET))


def paths(result: dict[str, Any]) -> list[str]:
    return [artifact["relativePath"] for artifact in result["artifacts"]]


def test_scope_files_relative_to_the_scope_with_every_field(root: Path, scope_dir: Path) -> None:
    write(scope_dir / "reports" / "final.md", "# Final\n")
    result = export(root)
    assert result["runId"] == "turn-1"
    assert result["sessionKey"] == "agent:main:thread-main"
    assert result["remoteWorkingDirectory"] == str(root)
    assert result["remoteWorkspaceRefKind"] == "remotePath"
    assert result["artifactScope"] == "tasks/agent_main_thread-main/turn-1"
    assert result["scopeKind"] == "task"
    assert result["warnings"] == []
    [artifact] = result["artifacts"]
    assert set(artifact) == {
        "relativePath",
        "label",
        "contentType",
        "sizeBytes",
        "sha256",
        "artifactRef",
        "artifactScope",
        "scopeKind",
        "encoding",
        "content",
    }
    assert artifact["relativePath"] == "reports/final.md"
    assert artifact["label"] == "final.md"
    assert artifact["contentType"] == "text/markdown"
    assert artifact["sizeBytes"] == 8
    assert artifact["sha256"] == hashlib.sha256(b"# Final\n").hexdigest()
    assert artifact["artifactScope"] == SCOPE.relative
    assert artifact["scopeKind"] == "task"
    assert artifact["encoding"] == "base64"
    assert base64.b64decode(artifact["content"]) == b"# Final\n"


def test_tool_directories_are_skipped_but_dist_and_build_are_exported(
    root: Path, scope_dir: Path
) -> None:
    for name in (".git", ".openclaw", ".xworkmate", ".pi", ".dart_tool", ".next", ".turbo"):
        write(scope_dir / name / "f.txt")
    write(scope_dir / "node_modules" / "m" / "index.js")
    write(scope_dir / "sub" / "node_modules" / "x.js")
    write(scope_dir / "dist" / "app.js")
    write(scope_dir / "build" / "out.bin")
    assert sorted(paths(export(root))) == ["build/out.bin", "dist/app.js"]


def test_symlinks_are_skipped_with_a_warning(root: Path, scope_dir: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "outside" / "secret.txt", "secret")
    write(scope_dir / "real.txt", "real")
    os.symlink(secret, scope_dir / "leak.txt")
    os.symlink(secret.parent, scope_dir / "linked-dir")
    os.symlink(scope_dir / "real.txt", scope_dir / "inner-link.txt")
    result = export(root)
    assert paths(result) == ["real.txt"]
    assert result["warnings"] == [
        "skipped symlink inner-link.txt",
        "skipped symlink leak.txt",
        "skipped symlink linked-dir",
    ]


def test_a_symlinked_scope_directory_is_never_scanned(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "secret.txt", "secret")
    (root / SCOPE.session_scope).mkdir(parents=True)
    os.symlink(elsewhere, root / SCOPE.relative)
    result = export(root)
    assert result["artifacts"] == []
    assert result["warnings"] == [
        f"skipped symlink {SCOPE.relative}",
        "artifact scope is not prepared for this task run",
    ]


def test_the_time_window(root: Path, scope_dir: Path) -> None:
    write(scope_dir / "a.txt")
    future_ms = (time.time() + 3600) * 1000
    # The window starts at the earlier of sinceUnixMs and the scope directory's creation
    # (its mtime where the platform has no birth time): files changed after either count.
    later = time.time() + 7200
    os.utime(scope_dir, (later, later))
    assert paths(export(root, since_ms=future_ms)) == []
    earlier = time.time() - 3600
    os.utime(scope_dir, (earlier, earlier))
    assert paths(export(root, since_ms=future_ms)) == ["a.txt"]
    assert paths(export(root, since_ms=(time.time() - 60) * 1000)) == ["a.txt"]


def test_a_missing_scope_is_created_when_a_window_is_given(root: Path) -> None:
    result = export(root, since_ms=time.time() * 1000)
    assert (root / SCOPE.relative).is_dir()
    assert result["warnings"] == ["artifact scope is not prepared for this task run"]
    assert export(root)["warnings"] == []


def test_a_missing_scope_without_a_window_is_left_alone(root: Path) -> None:
    result = export(root)
    assert not (root / "tasks").exists()
    assert result["artifacts"] == []
    assert result["warnings"] == ["artifact scope is not prepared for this task run"]


def test_the_ignore_file_applies_to_the_scope(root: Path, scope_dir: Path) -> None:
    write(
        scope_dir / "artifact-ignore.md",
        "Notes.\n\n```artifact-ignore\ndrafts/\n**/*.log\n*.tmp\nnotes/todo.md\n/abs\nx*y\n```\n",
    )
    write(scope_dir / "drafts" / "d.md")
    write(scope_dir / "deep" / "run.log")
    write(scope_dir / "scratch.tmp")
    write(scope_dir / "deep" / "kept.tmp")
    write(scope_dir / "notes" / "todo.md")
    write(scope_dir / "notes" / "keep.md")
    write(scope_dir / "report.md")
    result = export(root)
    assert sorted(paths(result)) == ["deep/kept.tmp", "notes/keep.md", "report.md"]
    assert result["warnings"] == [
        "ignored unsafe artifact ignore rule: /abs",
        "ignored unsupported artifact ignore rule: x*y",
    ]


def test_expected_dirs_are_the_fallback_when_the_scope_is_empty(
    root: Path, scope_dir: Path
) -> None:
    write(root / "reports" / "final.md", "report")
    write(root / "assets" / "images" / "cover.png", b"\x89PNG")
    write(root / "root-file.md")
    write(root / "other" / "x.md")
    write(root / "tasks" / "agent_main_thread-main" / "turn-0" / "old.md")
    result = export(root, expected_dirs=["reports/", "assets/images/", "tasks/"])
    assert sorted(paths(result)) == ["assets/images/cover.png", "reports/final.md"]
    assert {a["artifactScope"] for a in result["artifacts"]} == {SCOPE.relative}
    assert result["warnings"] == ["skipped expected artifact dir inside task scopes: tasks/"]
    assert result["expectedArtifactDirStatus"] == [
        {"relativePath": "reports/", "exists": True},
        {"relativePath": "assets/images/", "exists": True},
        {"relativePath": "tasks/", "exists": True},
    ]


def test_scoped_files_win_over_expected_dirs(root: Path, scope_dir: Path) -> None:
    write(root / "reports" / "final.md")
    write(scope_dir / "mine.md")
    assert paths(export(root, expected_dirs=["reports/"])) == ["mine.md"]


def test_no_expected_dirs_means_no_fallback(root: Path, scope_dir: Path) -> None:
    write(root / "reports" / "final.md")
    assert paths(export(root, expected_dirs=[])) == []


def test_nested_expected_dirs_are_scanned_once_under_the_outer_rules(root: Path) -> None:
    write(root / "assets" / "a.svg")
    write(root / "assets" / "images" / "x.png")
    write(root / "assets" / "images" / "draft.png")
    write(root / "assets" / "artifact-ignore.md", "images/draft.png\n")
    write(root / "assets" / "images" / "artifact-ignore.md", "x.png\n")
    result = export(root, expected_dirs=["assets/images/", "assets/", "missing/"])
    assert sorted(paths(result)) == ["assets/a.svg", "assets/images/x.png"]
    assert result["expectedArtifactDirStatus"][2] == {"relativePath": "missing/", "exists": False}
    assert result["warnings"] == []


def test_a_symlinked_expected_dir_is_skipped(root: Path, scope_dir: Path, tmp_path: Path) -> None:
    write(tmp_path / "private" / "id_rsa", "key")
    os.symlink(tmp_path / "private", root / "reports")
    result = export(root, expected_dirs=["reports/"])
    assert result["artifacts"] == []
    assert result["warnings"] == ["skipped symlink reports/"]
    assert result["expectedArtifactDirStatus"] == [{"relativePath": "reports/", "exists": False}]


def test_order_newest_change_first_and_the_limit_keeps_required_extensions(
    root: Path, scope_dir: Path
) -> None:
    for name in ("old.pdf", "b.md", "a.md", "new.txt"):
        write(scope_dir / name)
        time.sleep(0.01)  # change times (ctime included) a few milliseconds apart
    assert paths(export(root)) == ["new.txt", "a.md", "b.md", "old.pdf"]
    limited = export(root, max_files=2, required_extensions=["pdf"])
    assert paths(limited) == ["old.pdf", "new.txt"]
    assert limited["warnings"] == ["artifact limit reached; skipped remaining files after 2"]
    assert limited["constraintSatisfied"] is True
    cut = export(root, max_files=1, required_extensions=["svg"])
    assert cut["missingRequiredExtensions"] == ["svg"]


def test_equal_change_times_order_by_path_without_duplicates() -> None:
    def at(path: str, ms: int) -> Candidate:
        return Candidate(f"x/{path}", path, 1, ms)

    found = [at("b.md", 5), at("B.md", 5), at("a.md", 5), at("c.pdf", 1), at("a.md", 9)]
    ordered = order_candidates(found, ["pdf"])
    assert [(c.relative_path, c.changed_ms) for c in ordered] == [
        ("c.pdf", 1),
        ("a.md", 5),
        ("B.md", 5),
        ("b.md", 5),
    ]


def test_required_extensions_and_counts(root: Path, scope_dir: Path) -> None:
    write(scope_dir / "a.md")
    write(scope_dir / "b.MD")
    write(scope_dir / "c.svg")
    result = export(
        root, required_extensions=["md", "pdf", "svg"], expected_counts={"md": 2, "svg": 2}
    )
    assert result["constraintSatisfied"] is False
    assert result["missingRequiredExtensions"] == ["pdf"]
    assert result["missingRequiredFileCounts"] == {"svg": {"expected": 2, "actual": 1}}
    satisfied = export(root, required_extensions=["md"], expected_counts={"md": 2})
    assert satisfied["constraintSatisfied"] is True
    assert satisfied["missingRequiredExtensions"] == []
    assert satisfied["missingRequiredFileCounts"] == {}


def test_inline_limit_and_include_content(root: Path, scope_dir: Path) -> None:
    write(scope_dir / "big.bin", b"x" * 11)
    write(scope_dir / "small.txt", b"y" * 10)
    result = export(root, max_inline_bytes=10)
    by_path = {a["relativePath"]: a for a in result["artifacts"]}
    assert "content" not in by_path["big.bin"]
    assert "encoding" not in by_path["big.bin"]
    assert by_path["big.bin"]["sizeBytes"] == 11
    assert base64.b64decode(by_path["small.txt"]["content"]) == b"y" * 10
    assert result["warnings"] == ["big.bin exceeds maxInlineBytes and was not inlined"]
    listed = export(root, max_inline_bytes=10, include_content=False)
    assert listed["warnings"] == []
    assert all("content" not in a for a in listed["artifacts"])


def test_the_scan_budget_stops_a_huge_tree(root: Path, scope_dir: Path) -> None:
    for n in range(5):
        write(scope_dir / f"f{n}.txt")
    warnings: list[str] = []
    with ConfinedDir.open(root) as top:
        found = scan_tree(
            top, SCOPE.relative, prefix="", since_ms=0, warnings=warnings, budget=ScanBudget(3)
        )
    assert [c.relative_path for c in found] == ["f0.txt", "f1.txt", "f2.txt"]
    assert warnings == ["artifact scan stopped after 3 entries"]


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("a.md", "text/markdown"),
        ("a.markdown", "text/markdown"),
        ("a.TXT", "text/plain"),
        ("a.log", "text/plain"),
        ("a.json", "application/json"),
        ("a.csv", "text/csv"),
        ("a.html", "text/html"),
        ("a.htm", "text/html"),
        ("a.pdf", "application/pdf"),
        ("a.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        ("a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("a.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("a.png", "image/png"),
        ("a.jpg", "image/jpeg"),
        ("a.jpeg", "image/jpeg"),
        ("a.gif", "image/gif"),
        ("a.svg", "image/svg+xml"),
        ("a.mp4", "video/mp4"),
        ("a.mov", "video/quicktime"),
        ("a.webm", "video/webm"),
        ("a.bin", "application/octet-stream"),
        ("noext", "application/octet-stream"),
    ],
)
def test_content_types(name: str, content_type: str) -> None:
    assert content_type_for(f"dir/{name}") == content_type
