"""``xworkmate.artifacts.read``: one artifact of the current task run, by signed
``artifactRef`` or by ``artifactScope`` + ``relativePath``.

A path never leaves its scope: absolute paths, ``..`` segments and NULs are refused outright,
and a symlink on the way may only lead to a place inside the directory it was looked up in —
``relativePath must stay inside the workspace``. The symlinks are resolved by the confined walk
(:class:`~clawline.agents.confined.ConfinedDir`, policy ``within``) from descriptors it holds,
never by the kernel, so a swap while the file is opened cannot redirect the read. A hard-linked
file is ``relativePath must not be hard-linked`` unless ``[tools.fs] allowHardlinks``. A path
is looked up in the task scope first and, when no such file is there, under the workspace
root inside one of the expected artifact directories (where export's fallback found it), and
only a file that export's scan of that directory would consider (no
``.git``/``node_modules``/… on the way, not excluded by its ``artifact-ignore.md``); the
``tasks/`` tree is never such a directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawline.agents.confined import (
    ConfinedDir,
    ConfinedPathError,
    HardlinkRefused,
    SymlinkRefused,
)
from clawline.types import JSONObject
from clawline.xworkmate.artifacts import NOT_A_FILE, FileRead, describe, read_file
from clawline.xworkmate.constants import TASK_SCOPE_ROOT
from clawline.xworkmate.export import base_result
from clawline.xworkmate.open_params import XWorkmateError, optional_string
from clawline.xworkmate.paths import dir_status
from clawline.xworkmate.refs import ArtifactRef, verify_ref
from clawline.xworkmate.scan import exported_from_expected_dir, top_level_dirs
from clawline.xworkmate.scope import TaskScope
from clawline.xworkmate.workspace_root import open_root

OUTSIDE = "relativePath must stay inside the workspace"
HARDLINKED = "relativePath must not be hard-linked"
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
    root: ConfinedDir, scope: TaskScope, relative: str, expected_dirs: list[str]
) -> list[tuple[str, str]]:
    """Where ``relative`` may live, in order, as (directory, path inside it): the task scope,
    then the expected directory holding it. Each directory is real, reached without symlinks."""
    places: list[tuple[str, str]] = []
    if dir_status(root, scope.relative) == "dir":
        places.append((scope.relative, relative))
    for directory in top_level_dirs(expected_dirs):
        if (
            directory.split("/", 1)[0] != TASK_SCOPE_ROOT
            and relative.startswith(directory)
            and dir_status(root, directory) == "dir"
        ):
            inner = relative[len(directory) :]
            if exported_from_expected_dir(root, directory, inner):
                places.append((directory.rstrip("/"), inner))
    return places


def _read_located(
    root: ConfinedDir,
    scope: TaskScope,
    relative: str,
    expected_dirs: list[str],
    inline_limit: int,
) -> FileRead:
    """``relative`` read from the first place that has it; inside that place symlinks are
    followed, one leading out of it is refused."""
    for base, inner in _lookup_places(root, scope, relative, expected_dirs):
        try:
            with root.opendir(base, symlinks="within") as place:
                return read_file(place, inner, inline_limit=inline_limit)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except SymlinkRefused:
            raise XWorkmateError(OUTSIDE) from None
        except HardlinkRefused:
            raise XWorkmateError(HARDLINKED) from None
        except (ConfinedPathError, OSError):
            raise XWorkmateError(NOT_A_FILE) from None
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
    allow_hardlinks: bool = False,
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
    try:
        top = open_root(root, allow_hardlinks=allow_hardlinks)
    except FileNotFoundError:
        raise XWorkmateError(NOT_A_FILE) from None
    with top:
        read = _read_located(top, scope, relative, expected_dirs, max_inline_bytes)
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
        result = base_result(root, top, scope, expected_dirs, warnings)
    result["artifacts"] = [artifact]
    return result
