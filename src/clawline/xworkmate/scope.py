"""Task artifact scopes and the normalisation of directory and extension lists.

Every task run gets its own directory under the workspace root::

    tasks/<safeScopeSegment(openclawSessionKey)>/<safeScopeSegment(runId)>

:func:`safe_scope_segment` is one-way (many keys give the same segment), which is why the
session mapping stores the OpenClaw key verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawline.xworkmate.constants import DEFAULT_EXPECTED_ARTIFACT_DIRS, TASK_SCOPE_ROOT
from clawline.xworkmate.open_params import XWorkmateError, optional_string

MAX_SEGMENT_LENGTH = 96
_SEPARATORS = re.compile(r"[/\\]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_UNDERSCORES = re.compile(r"_{2,}")
_DRIVE = re.compile(r"^[A-Za-z]:")

SHAPE_ERROR = "artifactScope must be a task artifact scope"
MISMATCH_ERROR = "artifactScope does not match sessionKey/runId"
EXPECTED_DIR_ERROR = "expectedArtifactDir must stay inside the workspace"


def safe_scope_segment(value: str) -> str:
    """One path segment made from any text: separators and unsafe characters become
    ``_``, repeated ``_`` collapse, ``.``/``_``/``-`` are stripped from both ends, at most 96
    characters, ``scope`` when nothing is left."""
    text = _SEPARATORS.sub("_", value.strip())
    text = _UNSAFE.sub("_", text)
    text = _UNDERSCORES.sub("_", text)
    text = text.strip("._-")[:MAX_SEGMENT_LENGTH]
    return text or "scope"


@dataclass(frozen=True, slots=True)
class TaskScope:
    """The artifact scope of one task run of one session."""

    session_key: str
    run_id: str

    @property
    def session_scope(self) -> str:
        return f"{TASK_SCOPE_ROOT}/{safe_scope_segment(self.session_key)}"

    @property
    def relative(self) -> str:
        """``tasks/<session segment>/<run segment>``."""
        return f"{self.session_scope}/{safe_scope_segment(self.run_id)}"

    def result_fields(self, root: Path) -> dict[str, Any]:
        """The fields that open every artifact result (export, list, read, prepare, snapshot):
        the run, its session, the workspace ``root`` and this scope."""
        return {
            "runId": self.run_id,
            "sessionKey": self.session_key,
            "remoteWorkingDirectory": str(root),
            "remoteWorkspaceRefKind": "remotePath",
            "artifactScope": self.relative,
            "scopeKind": "task",
        }

    def check_supplied(self, supplied: object) -> str:
        """The scope a caller named, which must be this one; an omitted scope means this one.

        Raises ``artifactScope must be a task artifact scope`` for a value not shaped
        ``tasks/<a>/<b>`` and ``artifactScope does not match sessionKey/runId`` for another
        session's or run's scope."""
        text = optional_string(supplied)
        if not text:
            return self.relative
        if "\x00" in text or text.startswith(("/", "\\")) or _DRIVE.match(text):
            raise XWorkmateError(SHAPE_ERROR)
        parts = _SEPARATORS.split(text) if "\\" in text else text.split("/")
        if (
            len(parts) != 3
            or parts[0] != TASK_SCOPE_ROOT
            or any(part in ("", ".", "..") for part in parts)
        ):
            raise XWorkmateError(SHAPE_ERROR)
        if "/".join(parts) != self.relative:
            raise XWorkmateError(MISMATCH_ERROR)
        return self.relative


def normalize_expected_dirs(value: object) -> list[str]:
    """Workspace-relative directories ending in ``/``, first-seen order, no duplicates.
    A non-list is ``[]``; non-strings and blanks are skipped; an absolute path, a NUL, or a
    ``.``/``..`` segment raises ``expectedArtifactDir must stay inside the workspace``."""
    if not isinstance(value, list):
        return []
    seen: dict[str, None] = {}
    for item in value:
        if not isinstance(item, str) or not item.strip():
            continue
        text = item.strip()
        if "\x00" in text or text.startswith("/") or _DRIVE.match(text):
            raise XWorkmateError(EXPECTED_DIR_ERROR)
        parts = [part for part in _SEPARATORS.split(text) if part]
        if any(part in (".", "..") for part in parts):
            raise XWorkmateError(EXPECTED_DIR_ERROR)
        if parts:
            seen.setdefault("/".join(parts) + "/", None)
    return list(seen)


def expected_dirs_or_default(value: object) -> list[str]:
    """:func:`normalize_expected_dirs`, or clawline's default list when ``value`` is missing
    (``None``). An explicit empty list stays empty: no expected-directory fallback."""
    if value is None:
        return list(DEFAULT_EXPECTED_ARTIFACT_DIRS)
    return normalize_expected_dirs(value)


def _extension(item: object) -> str:
    if not isinstance(item, str):
        return ""
    text = item.strip().lower().lstrip(".")
    if any(char in text for char in ("/", "\\", "\x00")):
        return ""
    return text


def normalize_extensions(value: object) -> list[str]:
    """Lower-cased, leading dots stripped, entries with ``/``, ``\\`` or NUL dropped,
    deduplicated in first-seen order."""
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(ext for ext in map(_extension, value) if ext))


def normalize_extension_counts(value: object) -> dict[str, int]:
    """``{extension: positive count}``; keys normalised like extensions, bad entries dropped."""
    if not isinstance(value, dict):
        return {}
    counts: dict[str, int] = {}
    for key, count in value.items():
        ext = _extension(key)
        if ext and _positive_count(count) and ext not in counts:
            counts[ext] = int(count)
    return counts


def _positive_count(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and value > 0


def extension_of(relative_path: str, extensions: Iterable[str]) -> str | None:
    """The first of ``extensions`` the file name ends with (``.<ext>``, case-insensitive)."""
    name = relative_path.rsplit("/", 1)[-1].lower()
    return next((ext for ext in extensions if name.endswith("." + ext)), None)
