"""``xworkmate.artifacts.read`` (§9.1): one artifact of the current task run, by signed
``artifactRef`` or by ``artifactScope`` + ``relativePath``.

A path never leaves its scope: absolute paths, ``..`` segments and NULs are refused outright,
and the file's real path (symlinks resolved) must stay inside the directory it was looked up
in — ``relativePath must stay inside the workspace``. A path is looked up in the task scope
first and, when no such file is there, under the workspace root inside one of the expected
artifact directories (where export's fallback found it), and only a file that export's scan of
that directory would consider (no ``.git``/``node_modules``/… on the way, not excluded by its
``artifact-ignore.md``); the ``tasks/`` tree is never such a directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawline.plugins.xworkmate.artifacts import NOT_A_FILE, describe, read_file
from clawline.plugins.xworkmate.constants import TASK_SCOPE_ROOT
from clawline.plugins.xworkmate.envelope import XWorkmateError, optional_string
from clawline.plugins.xworkmate.export import base_result
from clawline.plugins.xworkmate.paths import dir_status, is_within
from clawline.plugins.xworkmate.refs import ArtifactRef, verify_ref
from clawline.plugins.xworkmate.scan import exported_from_expected_dir, top_level_dirs
from clawline.plugins.xworkmate.scope import TaskScope
from clawline.types import JSONObject

__all__ = ["read_artifact", "safe_relative_path"]

OUTSIDE = "relativePath must stay inside the workspace"
_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_relative_path(value: object) -> str:
    """A request's ``relativePath`` as ``a/b/c``; refuses absolute paths, ``..`` and NULs."""
    if not isinstance(value, str) or not value.strip():
        raise XWorkmateError("relativePath required")
    text = value.strip()
    if "\x00" in text or text.startswith(("/", "\\")) or _DRIVE.match(text):
        raise XWorkmateError(OUTSIDE)
    parts = [part for part in re.split(r"[/\\]", text) if part not in ("", ".")]
    if ".." in parts:
        raise XWorkmateError(OUTSIDE)
    if not parts:
        raise XWorkmateError(NOT_A_FILE)
    return "/".join(parts)


def _lookup_places(
    root: Path, scope: TaskScope, relative: str, expected_dirs: list[str]
) -> list[tuple[Path, str]]:
    """Where ``relative`` may live, in order, as (directory, path inside it): the task scope,
    then the expected directory holding it. Each directory is real, reached without symlinks."""
    places: list[tuple[Path, str]] = []
    if dir_status(root, scope.relative) == "dir":
        places.append((root / scope.relative, relative))
    for directory in top_level_dirs(expected_dirs):
        if (
            directory.split("/", 1)[0] != TASK_SCOPE_ROOT
            and relative.startswith(directory)
            and dir_status(root, directory) == "dir"
        ):
            base, inner = root / directory.rstrip("/"), relative[len(directory) :]
            if exported_from_expected_dir(base, inner):
                places.append((base, inner))
    return places


def _locate(root: Path, scope: TaskScope, relative: str, expected_dirs: list[str]) -> Path:
    for base, inner in _lookup_places(root, scope, relative, expected_dirs):
        path = base / inner
        if not os.path.lexists(path):
            continue
        real = Path(os.path.realpath(path))
        if not is_within(Path(os.path.realpath(base)), real):
            raise XWorkmateError(OUTSIDE)
        return real
    raise XWorkmateError(NOT_A_FILE)


def _check_ref(ref: ArtifactRef, params: Mapping[str, Any], scope: TaskScope) -> str:
    relative = safe_relative_path(ref.relative_path)
    requested = params.get("relativePath")
    if optional_string(requested) and safe_relative_path(requested) != relative:
        raise XWorkmateError("artifactRef does not match relativePath")
    requested_scope = optional_string(params.get("artifactScope"))
    if requested_scope and requested_scope != ref.artifact_scope:
        raise XWorkmateError("artifactRef does not match artifactScope")
    scope.check_supplied(ref.artifact_scope)
    return relative


def read_artifact(
    root: Path,
    scope: TaskScope,
    params: Mapping[str, Any],
    *,
    expected_dirs: list[str],
    secret: bytes,
    max_inline_bytes: int,
) -> JSONObject:
    """The read result: the export shape with one artifact, inlined up to
    ``max_inline_bytes``."""
    token = optional_string(params.get("artifactRef"))
    ref: ArtifactRef | None = None
    if token:
        ref = verify_ref(token, root=root, scope=scope, secret=secret)
        relative = _check_ref(ref, params, scope)
    else:
        if not optional_string(params.get("artifactScope")):
            raise XWorkmateError("artifactScope or artifactRef required")
        scope.check_supplied(params.get("artifactScope"))
        relative = safe_relative_path(params.get("relativePath"))
    path = _locate(root, scope, relative, expected_dirs)
    read = read_file(path, inline_limit=max_inline_bytes)
    if ref is not None and (ref.size_bytes != read.size or ref.sha256 != read.sha256):
        raise XWorkmateError("artifactRef does not match file content")
    warnings: list[str] = []
    artifact = describe(
        root=root,
        scope=scope,
        relative_path=relative,
        read=read,
        secret=secret,
        include_content=True,
        warnings=warnings,
    )
    if ref is not None:
        artifact["artifactRef"] = token
    result = base_result(root, scope, expected_dirs, warnings)
    result["artifacts"] = [artifact]
    return result
