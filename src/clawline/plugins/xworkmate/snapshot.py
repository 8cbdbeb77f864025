"""``xworkmate.artifacts.collect-and-snapshot`` (§9.2): copy generated media into the task
scope so export finds it.

Only files the caller names (absolute ``sourceFiles``) are copied, and only from the managed
staging roots — ``openClawMediaDir`` (label ``generated-media``) and ``openClawTmpDir``
(``generated-tmp``) — to ``<scope>/artifacts/<label>/<name>``. The shared roots are never
listed. A copy is written to a temporary file in the (symlink-free) target directory and
renamed into place, so a symlink planted at the target name is replaced, never followed.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawline.plugins.xworkmate.envelope import positive_int
from clawline.plugins.xworkmate.paths import is_within, make_directory, open_regular
from clawline.plugins.xworkmate.scope import TaskScope
from clawline.plugins.xworkmate.settings import XWorkmateSettings
from clawline.types import JSON, JSONObject

__all__ = ["SNAPSHOT_DIR", "collect_and_snapshot"]

SNAPSHOT_DIR = "artifacts"
NO_SOURCES = "no task-referenced source files supplied; shared media roots were not scanned"
_CHUNK = 1024 * 1024


def _managed_roots(config: XWorkmateSettings) -> list[tuple[Path, str]]:
    return [
        (Path(os.path.realpath(config.media_dir)), "generated-media"),
        (Path(os.path.realpath(config.tmp_dir)), "generated-tmp"),
    ]


def _copy(source: Path, target_dir: Path, name: str) -> tuple[int, str] | None:
    """Copy the regular file ``source`` to ``target_dir/name``; (size, sha256), or ``None``
    when the source is not a regular file."""
    reader = open_regular(source)
    if reader is None:
        return None
    temp = target_dir / f".snapshot-{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    digest = hashlib.sha256()
    size = 0
    with reader:
        try:
            with os.fdopen(os.open(temp, flags, 0o600), "wb") as writer:
                while chunk := reader.read(_CHUNK):
                    writer.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            os.replace(temp, target_dir / name)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    return size, digest.hexdigest()


def collect_and_snapshot(
    root: Path, scope: TaskScope, params: Mapping[str, Any], config: XWorkmateSettings
) -> JSONObject:
    """Copy the requested sources; the result names what was copied and why others were not."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    scope_dir = make_directory(root, scope.relative)
    limit = positive_int(params.get("snapshotMaxFiles"), default=config.snapshot_max_files)
    sources = params.get("sourceFiles")
    warnings: list[str] = []
    copied: list[JSON] = []
    if not isinstance(sources, list) or not sources:
        warnings.append(NO_SOURCES)
        sources = []
    roots = _managed_roots(config)
    for item in sources:
        if len(copied) >= limit:
            warnings.append(f"snapshot file limit reached; skipped remaining files after {limit}")
            break
        if not isinstance(item, str) or "\x00" in item or not os.path.isabs(item):
            warnings.append("skipped non-absolute snapshot source file")
            continue
        real = Path(os.path.realpath(item))
        label = next((lbl for base, lbl in roots if real != base and is_within(base, real)), None)
        if label is None:
            warnings.append(
                f"skipped referenced source file outside managed staging roots: {Path(item).name}"
            )
            continue
        relative = f"{SNAPSHOT_DIR}/{label}/{real.name}"
        target_dir = make_directory(root, f"{scope.relative}/{SNAPSHOT_DIR}/{label}")
        try:
            outcome = _copy(real, target_dir, real.name)
        except OSError as error:
            warnings.append(f"skipped snapshot source file {real.name}: {error.strerror}")
            continue
        if outcome is None:
            warnings.append(f"skipped snapshot source file that is not a file: {real.name}")
            continue
        size, sha256 = outcome
        copied.append(
            {
                "sourceFile": item,
                "relativePath": relative,
                "label": label,
                "sizeBytes": size,
                "sha256": sha256,
            }
        )
    return {
        "runId": scope.run_id,
        "sessionKey": scope.session_key,
        "remoteWorkingDirectory": str(root),
        "remoteWorkspaceRefKind": "remotePath",
        "artifactScope": scope.relative,
        "scopeKind": "task",
        "artifactDirectory": str(scope_dir),
        "snapshotDirectory": str(scope_dir / SNAPSHOT_DIR),
        "copiedFiles": copied,
        "warnings": warnings,
    }
