"""Hard links in a task scope: export, read and snapshot refuse a file whose link count is
above 1 unless ``[tools.fs] allowHardlinks`` — a planted hard link would otherwise have its
content inlined into the result."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from clawline.config import XWorkmateSettings
from clawline.xworkmate.export import export_artifacts
from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.read import read_artifact
from clawline.xworkmate.scope import TaskScope
from clawline.xworkmate.snapshot import collect_and_snapshot
from tests.xworkmate.xworkmate_support import SECRET, options, write

SCOPE = TaskScope("agent:main:thread-main", "turn-1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    (path / SCOPE.relative).mkdir(parents=True)
    return Path(os.path.realpath(path))


@pytest.fixture
def planted(root: Path, tmp_path: Path) -> Path:
    """``leak.txt`` in the scope and ``reports/leak.md``: hard links to a private file."""
    secret = write(tmp_path / "private" / "id_rsa", "PRIVATE KEY")
    os.link(secret, root / SCOPE.relative / "leak.txt")
    (root / "reports").mkdir()
    os.link(secret, root / "reports" / "leak.md")
    write(root / SCOPE.relative / "report.md", "report")
    return secret


def read(root: Path, relative: str, *, allow: bool = False) -> dict[str, Any]:
    params = {"artifactScope": SCOPE.relative, "relativePath": relative}
    return dict(
        read_artifact(
            root,
            SCOPE,
            params,
            expected_dirs=["reports/"],
            secret=SECRET,
            max_inline_bytes=1024,
            allow_hardlinks=allow,
        )
    )


def test_export_skips_a_hard_linked_file(root: Path, planted: Path) -> None:
    result = export_artifacts(root, SCOPE, options(), SECRET)
    artifacts: Any = result["artifacts"]
    assert [a["relativePath"] for a in artifacts] == ["report.md"]
    assert result["warnings"] == ["skipped hard-linked file leak.txt"]
    assert b"PRIVATE KEY" not in repr(result).encode()
    (root / SCOPE.relative / "report.md").unlink()
    (root / SCOPE.relative / "leak.txt").unlink()
    fallback = export_artifacts(root, SCOPE, options(expected_dirs=["reports/"]), SECRET)
    assert fallback["artifacts"] == []
    assert fallback["warnings"] == ["skipped hard-linked file reports/leak.md"]


def test_export_inlines_a_hard_linked_file_when_allowed(root: Path, planted: Path) -> None:
    result = export_artifacts(root, SCOPE, options(allow_hardlinks=True), SECRET)
    artifacts: Any = result["artifacts"]
    by_path = {a["relativePath"]: a for a in artifacts}
    assert base64.b64decode(by_path["leak.txt"]["content"]) == b"PRIVATE KEY"
    assert result["warnings"] == []


@pytest.mark.parametrize("relative", ["leak.txt", "reports/leak.md"])
def test_read_refuses_a_hard_linked_file_unless_allowed(
    root: Path, planted: Path, relative: str
) -> None:
    with pytest.raises(XWorkmateError) as caught:
        read(root, relative)
    assert str(caught.value) == "relativePath must not be hard-linked"
    allowed = read(root, relative, allow=True)
    assert base64.b64decode(allowed["artifacts"][0]["content"]) == b"PRIVATE KEY"


def test_snapshot_refuses_a_hard_linked_source(root: Path, tmp_path: Path) -> None:
    media = tmp_path / "media"
    private = write(tmp_path / "private" / "token.txt", "TOKEN")
    media.mkdir()
    os.link(private, media / "cover.png")
    config = XWorkmateSettings(media_dir=media, tmp_dir=tmp_path / "staging")
    params = {"sourceFiles": [str(media / "cover.png")]}
    result = collect_and_snapshot(root, SCOPE, params, config)
    assert result["copiedFiles"] == []
    assert result["warnings"] == [
        "skipped snapshot source file cover.png: file has more than one hard link: cover.png"
    ]
    assert not (root / SCOPE.relative / "artifacts" / "generated-media" / "cover.png").exists()
    allowed = XWorkmateSettings(media_dir=media, tmp_dir=tmp_path / "staging", allow_hardlinks=True)
    copied: Any = collect_and_snapshot(root, SCOPE, params, allowed)["copiedFiles"]
    assert [c["relativePath"] for c in copied] == ["artifacts/generated-media/cover.png"]
