"""``xworkmate.artifacts.collect-and-snapshot``: copy generated media into the task
scope so export finds it.

Only files the caller names (absolute ``sourceFiles``) are copied, and only from the managed
staging roots — ``openClawMediaDir`` (label ``generated-media``) and ``openClawTmpDir``
(``generated-tmp``) — to ``<scope>/artifacts/<label>/<name>``. The shared roots are never
listed. A source is resolved once (``realpath``) to find its staging root, then opened from that
root without following any symlink, so a directory swapped for a symlink after the check is
refused; a hard-linked source is refused unless ``[tools.fs] allowHardlinks``. A copy is written
to a temporary file in the (symlink-free) target directory and renamed into place
(:meth:`~clawline.agents.confined.ConfinedDir.replace`), so a symlink planted at the target name
is replaced, never followed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from clawline.agents.confined import (
    ConfinedDir,
    ConfinedPathError,
    NotRegularFile,
    SymlinkRefused,
)
from clawline.config import XWorkmateSettings
from clawline.types import JSON, JSONObject
from clawline.xworkmate.open_params import XWorkmateError, positive_int
from clawline.xworkmate.paths import SCOPE_ESCAPE_ERROR, is_within, make_directory
from clawline.xworkmate.scope import TaskScope
from clawline.xworkmate.workspace_root import open_root

SNAPSHOT_DIR = "artifacts"
NO_SOURCES = "no task-referenced source files supplied; shared media roots were not scanned"
_CHUNK = 1024 * 1024


def _managed_roots(config: XWorkmateSettings) -> list[tuple[Path, str]]:
    return [
        (Path(os.path.realpath(config.media_dir)), "generated-media"),
        (Path(os.path.realpath(config.tmp_dir)), "generated-tmp"),
    ]


def _open_source(base: Path, source: Path, allow_hardlinks: bool) -> BinaryIO:
    """The regular file at the real path ``source`` below the real staging root ``base``,
    reached from ``base`` without following a symlink."""
    with ConfinedDir.open(base, allow_hardlinks=allow_hardlinks) as staging:
        reader, _ = staging.open_file(source.relative_to(base).as_posix())
    return reader


class _Copied:
    """The chunks of a source, counted and digested as they pass."""

    def __init__(self, reader: BinaryIO) -> None:
        self._reader = reader
        self.size = 0
        self._digest = hashlib.sha256()

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self._reader.read(_CHUNK):
            self._digest.update(chunk)
            self.size += len(chunk)
            yield chunk

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()


def collect_and_snapshot(
    root: Path, scope: TaskScope, params: Mapping[str, Any], config: XWorkmateSettings
) -> JSONObject:
    """Copy the requested sources; the result names what was copied and why others were not."""
    with open_root(root, create=True, allow_hardlinks=config.allow_hardlinks) as top:
        return _collect(root, top, scope, params, config)


def _collect(
    root: Path,
    top: ConfinedDir,
    scope: TaskScope,
    params: Mapping[str, Any],
    config: XWorkmateSettings,
) -> JSONObject:
    scope_dir = make_directory(top, scope.relative)
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
        found = next(
            ((base, lbl) for base, lbl in roots if real != base and is_within(base, real)), None
        )
        outside = f"skipped referenced source file outside managed staging roots: {Path(item).name}"
        if found is None:
            warnings.append(outside)
            continue
        base, label = found
        relative = f"{SNAPSHOT_DIR}/{label}/{real.name}"
        make_directory(top, f"{scope.relative}/{SNAPSHOT_DIR}/{label}")
        try:
            reader = _open_source(base, real, config.allow_hardlinks)
        except SymlinkRefused:
            warnings.append(outside)
            continue
        except NotRegularFile:
            warnings.append(f"skipped snapshot source file that is not a file: {real.name}")
            continue
        except ConfinedPathError as error:
            warnings.append(f"skipped snapshot source file {real.name}: {error}")
            continue
        except OSError as error:
            warnings.append(f"skipped snapshot source file {real.name}: {error.strerror}")
            continue
        copy = _Copied(reader)
        try:
            with reader:
                top.replace(f"{scope.relative}/{relative}", copy, parents=False, mode=0o600)
        except SymlinkRefused:
            raise XWorkmateError(SCOPE_ESCAPE_ERROR) from None
        except ConfinedPathError as error:
            warnings.append(f"skipped snapshot source file {real.name}: {error}")
            continue
        except OSError as error:
            warnings.append(f"skipped snapshot source file {real.name}: {error.strerror}")
            continue
        copied.append(
            {
                "sourceFile": item,
                "relativePath": relative,
                "label": label,
                "sizeBytes": copy.size,
                "sha256": copy.sha256,
            }
        )
    return {
        **scope.result_fields(root),
        "artifactDirectory": str(scope_dir),
        "snapshotDirectory": str(scope_dir / SNAPSHOT_DIR),
        "copiedFiles": copied,
        "warnings": warnings,
    }
