"""Artifact export: scan a task run's files, order and cap them, describe each.

:func:`export_artifacts` is blocking (file system); the gateway methods run it in a worker
thread. Options come from the request, then ``[plugins.xworkmate]``, then the defaults
(:meth:`ExportOptions.from_params`). The workspace root is held open for the whole export and
every file is reached from it without following a symlink
(:class:`~clawline.agents.confined.ConfinedDir`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawline.agents.confined import (
    ConfinedDir,
    ConfinedPathError,
    HardlinkRefused,
    SymlinkRefused,
)
from clawline.config import XWorkmateSettings
from clawline.types import JSON, JSONObject
from clawline.xworkmate.artifacts import describe, read_file
from clawline.xworkmate.open_params import (
    non_negative_int,
    non_negative_number,
    optional_bool,
    positive_int,
)
from clawline.xworkmate.paths import dir_status, make_directory
from clawline.xworkmate.scan import Candidate, ScanBudget, scan_expected_dirs, scan_tree
from clawline.xworkmate.scope import (
    TaskScope,
    extension_of,
    normalize_extension_counts,
    normalize_extensions,
)
from clawline.xworkmate.workspace_root import open_root

NOT_PREPARED = "artifact scope is not prepared for this task run"


@dataclass(frozen=True, slots=True)
class ExportOptions:
    max_files: int
    max_inline_bytes: int
    since_ms: float = 0
    include_content: bool = True
    required_extensions: list[str] = field(default_factory=list)
    expected_counts: dict[str, int] = field(default_factory=dict)
    expected_dirs: list[str] = field(default_factory=list)
    allow_hardlinks: bool = False

    @classmethod
    def from_params(
        cls,
        params: Mapping[str, Any],
        config: XWorkmateSettings,
        expected_dirs: list[str],
        *,
        include_content: bool = True,
    ) -> ExportOptions:
        return cls(
            max_files=positive_int(params.get("maxFiles"), default=config.max_files),
            max_inline_bytes=non_negative_int(
                params.get("maxInlineBytes"), default=config.max_inline_bytes
            ),
            since_ms=non_negative_number(params.get("sinceUnixMs"), 0),
            include_content=optional_bool(params.get("includeContent"), include_content),
            required_extensions=normalize_extensions(params.get("requiredArtifactExtensions")),
            expected_counts=normalize_extension_counts(params.get("expectedFileCountByExtension")),
            expected_dirs=expected_dirs,
            allow_hardlinks=config.allow_hardlinks,
        )


def expected_dir_status(root: ConfinedDir | None, expected_dirs: list[str]) -> list[JSON]:
    """``[{relativePath, exists}]``: which expected directories exist (as real directories)
    in the workspace ``root`` (``None``: it does not exist)."""
    return [
        {"relativePath": d, "exists": root is not None and dir_status(root, d) == "dir"}
        for d in expected_dirs
    ]


def base_result(
    root: Path,
    top: ConfinedDir | None,
    scope: TaskScope,
    expected_dirs: list[str],
    warnings: list[str],
) -> JSONObject:
    """The fields every artifact result shares (export, list, read); ``top`` is ``root`` held
    open (``None``: it does not exist)."""
    return {
        **scope.result_fields(root),
        "artifacts": [],
        "warnings": warnings,
        "expectedArtifactDirs": list(expected_dirs),
        "expectedArtifactDirStatus": expected_dir_status(top, expected_dirs),
        "constraintSatisfied": True,
        "missingRequiredExtensions": [],
        "missingRequiredFileCounts": {},
    }


def _effective_since(root: ConfinedDir, scope: TaskScope, since_ms: float, prepared: bool) -> float:
    if since_ms <= 0:
        return since_ms
    if not prepared:
        make_directory(root, scope.relative)
        return since_ms
    info = root.lstat(scope.relative)
    born = getattr(info, "st_birthtime", None)
    born_ms = born * 1000 if born else info.st_mtime_ns / 1_000_000
    return min(since_ms, born_ms)


def _find(
    root: ConfinedDir, scope: TaskScope, options: ExportOptions, warnings: list[str]
) -> list[Candidate]:
    status = dir_status(root, scope.relative)
    if status == "symlink":
        warnings.append(f"skipped symlink {scope.relative}")
    prepared = status == "dir"
    since = _effective_since(root, scope, options.since_ms, prepared)
    budget = ScanBudget()
    found: list[Candidate] = []
    if prepared:
        found = scan_tree(
            root, scope.relative, prefix="", since_ms=since, warnings=warnings, budget=budget
        )
    if not found and options.expected_dirs:
        found = scan_expected_dirs(
            root, options.expected_dirs, since_ms=since, warnings=warnings, budget=budget
        )
    if not prepared and not found:
        warnings.append(NOT_PREPARED)
    return order_candidates(found, options.required_extensions)


def order_candidates(found: list[Candidate], required: list[str]) -> list[Candidate]:
    """Without duplicate paths: files with a required extension first, then the newest
    change, then the path."""
    unique: dict[str, Candidate] = {}
    for candidate in found:
        unique.setdefault(candidate.relative_path, candidate)
    return sorted(
        unique.values(),
        key=lambda c: (
            extension_of(c.relative_path, required) is None,
            -c.changed_ms,
            c.relative_path.casefold(),
            c.relative_path,
        ),
    )


def export_artifacts(
    root: Path, scope: TaskScope, options: ExportOptions, secret: bytes
) -> JSONObject:
    """The export result of ``scope`` under the real workspace ``root``."""
    try:
        top = open_root(root, allow_hardlinks=options.allow_hardlinks)
    except FileNotFoundError:
        result = base_result(root, None, scope, options.expected_dirs, [NOT_PREPARED])
        return _with_constraints(result, [], options)
    with top:
        return _export(root, top, scope, options, secret)


def _export(
    root: Path, top: ConfinedDir, scope: TaskScope, options: ExportOptions, secret: bytes
) -> JSONObject:
    warnings: list[str] = []
    candidates = _find(top, scope, options, warnings)
    artifacts: list[JSONObject] = []
    for candidate in candidates:
        if len(artifacts) >= options.max_files:
            warnings.append(
                f"artifact limit reached; skipped remaining files after {options.max_files}"
            )
            break
        shown = candidate.relative_path
        try:
            read = read_file(
                top,
                candidate.location,
                inline_limit=options.max_inline_bytes if options.include_content else None,
            )
        except SymlinkRefused:
            warnings.append(f"skipped path outside workspace {shown}")
            continue
        except HardlinkRefused:
            warnings.append(f"skipped hard-linked file {shown}")
            continue
        except (ConfinedPathError, OSError):
            warnings.append(f"skipped {shown}: no longer a regular file")
            continue
        artifacts.append(
            describe(
                root=root,
                scope=scope,
                relative_path=candidate.relative_path,
                read=read,
                secret=secret,
                include_content=options.include_content,
                warnings=warnings,
            )
        )
    result = base_result(root, top, scope, options.expected_dirs, warnings)
    return _with_constraints(result, artifacts, options)


def _with_constraints(
    result: JSONObject, artifacts: list[JSONObject], options: ExportOptions
) -> JSONObject:
    """``result`` with its artifacts and what they leave of the required constraints."""
    paths = [str(artifact["relativePath"]) for artifact in artifacts]
    missing = [
        ext for ext in options.required_extensions if not any(extension_of(p, [ext]) for p in paths)
    ]
    counts: JSONObject = {}
    for ext, expected in options.expected_counts.items():
        actual = sum(1 for p in paths if extension_of(p, [ext]))
        if actual < expected:
            counts[ext] = {"expected": expected, "actual": actual}
    result["artifacts"] = artifacts
    result["constraintSatisfied"] = not missing and not counts
    result["missingRequiredExtensions"] = missing
    result["missingRequiredFileCounts"] = counts
    return result
